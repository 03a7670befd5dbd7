"""Known failures of AMQP implementations, one matcher for ``conform``, ``replay`` and
the pytest plugin (AD-AMQ-EXPECTATIONS-MATCH, AD-AMQ-EXPECTATIONS-MASK): a listed trace
stands for exactly one signature; a known failure is masked and the run goes on, so a
second bug (a reference mutant with two, ``A+B``, AD-AMQ-REFERENCE) still fails; the
shipped expectations of proton 0.40.0 and rhea 3.0.5 keep a CI job green on their known
findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.adapters.registry import UnknownAdapter, amqp_adapter_factory
from creditflow.conformance.cli import main
from creditflow.conformance.families.amqp.conform import REFERENCE_SIZES, AmqpOp, run_ops
from creditflow.conformance.families.amqp.expected import (
    amqp_corpus_dir,
    known_failure,
    resolve_amqp,
    run_signature,
)
from creditflow.conformance.families.amqp.protocol import DEFAULT_DEPTH, AmqpAdapter
from creditflow.conformance.families.amqp.run_traces import (
    LoadedAmqpTrace,
    trace_of_run,
    write_amqp_trace,
)
from creditflow.conformance.inputs.expectations import Expectations, shipped_expectations

pytest_plugins = ["pytester"]

T, F1, F2, D1 = AmqpOp("transfer"), AmqpOp("flow", 1), AmqpOp("flow", 2), AmqpOp("drain", 1)
DONE = AmqpOp("drained")
ECHO = "amqp-reference:mutant:missed-drain-echo"
#: the echo bug and a session window never renewed: the second bug behind the first
TWO = "amqp-reference:mutant:missed-drain-echo+window-never-renewed"
WHY = "the drain is answered without the FLOW echo"


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def write(adapter: str, ops: list[AmqpOp], path: Path) -> Path:
    a = amqp_adapter_factory(adapter)()
    try:
        run = run_ops(a, REFERENCE_SIZES[0], ops)
    finally:
        a.close()
    return write_amqp_trace(trace_of_run(run), path, "test", "tests/test_amqp_expectations.py")


@pytest.fixture
def known(tmp_path: Path) -> Path:
    """An expectations file listing the echo mutant's shortest failure as known."""
    folder = tmp_path / "known"
    write(ECHO, [D1, DONE], folder / "missed-echo.itf.json")
    path = folder / "known.json"
    path.write_text(json.dumps({"adapter": ECHO, "known_divergences": {"missed-echo": WHY}}))
    return path


def test_a_mutant_with_two_bugs_is_an_adapter() -> None:
    """AD-AMQ-REFERENCE: ``A+B`` breaks both rules; an unknown part is refused."""
    a = amqp_adapter_factory(TWO)()
    try:
        assert run_ops(a, REFERENCE_SIZES[0], [D1, DONE]).verdict == "diverged"
        assert run_ops(a, REFERENCE_SIZES[0], [T, T, F2]).verdict == "diverged"
    finally:
        a.close()
    with pytest.raises(UnknownAdapter):
        amqp_adapter_factory("amqp-reference:mutant:missed-drain-echo+nope")


