"""IN-CREDIT-SOURCES (issue 31 point 8): check, prove and synth say every edge's credit
and where it came from (graph, flag, file, default), in --json and in text, and the
documents still validate against spec/schemas/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from tests.json_schemas import validate


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "advanced.config"
    path.write_text("[{rabbit, [{credit_flow_default_credit, {3, 1}}]}].\n")
    return path


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        ("check", ["--publishes", "3", "--no-prove"]),
        ("prove", ["--publishes", "3"]),
        ("synth", ["--publishes", "3"]),
    ],
)
def test_json_says_every_edge_credit_and_its_origin(
    tmp_path: Path, command: str, extra: list[str]
) -> None:
    """--config sets the default credit; --role-credit the store's edge; the rest is
    what the file gives; each entry names its origin; the document validates."""
    config = _config(tmp_path)
    args = [command, "rabbitmq-publish", "--config", str(config), "--json", *extra]
    args += ["--trace-out", str(tmp_path / "t.itf.json")]
    result = CliRunner().invoke(main, [*args, "--edge-credit", "reader->channel=5,2"])
    validate(command, result.stdout)
    doc = json.loads(result.stdout)
    assert doc["credits_in_effect"] == [
        {
            "edge": "reader->channel",
            "credit": [5, 2],
            "origin": "flag",
            "detail": "--edge-credit",
        },
        {
            "edge": "channel->queue",
            "credit": [3, 1],
            "origin": "file",
            "detail": f"credit_flow_default_credit in {config}",
        },
        {
            "edge": "queue->msg_store",
            "credit": [4000, 800],
            "origin": "default",
            "detail": "RabbitMQ 3.10.8's msg_store_credit_disc_bound",
        },
    ]


def test_credit_flag_and_graph_origins(tmp_path: Path) -> None:
    """--credit sets every edge (origin flag); without flags every credit is the graph's."""
    runner = CliRunner()
    base = ["check", "stalled-queue", "--publishes", "2", "--no-prove", "--json"]
    base += ["--trace-out", str(tmp_path / "t.itf.json")]
    flagged = json.loads(runner.invoke(main, [*base, "--credit", "4,2"]).stdout)
    assert {(e["origin"], tuple(e["credit"])) for e in flagged["credits_in_effect"]} == {
        ("flag", (4, 2))
    }
    own = json.loads(runner.invoke(main, base).stdout)
    assert {e["origin"] for e in own["credits_in_effect"]} == {"graph"}


def test_text_names_the_credits_in_effect(tmp_path: Path) -> None:
    """The text output adds the credits block when a credit came from a file or flag."""
    config = _config(tmp_path)
    result = CliRunner().invoke(
        main,
        ["check", "rabbitmq-publish", "--config", str(config), "--publishes", "3"]
        + ["--no-prove", "--trace-out", str(tmp_path / "t.itf.json")],
    )
    lines = result.stdout.splitlines()
    start = lines.index("credits in effect:")
    assert lines[start + 1 : start + 3] == [
        "  {3,1} on 2 edges (reader->channel, channel->queue) from file: "
        f"credit_flow_default_credit in {config}",
        "  {4000,800} on 1 edge (queue->msg_store) from default: RabbitMQ 3.10.8's "
        "msg_store_credit_disc_bound",
    ]
