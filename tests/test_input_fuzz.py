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


def with_value(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
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
    from creditflow.conformance.families.amqp.conform import PolicyError, model_policy

    with pytest.raises(PolicyError, match="AMQ-TOPOLOGY-LIMITS"):
        model_policy({"credit": credit, "window": window}, {})
    ok = model_policy(
        {"credit": {"policy": "manual"}, "window": {"policy": "never", "window": 2**31 - 1}}, {}
    )
    assert ok.window.window == 2**31 - 1


def leaves(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value that is not an object or a list in ``doc``."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from leaves(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from leaves(v, (*path, i))
    else:
        yield path


@pytest.mark.parametrize("preset", ["rabbitmq4-consume", "rabbitmq4-publish", "ring-one-held"])
def test_a_wrong_type_anywhere_in_a_topology_is_one_line_with_its_path(preset):
    """IN-SCHEMA, AMQ-TOPOLOGY: every value of a preset replaced by a list, an object,
    null, a boolean and a string in turn: the reader takes it or refuses it in one
    AmqpTopologyError line, never another exception (``TypeError: unhashable type``)."""
    from creditflow.conformance.inputs.amqp_topologies import (
        AmqpTopologyError,
        topology_from_document,
    )

    doc = json.loads((amqp_presets_dir() / f"{preset}.json").read_text())
    refused = 0
    for path in leaves(doc):
        for bad in (["x"], {"x": 1}, None, True, "x"):
            try:
                topology_from_document(with_value(doc, path, bad), "t.json")
            except AmqpTopologyError as exc:
                assert "\n" not in str(exc) and str(exc).startswith("t.json: "), exc
                refused += 1
    assert refused > 0


NET_GRAPH = {
    "directed": True,
    "multigraph": False,
    "graph": {"name": "relay", "credit": [2, 1]},
    "nodes": [{"id": "a", "source": True, "publishes": 3}, {"id": "b"}, {"id": "c"}],
    "edges": [
        {"source": "a", "target": "b", "credit": [2, 1], "sends_per_message": 1},
        {"source": "b", "target": "c", "credit": [2, 3]},
    ],
}
NET_FIELDS = [p for p in numeric_fields(NET_GRAPH)]
#: IN-LIMITS' maxima (model/network/graph.py): credit, supply, sends per message
NET_MAXIMA = {"credit": 1_000_000, "publishes": 1_000_000, "sends_per_message": 64}


@pytest.mark.parametrize("field", NET_FIELDS, ids=lambda p: ".".join(map(str, p)))
def test_every_net_graph_number_at_its_limits_gives_one_line_or_a_verdict(tmp_path, field):
    """IN-LIMITS on a NET graph: each number at its maximum gives a verdict (within 50
    states, no proof: the reader is under test), one past it and 2^31 are refused in one
    line naming the file."""
    key = next(k for k in reversed(field) if isinstance(k, str))
    most = NET_MAXIMA[key]
    for value in (most, most + 1, 2**31):
        path = tmp_path / f"g{value}.json"
        path.write_text(json.dumps(with_value(NET_GRAPH, field, value)))
        result = CliRunner().invoke(
            main,
            ["check", str(path), "--graph-supply", "--max-states", "50", "--no-prove"]
            + ["--no-progress"],
        )
        assert_one_line_or_verdict(result)
        if value > most:
            assert result.exit_code == exit_codes.USAGE, result.output
            assert str(path) in result.stderr


@pytest.mark.parametrize("key", ["max_link_credit", "rabbit.max_incoming_window"])
def test_an_amqp_key_in_rabbitmq_conf_is_refused_not_ignored(tmp_path, key):
    """IN-RABBITMQ-CONF, AMQ-CONFIG: an AMQP key in ``rabbitmq.conf`` is refused in one
    line naming the file and line (it was ignored and the defaults checked, exit 0)."""
    config = tmp_path / "rabbitmq.conf"
    config.write_text(f"# AMQP\n{key} = 64\n")
    result = CliRunner().invoke(
        main, ["check", "rabbitmq4-consume", "--config", str(config), "--no-progress"]
    )
    assert result.exit_code == exit_codes.USAGE, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{config}:2: {key}" in lines[0], result.stderr
    assert "advanced.config" in lines[0]