def test_the_signature_is_the_op_the_verdict_and_how_each_field_differs() -> None:
    """AD-AMQ-EXPECTATIONS-MATCH: exactly one signature per failure; the same op
    failing in a larger state is the same known failure (its minimal context)."""
    a = amqp_adapter_factory(ECHO)()
    try:
        run = run_ops(a, REFERENCE_SIZES[0], [D1, DONE])
        sig = run_signature(run)
        assert sig.op == "drained"
        assert sig.differences == {
            "verdict: diverged",
            "sender.delivery_count: lower",
            "sender.credit: higher",
            "receiver.delivery_count: lower",
            "receiver.credit: higher",
            "property: drain-unanswered",
        }
        resolved = resolve_amqp(
            a, Expectations(ECHO, {"missed-echo": WHY}), [], {"missed-echo": _loaded(a, [D1, DONE])}
        )
        longer = [F2, T, T, D1, DONE]
        bigger = run_ops(a, REFERENCE_SIZES[0], longer)
        assert bigger.failed and bigger.ops[bigger.index or 0] == DONE
        assert known_failure(resolved.known, a, REFERENCE_SIZES[0], longer, bigger) == "missed-echo"
    finally:
        a.close()
    b = amqp_adapter_factory("amqp-reference:mutant:window-never-renewed")()
    try:
        other = run_ops(b, REFERENCE_SIZES[0], [T, T, F2])
        assert known_failure(resolved.known, b, REFERENCE_SIZES[0], [T, T, F2], other) is None
    finally:
        b.close()


def _loaded(adapter: AmqpAdapter, ops: list[AmqpOp]) -> LoadedAmqpTrace:
    run = run_ops(adapter, REFERENCE_SIZES[0], ops)
    return LoadedAmqpTrace(Path("missed-echo.itf.json"), trace_of_run(run))


def test_conform_masks_the_known_failure_and_the_second_bug_still_fails(known: Path) -> None:
    """AD-AMQ-EXPECTATIONS-MASK through ``conform``: the echo mutant alone is green with
    its failure expected; with a second bug, that bug fails (exit 1) although the
    known one is met first in every breadth-first order."""
    code, out = cli("conform", "--adapter", TWO, "--seed", "1", "--depth", "3")
    assert code == 1 and "  >  2  drained" in out  # without expectations: the echo
    code, out = cli(
        "conform",
        "--adapter",
        ECHO,
        "--seed",
        "1",
        "--depth",
        "3",
        "--max-examples",
        "5",
        "--expectations",
        str(known),
    )
    assert code == 0, out
    assert "EXPECTED  missed-echo (drained: " in out and "met in " in out
    assert "CONFORMANT: no divergence and no property violated but the expected ones" in out
    code, out = cli(
        "conform", "--adapter", TWO, "--seed", "1", "--depth", "3", "--expectations", str(known)
    )
    assert code == 1, out
    assert "DIVERGENCE found by explorer-runs" in out
    assert "client.remote_incoming_window" in out and "server.incoming_window" in out
    assert "drain-unanswered (L)" not in out


def test_replay_masks_the_known_failure_and_the_second_bug_still_fails(
    known: Path, tmp_path: Path
) -> None:
    """AD-AMQ-EXPECTATIONS-MASK through ``replay``: a trace meeting the echo bug first
    and the window bug later is xfail on the echo mutant, diverged on the two-bug one."""
    both = write("amqp-reference", [D1, DONE, F2, T, T, F1], tmp_path / "both.itf.json")
    code, out = cli("replay", str(both), "--adapter", ECHO, "--expectations", str(known))
    assert code == 0, out
    assert "XFAIL" in out and f"{WHY} (as missed-echo)" in out
    code, out = cli("replay", str(both), "--adapter", TWO, "--expectations", str(known))
    assert code == 1, out
    assert "DIVERGED" in out and "server.incoming_window" in out
    code, out = cli("replay", str(both), "--adapter", TWO, "--expectations", str(known), "--json")
    doc = json.loads(out)
    assert doc["traces"][0]["status"] == "diverged"
    assert doc["expected_divergences"][0]["trace"] == "missed-echo"


def test_a_listed_trace_that_passes_is_an_unexpected_pass(known: Path) -> None:
    """AD-AMQ-EXPECTATIONS-MATCH: the reference has no echo bug: exit 1 in replay and
    conform."""
    witness = known.parent / "missed-echo.itf.json"
    code, out = cli(
        "replay", str(witness), "--adapter", "amqp-reference", "--expectations", str(known)
    )
    assert code == 1 and "XPASS" in out, out
    code, out = cli(
        "conform",
        "--adapter",
        "amqp-reference",
        "--seed",
        "1",
        "--depth",
        "1",
        "--phase",
        "explorer-runs",
        "--expectations",
        str(known),
    )
    assert code == 1 and "UNEXPECTED PASS" in out, out


