"""``conform``/``replay --adapter rabbit-fifo`` with findings, traces and expectations
(AD-AMQ-FIFO-FINDINGS, AD-AMQ-FIFO-TRACE, AD-AMQ-FIFO-EXPECTATIONS, AD-AMQ-FIFO-REPLAY,
REPLAY-NOTHING-RAN). Needs Erlang and the installed beams."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.inputs.expectations import shipped_expectations


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_findings_traces_and_the_shipped_expectations(tmp_path: Path) -> None:
    # AD-AMQ-FIFO-FINDINGS, AD-AMQ-FIFO-TRACE: without expectations exit 1, each finding
    # with its rule and class and a trace written
    code, out = cli(
        "conform",
        "--adapter",
        "rabbit-fifo",
        "--seed",
        "1",
        "--out",
        str(tmp_path),
        "--phase",
        "explorer-runs",
    )
    assert code == 1, out
    assert "FINDING" in out and "[contract] AMQ-QQ-PREFETCH" in out, out
    # the typed result (its --json document is not yet in the conform.json schema)
    from creditflow.adapters.registry import amqp_adapter_factory
    from creditflow.conformance.families.amqp.queue_conform import run_queue_conform

    result = run_queue_conform(amqp_adapter_factory("rabbit-fifo"), 1, 4, 10, 5, ("explorer-runs",))
    doc = result.to_json()
    assert result.exit_code == 1 and doc["findings"], doc
    traces = sorted(tmp_path.glob("*.itf.json"))
    assert len(traces) == len(doc["findings"])
    for f in doc["findings"]:
        assert f["rule"] == "AMQ-QQ-PREFETCH" and f["class"] == "contract"
    metas = [json.loads(t.read_text())["#meta"]["creditflow"] for t in traces]
    assert {m["signature"] for m in metas} == {f["signature"] for f in doc["findings"]}
    assert doc["findings"][0]["witness"] == ["enqueue", "return"]
    first = next(str(t) for t, m in zip(traces, metas, strict=True) if m["length"] == 2)
    # AD-AMQ-FIFO-REPLAY: the trace re-runs and diverges again
    code, out = cli("replay", first, "--adapter", "rabbit-fifo")
    assert code == 1 and "DIVERGED" in out, out
    # AD-AMQ-FIFO-EXPECTATIONS: the shipped file gates 3.10.8 green
    known = str(shipped_expectations("rabbit-fifo-3.10.8"))
    code, out = cli(
        "conform",
        "--adapter",
        "rabbit-fifo",
        "--seed",
        "1",
        "--out",
        str(tmp_path / "x"),
        "--expectations",
        known,
    )
    assert code == 0, out
    assert "EXPECTED" in out and "CONFORMANT" in out
    code, out = cli("replay", first, "--adapter", "rabbit-fifo", "--expectations", known)
    assert code == 0 and "XFAIL" in out, out
