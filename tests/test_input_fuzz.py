"""Issue 37 class 1 and class 7: every number the input layer accepts is one the model
handles (AMQ-TOPOLOGY-LIMITS, AMQ-SERIAL), for every numeric field of the AMQP presets
at the limits, through ``check`` and ``show`` on the command line: exit 2 with one line,
or a verdict — never a traceback. A ``--config`` value out of range is blamed on the
config file (FAM-CONFIG-BLAME)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from creditflow.conformance import exit_codes
from creditflow.conformance.cli import main
from creditflow.conformance.inputs.amqp_topologies import amqp_presets_dir

#: values at and around the limits: 2^31 − 1 (the largest serial addend), 2^31,
#: AMQP's largest uint and one past it
EDGES = (2**31 - 1, 2**31, 2**32 - 1, 2**32)
VERDICTS = {
    exit_codes.OK,
    exit_codes.DEADLOCK,
    exit_codes.VIOLATION,
    exit_codes.INCOMPLETE,
    exit_codes.USAGE,
}


def numeric_fields(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to an integer (not a boolean) in ``doc``."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from numeric_fields(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from numeric_fields(v, (*path, i))
    elif isinstance(doc, int) and not isinstance(doc, bool):
        yield path


def with_value(doc: Any, path: tuple[Any, ...], value: int) -> Any:
    copy = json.loads(json.dumps(doc))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy


PRESET = json.loads((amqp_presets_dir() / "rabbitmq4-consume.json").read_text())
FIELDS = [p for p in numeric_fields(PRESET) if p[0] != "edges"]


def assert_one_line_or_verdict(result: Any) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in VERDICTS, result.output
    if result.exit_code == exit_codes.USAGE:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert "Traceback" not in result.output


@pytest.mark.parametrize("field", FIELDS, ids=lambda p: ".".join(map(str, p)))
def test_every_numeric_field_at_its_limits_gives_one_line_or_a_verdict(tmp_path, field):
    """AMQ-TOPOLOGY-LIMITS: ``check`` of the preset with the field at each limit value;
    a value above 2^31 − 1 (``initial``: above 2^32 − 1) is refused in one line naming
    the file and the maximum."""
    # a count of the receiver's own steps (drains, holds) at 2^31 − 1 is answered too,
    # but slowly (directed runs of 400,000 steps): only the refused values here (CI time)
    values = EDGES[1:] if field[-1] in ("drains", "holds") else EDGES
    for value in values:
        path = tmp_path / f"t{value}.json"
        path.write_text(json.dumps(with_value(PRESET, field, value)))
        result = CliRunner().invoke(
            main, ["check", str(path), "--graph-supply", "--max-states", "50", "--no-progress"]
        )
        assert_one_line_or_verdict(result)
        high = 2**32 - 1 if field == ("graph", "initial") else 2**31 - 1
        if field[-1] in ("publishes", "ready"):
            assert result.exit_code == exit_codes.USAGE
        elif value > high:
            assert result.exit_code == exit_codes.USAGE, result.output
            assert str(path) in result.stderr and f"maximum {high}" in result.stderr


@pytest.mark.parametrize("value", [2**31 - 1, 2**31])
def test_show_of_a_trace_with_a_huge_embedded_number(tmp_path, value):
    """AMQ-TOPOLOGY-LIMITS through a trace's ``#meta`` (``show``): a counterexample trace
    of a stall preset, its embedded window set to ``value``: one line or the trace."""
    trace = tmp_path / "t.itf.json"
    made = CliRunner().invoke(
        main,
        ["check", "ring-one-held", "--graph-supply", "--trace-out", str(trace), "--no-progress"],
    )
    assert made.exit_code in (exit_codes.DEADLOCK, exit_codes.VIOLATION), made.output
    doc = json.loads(trace.read_text())
    meta = doc["#meta"]["creditflow"]
    fields = [p for p in numeric_fields(meta) if "nodes" in p and p[-1] != "ready"]
    assert fields, "the trace embeds no topology number"
    for field in fields:
        tampered = tmp_path / "tampered.itf.json"
        doc["#meta"]["creditflow"] = with_value(meta, field, value)
        tampered.write_text(json.dumps(doc))
        result = CliRunner().invoke(main, ["show", str(tampered)])
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            field,
            result.exception,
        )
        assert result.exit_code in (0, exit_codes.USAGE), (field, result.output)
        if value > 2**31 - 1:
            assert result.exit_code == exit_codes.USAGE, (field, result.output)
            assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize("key", ["max_link_credit", "max_incoming_window", "max_queue_credit"])
def test_config_value_out_of_range_is_blamed_on_the_config_file(tmp_path, key):
    """FAM-CONFIG-BLAME, AMQ-CONFIG: 2^31 in advanced.config is refused naming that file
    and line, never the shipped preset; 2^31 − 1 gives a verdict."""
    config = tmp_path / "advanced.config"
    config.write_text(f"[{{rabbit, [{{{key}, {2**31}}}]}}].\n")
    result = CliRunner().invoke(
        main, ["check", "rabbitmq4-consume", "--config", str(config), "--no-progress"]
    )
    assert result.exit_code == exit_codes.USAGE, result.output
    assert result.stderr.strip().startswith(f"creditflow: error: {config}:1: {key}"), result.stderr
    assert "rabbitmq4-consume.json" not in result.stderr
    config.write_text(f"[{{rabbit, [{{{key}, {2**31 - 1}}}]}}].\n")
    result = CliRunner().invoke(
        main,
        [
            "check",
            "rabbitmq4-consume",
            "--config",
            str(config),
            "--graph-supply",
            "--max-states",
            "50",
            "--no-progress",
        ],
    )
    assert_one_line_or_verdict(result)


@pytest.mark.parametrize(
    ("credit", "window"),
    [
        ({"policy": "window", "window": 2**31, "threshold": 1}, {"policy": "never", "window": 9}),
        ({"policy": "manual"}, {"policy": "fixed", "window": 2**32 - 1, "threshold": 1}),
        ({"policy": "manual"}, {"policy": "ring", "slots": ["1"]}),
    ],
)
def test_an_adapters_declared_policy_out_of_range_is_an_adapter_failure(credit, window):
    """AMQ-TOPOLOGY-LIMITS through an adapter's ``hello`` (AD-AMQ-POLICY): a number the
    model cannot handle is a PolicyError (exit 3), not a traceback; the limit itself is
    taken."""
    from creditflow.conformance.differential.amqp_conform import PolicyError, model_policy

    with pytest.raises(PolicyError, match="AMQ-TOPOLOGY-LIMITS"):
        model_policy({"credit": credit, "window": window}, {})
    ok = model_policy(
        {"credit": {"policy": "manual"}, "window": {"policy": "never", "window": 2**31 - 1}}, {}
    )
    assert ok.window.window == 2**31 - 1