def test_a_listed_trace_that_cannot_be_found_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "known.json"
    path.write_text(json.dumps({"known_divergences": {"nowhere": "?"}}))
    code, out = cli("conform", "--adapter", ECHO, "--seed", "1", "--expectations", str(path))
    assert code == 2 and "no trace nowhere.itf.json" in out and out.count("\n") <= 2


def test_the_pytest_plugin_collects_amqp_traces_with_the_same_matcher(
    pytester: pytest.Pytester, known: Path, tmp_path: Path
) -> None:
    """AD-AMQ-REPLAY, AD-AMQ-EXPECTATIONS-MATCH: an AMQP corpus as test items."""
    corpus = pytester.path / "corpus"
    write("amqp-reference", [D1, DONE, F2, T, T, F1], corpus / "both.itf.json")
    write("amqp-reference", [F1, T], corpus / "fine.itf.json")
    result = pytester.runpytest(
        str(corpus), f"--creditflow-adapter={ECHO}", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*the implementation diverges from the model*", "*>  2  drained*"])
    result = pytester.runpytest(
        str(corpus),
        f"--creditflow-adapter={ECHO}",
        f"--creditflow-expectations={known}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1, xfailed=1)
    result = pytester.runpytest(
        str(corpus),
        f"--creditflow-adapter={TWO}",
        f"--creditflow-expectations={known}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1, failed=1)
    result = pytester.runpytest(
        str(corpus), "--creditflow-adapter=rhea", "-p", "no:cacheprovider", "-rs"
    )
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*needs the sizes*"])


@pytest.mark.slow
@pytest.mark.parametrize(("adapter", "release", "depth"), [("rhea", "rhea-3.0.5", DEFAULT_DEPTH)])
def test_the_shipped_expectations_keep_the_known_findings_green(
    adapter: str, release: str, depth: int
) -> None:
    """The version matrix's findings as expectations: conform is green on them at the
    default depth (issue 36: a second drain at depth 4 was not listed), and each witness
    fails without the expectations and is xfail with them."""
    expectations = shipped_expectations(release)
    witnesses = sorted(amqp_corpus_dir().glob(f"{release}-*.itf.json"))
    assert witnesses
    code, out = cli("replay", *map(str, witnesses), "--adapter", adapter)
    assert code in (1, 12), out
    code, out = cli(
        "replay", *map(str, witnesses), "--adapter", adapter, "--expectations", str(expectations)
    )
    assert code == 0, out
    assert out.count("XFAIL") == len(witnesses)
    code, out = cli(
        "conform",
        "--adapter",
        adapter,
        "--seed",
        "1",
        "--depth",
        str(depth),
        "--max-examples",
        "5",
        "--expectations",
        str(expectations),
    )
    assert code == 0, out
    assert "but the expected ones" in out


def test_proton_drain_on_grant_is_a_declared_choice() -> None:
    """FIND-POLICY-DECLARED, AMQ-POL-GRANT-DRAIN: proton's flow(n) during a drain sends
    drain=false, declared as ``grant_drain: clear``: its old witness now passes, and the
    shipped expectations (no known finding) gate conform green."""
    witness = amqp_corpus_dir() / "proton-0.40.0-flow-cancels-drain.itf.json"
    code, out = cli("replay", str(witness), "--adapter", "proton")
    assert code == 0, out
    code, out = cli(
        "conform",
        "--adapter",
        "proton",
        "--seed",
        "1",
        "--depth",
        "3",
        "--max-examples",
        "5",
        "--expectations",
        str(shipped_expectations("proton-0.40.0")),
    )
    assert code == 0, out
