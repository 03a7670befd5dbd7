"""REPLAY-NOTHING-RAN: a ``replay`` in which every trace is NOT RUN exits 4 (not
established), never 0 — in every family, through the one place replay decides its exit
code (``exit_codes.replay_exit_code``): the credit_flow family (a trace needing an op the
port does not offer), the AMQP link end (sizes the adapter does not offer) and HTTP/2
(ops the model does not allow against that adapter). rabbit-fifo's queue end:
tests/test_rabbit_fifo_findings.py."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance import exit_codes
from creditflow.conformance.cli import main
from tests.test_conform_gate import PORT_WITHOUT_PEER_DOWN

ROOT = Path(__file__).resolve().parents[1]


def credit_flow(tmp_path: Path) -> tuple[list[str], str]:
    port = tmp_path / "port.py"
    port.write_text(PORT_WITHOUT_PEER_DOWN)
    trace = ROOT / "conformance/corpus/credit_flow/cf4-channel-blocked-on-dead-queue.itf.json"
    return [str(trace), "--adapter-cmd", shlex.join([sys.executable, str(port)])], "NOT RUN"


def amqp(tmp_path: Path) -> tuple[list[str], str]:
    trace = ROOT / "conformance/corpus/amqp/rhea-3.0.5-ring-stall.itf.json"
    return [str(trace), "--adapter", "amqp-reference"], "needs the sizes"


def http2(tmp_path: Path) -> tuple[list[str], str]:
    from creditflow.conformance.families.http2.alphabet import OPS_BY_NAME, RUNS
    from creditflow.conformance.families.http2.traces import write_run_trace

    # a second cancel of a stream already reset: the model does not allow it
    cancel = OPS_BY_NAME["cancel(1)"]
    trace = write_run_trace(tmp_path, "other", RUNS[0], [cancel, cancel], [], "")
    return [str(trace), "--adapter", "h2"], "not run as recorded"


@pytest.mark.parametrize("family", [credit_flow, amqp, http2], ids=lambda f: f.__name__)
def test_a_replay_where_every_trace_is_not_run_exits_4(family, tmp_path: Path) -> None:
    args, why = family(tmp_path)
    result = CliRunner().invoke(main, ["replay", *args])
    assert result.exit_code == exit_codes.INCOMPLETE, result.output
    assert "NOT RUN" in result.output and why in result.output
    if family is not http2:  # HTTP/2's replay --json has no schema in spec/schemas/ yet
        result = CliRunner().invoke(main, ["replay", *args, "--json"])
        assert result.exit_code == exit_codes.INCOMPLETE, result.output


def test_the_one_rule() -> None:
    """Failures outrank nothing-ran; one trace run is enough to pass."""
    rule = exit_codes.replay_exit_code
    assert rule(ran=0) == exit_codes.INCOMPLETE
    assert rule(ran=1) == exit_codes.OK
    assert rule(diverged=True, ran=0) == exit_codes.DIVERGENCE
    assert rule(bad_input=True, adapter_failed=True, ran=0) == exit_codes.USAGE
    assert rule(adapter_failed=True, diverged=True, ran=3) == exit_codes.ADAPTER_FAILURE
    assert rule(violated=True, ran=1) == exit_codes.VIOLATION
