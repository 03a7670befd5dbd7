"""AMQP run traces through the CI-gate path: ``conform`` writes the failing run
(AD-AMQ-CONFORM-TRACE, TRACE-AMQP-RUN), ``replay`` runs AMQP traces against any AMQP
adapter with the NET family's exit codes (AD-AMQ-REPLAY), and a trace the model does not
reproduce is bad input. Runs are short (the reference and its mutants, depth 2)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from creditflow.adapters.registry import amqp_adapter_factory
from creditflow.conformance.cli import main
from creditflow.conformance.families.amqp.conform import REFERENCE_SIZES, AmqpOp, run_ops
from creditflow.conformance.families.amqp.run_traces import (
    load_amqp_trace,
    trace_of_run,
    write_amqp_trace,
)
from tests.cli_runs import seeded_amqp_conform
from tests.json_schemas import validate

T, F1, F2, D1 = AmqpOp("transfer"), AmqpOp("flow", 1), AmqpOp("flow", 2), AmqpOp("drain", 1)
DONE = AmqpOp("drained")
ECHO = "amqp-reference:mutant:missed-drain-echo"
NET_TRACE = (
    Path(__file__).resolve().parents[1]
    / "conformance"
    / "corpus"
    / "credit_flow"
    / "bump-from-unknown-peer.itf.json"
)


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def written(adapter: str, settings: dict[str, int], ops: list[AmqpOp], path: Path) -> Path:
    """A trace of ``ops`` run on ``adapter`` (TRACE-AMQP-RUN), as ``conform`` writes one."""
    a = amqp_adapter_factory(adapter)()
    try:
        run = run_ops(a, settings, ops)
    finally:
        a.close()
    return write_amqp_trace(trace_of_run(run), path, "test", "tests/test_amqp_replay.py")


def test_conform_writes_the_failing_run_and_replay_runs_it_again(tmp_path: Path) -> None:
    """AD-AMQ-CONFORM-TRACE: the failing run is written and its replay command printed;
    AD-AMQ-REPLAY: the same trace diverges on the mutant (exit 1, the first diverging
    op) and passes on the reference (exit 0)."""
    code, out = cli(
        "conform", "--adapter", ECHO, "--seed", "1", "--depth", "2", "--out", str(tmp_path)
    )
    assert code == 1, out
    traces = list(tmp_path.glob("*.itf.json"))
    assert len(traces) == 1
    assert f"trace: {traces[0]}" in out
    assert f"replay: creditflow replay {traces[0]} --adapter {ECHO}" in out
    loaded = load_amqp_trace(traces[0])  # TRACE-AMQP-RUN: the model reproduces it
    assert [str(o) for o in loaded.trace.ops] == ["drain 1", "drained"]
    assert loaded.trace.settings == REFERENCE_SIZES[0]

    code, out = cli("replay", str(traces[0]), "--adapter", ECHO)
    assert code == 1, out
    assert "DIVERGED" in out and "  >  2  drained" in out
    assert "property drain-unanswered" in out and "1 traces: 1 diverged" in out
    code, out = cli("replay", str(tmp_path), "--adapter", "amqp-reference")
    assert code == 0, out
    assert "PASS" in out and "1 traces: 1 pass" in out


def test_json_of_conform_and_replay(tmp_path: Path) -> None:
    """AD-AMQ-CONFORM-TRACE, AD-AMQ-REPLAY: ``--json`` documents, by their schemas."""
    code, out = cli(
        "conform",
        *seeded_amqp_conform(ECHO, depth=2),
        "--out",
        str(tmp_path),
        "--json",
    )
    doc = json.loads(out.splitlines()[-1])
    validate("conform", out.splitlines()[-1])
    assert (
        code == 1
        and doc["trace"].endswith(".itf.json")
        and doc["replay"].startswith("creditflow replay ")
    )
    code, out = cli("replay", doc["trace"], "--adapter", ECHO, "--json")
    validate("replay", out)
    rep = json.loads(out)
    assert (code, rep["family"], rep["exit_code"]) == (1, "amqp", 1)
    (entry,) = rep["traces"]
    assert entry["status"] == "diverged" and entry["run"]["op_index"] == 1
    assert entry["run"]["ops"] == ["drain 1", "drained"]


def test_a_property_violated_by_the_implementation_is_exit_12(tmp_path: Path) -> None:
    """AD-AMQ-REPLAY, AD-AMQ-CONFORM-VERDICT: a window of 3 renewed at 0 with 2-frame
    messages stalls the reference, and the model with the same policy: exit 12."""
    stalling = {"window": 3, "threshold": 0, "message_frames": 2, "initial_delivery_count": 0}
    path = written("amqp-reference", stalling, [T, T, F1, F2], tmp_path / "stall.itf.json")
    code, out = cli("replay", str(path), "--adapter", "amqp-reference")
    assert code == 12, out
    assert "PROPERTY" in out and "property stall (L)" in out
    assert "1 traces: 1 property-violated" in out


def test_an_edited_trace_and_another_familys_trace_are_bad_input(tmp_path: Path) -> None:
    """TRACE-AMQP-RUN: a recorded view the model does not give, or a trace of the
    credit_flow family, is one line naming the file, exit 2."""
    path = written("amqp-reference", REFERENCE_SIZES[0], [F1, T], tmp_path / "t.itf.json")
    doc = json.loads(path.read_text())
    doc["states"][2]["model"]["sender.credit"] = {"#bigint": "5"}
    path.write_text(json.dumps(doc))
    code, out = cli("replay", str(path), "--adapter", "amqp-reference")
    assert code == 2, out
    assert out.count("\n") == 1 and str(path) in out and "stale or edited" in out
    code, out = cli("replay", str(NET_TRACE), "--adapter", "amqp-reference")
    assert code == 2 and "not an AMQP run trace" in out and out.count("\n") == 1


def test_sizes_an_adapter_does_not_offer_are_not_run_and_say_why(tmp_path: Path) -> None:
    """AD-AMQ-REPLAY: a trace with the reference's sizes against rhea (which offers
    rings, not fixed windows) is not run, never passed."""
    path = written("amqp-reference", REFERENCE_SIZES[0], [F1, T], tmp_path / "t.itf.json")
    code, out = cli("replay", str(path), "--adapter", "rhea")
    assert code == 4, out  # REPLAY-NOTHING-RAN: NOT RUN is never a pass
    assert "NOT RUN" in out and "needs the sizes" in out and "1 traces: 1 not-run" in out


def test_an_adapter_that_cannot_start_is_exit_3(tmp_path: Path) -> None:
    """AD-AMQ-REPLAY, AD-AMQ-VERSION: one line, exit 3."""
    path = written("amqp-reference", REFERENCE_SIZES[0], [F1], tmp_path / "t.itf.json")
    code, out = cli("replay", str(path), "--adapter", "rhea@0.0.0-no-such-release")
    assert code == 3, out
    assert out.count("\n") <= 2 and "rhea@0.0.0-no-such-release" in out


def test_shrink_is_refused_for_amqp(tmp_path: Path) -> None:
    path = written("amqp-reference", REFERENCE_SIZES[0], [F1], tmp_path / "t.itf.json")
    code, out = cli("replay", str(path), "--adapter", "amqp-reference", "--shrink")
    assert code == 2 and "--shrink" in out
