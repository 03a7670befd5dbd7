"""AD-EXPECTATIONS-MATCH, AD-EXPECTATIONS-MASK (issue 31, point 1): an expectation
stands for one divergence, precisely — a second, different bug at the same op and field
is not hidden by it — and ``conform``, ``replay`` and the pytest plugin give one
verdict for one expectations file. Ports: tests/expectation_ports.py. Cost: ~20 s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.adapters.registry import command_factory
from creditflow.conformance.cli import main
from creditflow.conformance.differential.expected import divergence_signature, judge, resolve
from creditflow.conformance.differential.protocol import Op
from creditflow.conformance.differential.session import check_trace
from creditflow.conformance.inputs.expectations import (
    Signature,
    load_expectations,
    match,
    signature,
)
from tests.expectation_ports import BUGS, KEEPS_AGAIN, SPEC, port_command, write_trace

pytest_plugins = ["pytester"]


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def expectations(folder: Path, **listed: str) -> Path:
    path = folder / "known.json"
    path.write_text(json.dumps({"adapter": "port", "known_divergences": listed}))
    return path


def test_a_signature_says_how_a_field_differs_not_only_which() -> None:
    """AD-EXPECTATIONS-MATCH: same op, same field, another difference: another bug."""
    kept = signature("peer_down", "B", [("credit_to", {}, {"B": 2})])
    others = signature("peer_down", "B", [("credit_to", {"C": 3}, {})])
    assert kept == Signature("peer_down", frozenset({"credit_to: peer entry kept"}))
    assert others == Signature("peer_down", frozenset({"credit_to: other entry missing"}))
    assert match(others, {"keeps": kept}) is None
    assert match(kept, {"keeps": kept}) == "keeps"
    # one difference more is another divergence too (never a subset match)
    both = signature("peer_down", "B", [("credit_to", {"C": 3}, {"B": 2})])
    assert match(both, {"keeps": kept}) is None
    # the process names do not matter, the peer's role does
    assert signature("peer_down", "Q", [("credit_to", {}, {"Q": 7})]) == kept


def test_conform_finds_the_second_bug_of_the_same_op_and_field(tmp_path: Path) -> None:
    """Issue 31.1: with the first bug listed, ``conform`` still finds the second one
    (it printed CONFORMANT, exit 0, when an expectation matched by op and fields)."""
    write_trace(tmp_path, "keeps", BUGS["keeps"])
    known = expectations(tmp_path, keeps="peer_down keeps the dead peer's credit_to")
    port = port_command(tmp_path, "keeps", "forgets-others")
    code, out = cli(
        "conform", "--adapter-cmd", port, "--seed", "1", "--max-examples", "50",
        "--expectations", str(known), "--out", str(tmp_path / "found"), "--json",
    )  # fmt: skip
    report = json.loads(out)
    assert code == 1, report
    assert report["divergence"]["op"]["op"] == "peer_down"
    assert report["divergence"]["fields"] == ["credit_to"]
    (met,) = report["expected_divergences"]
    assert met["signature"] == ["credit_to: peer entry kept"]
    # the trace written shows the second bug, not the listed one
    with command_factory(port)() as adapter:
        resolved = resolve(adapter, load_expectations(known))
        written = report["trace"]
        code, out = cli("replay", written, "--adapter-cmd", port, "--expectations", str(known))
        assert code == 1, out
        assert resolved.known[0].signature == Signature(
            "peer_down", frozenset({"credit_to: peer entry kept"})
        )


def _verdicts(pytester: pytest.Pytester, folder: Path, port: str, known: Path) -> list[int]:
    conform_code, out = cli(
        "conform", "--adapter-cmd", port, "--seed", "3", "--max-examples", "20",
        "--phase", "batched-ops", "--phase", "process-ops",
        "--expectations", str(known), "--out", str(folder / "found"),
    )  # fmt: skip
    replay_code, out = cli(
        "replay", str(folder / "corpus"), "--adapter-cmd", port, "--expectations", str(known)
    )
    plugin = pytester.runpytest(
        str(folder / "corpus"),
        f"--creditflow-adapter-cmd={port}",
        f"--creditflow-expectations={known}",
        "-p",
        "no:cacheprovider",
    )
    return [conform_code, replay_code, int(plugin.ret)]


def test_one_expectations_file_one_verdict(pytester: pytest.Pytester) -> None:
    """Issue 31.1: ``conform``, ``replay`` and the pytest plugin agree on one file: a
    port with only the listed bug passes all three, though its corpus holds another
    trace of that bug (``replay`` and the plugin matched by name and failed it); the
    port with a second bug fails all three."""
    folder = pytester.path
    corpus = folder / "corpus"
    write_trace(corpus, "keeps", BUGS["keeps"])
    write_trace(corpus, "keeps-again", KEEPS_AGAIN)
    known = expectations(corpus, keeps="peer_down keeps the dead peer's credit_to")
    assert _verdicts(pytester, folder, port_command(folder, "keeps"), known) == [0, 0, 0]
    write_trace(corpus, "forgets-others", BUGS["forgets-others"])
    two_bugs = port_command(folder, "keeps", "forgets-others")
    assert _verdicts(pytester, folder, two_bugs, known) == [1, 1, 1]


def test_a_known_divergence_is_masked_and_the_trace_runs_on(pytester: pytest.Pytester) -> None:
    """AD-EXPECTATIONS-MASK: a listed trace whose known divergence comes first and a
    second bug later fails in ``replay`` and the plugin (it was an xfail by name)."""
    folder = pytester.path
    ops = [*BUGS["keeps"], Op("ack", "A", "C"), Op("peer_down", "A", "D")]
    write_trace(folder / "corpus", "keeps-then-more", ops)
    known = expectations(folder / "corpus", **{"keeps-then-more": "keeps credit_to"})
    port = port_command(folder, "keeps", "forgets-others")
    with command_factory(port)() as adapter:
        first, _ = check_trace(adapter, SPEC, ops)
        assert first is not None and first.index == 1
        resolved = resolve(adapter, load_expectations(known))
        judged = judge(adapter, SPEC, ops, resolved.known)
        assert judged.met == ("keeps-then-more",)
        assert judged.divergence is not None
        assert divergence_signature(judged.divergence) == Signature(
            "peer_down", frozenset({"credit_to: other entry missing"})
        )
    code, out = cli(
        "replay", str(folder / "corpus"), "--adapter-cmd", port, "--expectations", str(known)
    )
    assert code == 1 and "DIVERGED" in out, out
    plugin = pytester.runpytest(
        str(folder / "corpus"),
        f"--creditflow-adapter-cmd={port}",
        f"--creditflow-expectations={known}",
        "-p",
        "no:cacheprovider",
    )
    plugin.assert_outcomes(failed=1)


def test_a_listed_trace_not_replayed_that_passes_fails_every_command(
    pytester: pytest.Pytester,
) -> None:
    """AD-EXPECTATIONS: the listed trace lives next to the file, not in the corpus
    replayed; the correct port passes it: an unexpected pass, exit 1, in all three."""
    folder = pytester.path
    write_trace(folder / "corpus", "keeps-again", KEEPS_AGAIN)
    write_trace(folder / "known", "keeps", BUGS["keeps"])
    known = expectations(folder / "known", keeps="peer_down keeps credit_to")
    assert _verdicts(pytester, folder, port_command(folder), known) == [1, 1, 1]
