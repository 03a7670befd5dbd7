"""The documented CI gate for a port with a known deviation (docs/conformance.md,
AD-EXPECTATIONS-CONFORM) on its own example: a port that grants one ack late
(``adapters/mutants/ack_off_by_one.py``, run as an ``--adapter-cmd``); ``conform`` finds
and writes its divergence; listed in an expectations file, the next run with the same
seed passes. Also: listed traces needing ops the port does not offer are not sent
(AD-CAPABILITIES), the adapter is named by its hello (AD-HELLO), the pytest plugin
hints at a missing adapter (AD-CORPUS). Cost: ~60 s."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.adapters.registry import adapter_factory
from creditflow.conformance.cli import main
from creditflow.conformance.differential.conform import (
    KnownDivergence,
    known_divergence,
    minimal_context,
)
from creditflow.conformance.differential.protocol import Op
from creditflow.conformance.differential.session import check_trace
from creditflow.conformance.inputs.expectations import shipped_expectations
from creditflow.model.credit.spec import CreditSpec

REPO = Path(__file__).resolve().parent.parent
#: the spec of the written traces: a grant after every ack
ONE_ONE = CreditSpec(1, 1)
LATE_ACK = shlex.join([sys.executable, str(REPO / "adapters" / "mutants" / "ack_off_by_one.py")])


def conform(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["conform", *args], catch_exceptions=False)
    return result.exit_code, result.stdout


@pytest.mark.parametrize("seed", ["1", "2", "3", "7"])
def test_the_ci_gate_passes_on_its_own_example(tmp_path: Path, seed: str) -> None:
    """AD-EXPECTATIONS-CONFORM, AD-HELLO: the divergence ``conform`` writes for the late
    ack, once listed, is met and expected in the next run with the same seed — never
    reported again as new (it was, shrunk from a blocked ack, for these seeds)."""
    corpus = tmp_path / "found"
    run = ("--adapter-cmd", LATE_ACK, "--seed", seed, "--phase", "process-ops")
    code, out = conform(*run, "--corpus", str(corpus))
    assert code == 1, out
    assert f"creditflow conform: mutant ack-off-by-one, seed {seed}" in out.splitlines()
    (trace,) = corpus.iterdir()
    assert trace.name.startswith("mutant-ack-off-by-one-divergence-")
    known = tmp_path / "known.json"
    name = trace.name.removesuffix(".itf.json")
    known.write_text(json.dumps({"known_divergences": {name: "grants one ack late"}}))
    code, out = conform(*run, "--corpus", str(corpus), "--expectations", str(known), "--json")
    report = json.loads(out)
    assert code == 0, report
    assert report["verdict"] == "conformant"
    (met,) = report["expected_divergences"]
    assert met["trace"] == name and met["op"] == "ack" and met["runs"] > 0
    assert [p.name for p in corpus.iterdir()] == [trace.name]  # nothing new written


def test_the_whole_documented_gate_passes(tmp_path: Path) -> None:
    """AD-EXPECTATIONS-CONFORM: every phase (as docs/conformance.md runs it), seed 7."""
    known = tmp_path / "known.json"
    code, _ = conform("--adapter-cmd", LATE_ACK, "--seed", "7", "--corpus", str(tmp_path / "f"))
    (trace,) = (tmp_path / "f").iterdir()
    known.write_text(
        json.dumps({"known_divergences": {trace.name.removesuffix(".itf.json"): "late"}})
    )
    code, out = conform(
        "--adapter-cmd", LATE_ACK, "--seed", "7", "--corpus", str(tmp_path / "f"),
        "--expectations", str(known), "--max-examples", "100",
    )  # fmt: skip
    assert code == 0, out
    assert "CONFORMANT: no divergence but the expected ones" in out


def test_a_known_divergence_is_judged_in_its_minimal_context() -> None:
    """AD-EXPECTATIONS-CONFORM: blocked, the late ack differs in ``deferred`` rather than
    ``emitted``; the same ack alone differs as listed, so it is the known divergence. A
    divergence at another op kind is not, whatever its context."""
    with adapter_factory("mutant:ack-off-by-one")() as adapter:
        listed, _ = check_trace(adapter, ONE_ONE, [Op("ack", "A", "B")])
        assert listed is not None
        late = KnownDivergence(
            "late", "late ack", listed.op.kind, frozenset(d.field for d in listed.diffs)
        )
        blocked = [Op("block", "A", "B"), Op("ack", "A", "B")]
        found, _ = check_trace(adapter, ONE_ONE, blocked)
        assert found is not None and not late.covers(found)
        assert {d.field for d in found.diffs} == {"credit_to", "deferred"}
        minimal = minimal_context(adapter, ONE_ONE, blocked)
        assert minimal is not None and late.covers(minimal)
        assert known_divergence([late], adapter, ONE_ONE, blocked, found) == "late"
        assert known_divergence([], adapter, ONE_ONE, blocked, found) is None
    with adapter_factory("mutant:peer-down-no-unblock")() as other:
        ops = [Op("send", "A", "B"), Op("block", "A", "B"), Op("peer_down", "A", "B")]
        found, _ = check_trace(other, ONE_ONE, ops)
        assert found is not None and found.op.kind == "peer_down"
        assert known_divergence([late], other, ONE_ONE, ops, found) is None


PORT_WITHOUT_PEER_DOWN = """
from creditflow.adapters.python_template import Adapter, main

class Port(Adapter):
    name = "port without peer_down"
    ops = ("send", "ack", "bump", "block", "unblock", "state")

if __name__ == "__main__":
    main(Port)
"""


def test_listed_traces_needing_an_op_not_offered_are_not_sent(tmp_path: Path) -> None:
    """AD-CAPABILITIES, AD-EXPECTATIONS-CONFORM: the shipped expectations' traces need
    peer_down, which this port's hello does not offer: they are NOT RUN (once they were
    sent and refused: an adapter failure), and the run is judged on the rest."""
    port = tmp_path / "port.py"
    port.write_text(PORT_WITHOUT_PEER_DOWN)
    command = shlex.join([sys.executable, str(port)])
    expectations = str(shipped_expectations("mutant-peer-down-no-unblock"))
    args = ("--adapter-cmd", command, "--seed", "1", "--max-examples", "5")
    args += ("--phase", "process-ops", "--out", str(tmp_path / "o"))
    code, out = conform(*args, "--expectations", expectations, "--json")
    report = json.loads(out)
    assert code == 0, report
    assert report["adapter"] == "port without peer_down"
    assert report["expectations_not_run"] == {
        "cf3-syncer-blocked-on-two-mirrors": ["peer_down"],
        "cf4-channel-blocked-on-dead-queue": ["peer_down"],
    }
    code, out = conform(*args, "--expectations", expectations)
    assert "NOT RUN   cf4-channel-blocked-on-dead-queue: needs peer_down" in out


def test_the_plugin_says_why_a_corpus_without_an_adapter_runs_nothing(tmp_path: Path) -> None:
    """AD-CORPUS: traces but no adapter: pytest's "no tests ran" (exit 5) comes with one
    line naming the traces left out and the options that choose an adapter."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for trace in sorted((REPO / "conformance" / "corpus" / "credit_flow").glob("cf4*.itf.json")):
        (corpus / trace.name).write_bytes(trace.read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", str(corpus)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 5, done.stdout
    count = len(list(corpus.iterdir()))
    assert count >= 1
    assert (
        f"creditflow: {count} .itf.json trace(s) not collected: no adapter chosen "
        "(give --creditflow-adapter NAME or --creditflow-adapter-cmd CMD)"
    ) in done.stdout
