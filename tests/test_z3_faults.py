"""Fault graphs in Z3 (Z3-FAULTS): the encoding runs the flat encoding's fault slots
(Z3-FAULT-SLOTS), BMC finds the explorer's fault counterexamples (Z3-FAULT-DEAD-SET,
Z3-FAULT-RECOVERY), the ranking function covers crashes and DOWNs (Z3-FAULT-RANK), and
what still does not take fault graphs refuses them in one line (Z3-FAULTS-REFUSED)."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
import z3
from click.testing import CliRunner
from hypothesis import assume, given, settings

from creditflow.conformance.cli import main
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.explore.explorer import NO_DEADLOCK, RECOVERY
from creditflow.conformance.inputs.graphs import load_graph_file
from creditflow.conformance.symbolic.bmc import BmcOptions, bounded_check
from creditflow.conformance.symbolic.encoding import NetworkEncoding
from creditflow.conformance.symbolic.invariants import (
    PROVED,
    houdini,
    prove_dead_set_sound,
    prove_termination,
)
from creditflow.conformance.symbolic.prove import ProveOptions, prove_graph
from creditflow.conformance.symbolic.witness import finding_from_witness
from creditflow.model.network.graph import flow_graph_from_networkx
from tests.strategies import fault_graphs

BUGS = Path(__file__).resolve().parent.parent / "spec" / "graphs" / "bugs"
#: The deepest explorer state the random agreement unrolls BMC to (keeps it short).
MAX_AGREEMENT_DEPTH = 10
FAULT_SCENARIOS = (
    "dead-mirror-3.8.10-bug",
    "dead-mirror-3.8.10-fixed",
    "msg-store-dead-client-3.3.0-bug",
    "msg-store-dead-client-3.3.0-fixed",
    "mirror-sender-death-3.1.0-bug",
    "mirror-sender-death-3.1.0-fixed",
)


def explorer_lengths(graph) -> dict[str, tuple[int, str]]:
    """What ``check --graph-supply --full-search`` finds: per property its shortest
    counterexample's length and kind (EXP-FAULTS: the interpreted engine)."""
    _, result = check_graph(graph, CheckOptions(stop_at_deadlock=False))
    assert result.complete
    return {pid: (f.length, f.kind) for pid, f in result.findings.items()}


def test_fault_slots_are_named_variables():
    """Z3-FAULT-SLOTS: every fault slot of the flat encoding is a distinct, named Z3
    variable (alive, handled, crashes, lost)."""
    enc = NetworkEncoding(load_graph_file(BUGS / "dead-mirror-3.8.10-bug.json"))
    names = enc.slot_names
    assert len(set(names)) == len(names) == enc.net.size
    assert {"alive[mirror]", "handled[channel<-mirror]", "crashes", "lost[mirror]"} <= set(names)


@pytest.mark.parametrize("scenario", FAULT_SCENARIOS)
def test_prove_finds_the_explorers_counterexamples_for_the_graph_supply(scenario):
    """Z3-FAULTS, Z3-FAULT-DEAD-SET, Z3-FAULT-RECOVERY, Z3-FAULT-RANK: ``prove
    --graph-supply`` on each corpus scenario violates exactly what the explorer
    violates, with the same shortest lengths, and proves the fixed variants (the runs of
    these acyclic graphs end, so BMC is complete). Supplies capped at 2 to keep it short."""
    graph = load_graph_file(BUGS / f"{scenario}.json")
    graph = graph.with_supplies({n.name: min(n.publishes, 2) for n in graph.sources})
    expected = explorer_lengths(graph)
    report = prove_graph(graph, ProveOptions(timeout_s=120))
    found = {pid: c.finding.length for pid, c in report.counterexamples.items()}
    assert found == {pid: length for pid, (length, _) in expected.items()}
    assert report.termination is not None and report.termination.proved
    assert report.result == ("counterexample" if expected else "proved")
    assert set(report.verdicts) >= {NO_DEADLOCK, RECOVERY, "PROP-FAULT-FORGET"}


@pytest.mark.parametrize(
    "scenario",
    ["dead-mirror-3.8.10-bug", "msg-store-dead-client-3.3.0-bug", "mirror-sender-death-3.1.0-bug"],
)
def test_prove_for_every_supply_finds_the_bugs(scenario, tmp_path):
    """Z3-FAULTS with SCOPE-SUPPLY: ``prove`` (every supply, the CLI default) finds the
    explorer's shortest counterexample of every violated property, with a symbolic
    supply that Z3 chooses; the primary one decides the exit code (10 deadlock, 12
    another violation) and its trace is written (JSON validated by the schema fixture)."""
    graph = load_graph_file(BUGS / f"{scenario}.json")
    expected = explorer_lengths(graph)
    result = CliRunner().invoke(
        main,
        [
            "prove",
            str(BUGS / f"{scenario}.json"),
            "--json",
            "--trace-out",
            str(tmp_path / "t.itf.json"),
        ],
    )
    report = json.loads(result.output)
    assert report["scope"]["supply"] == "every"
    violated = {pid for pid, v in report["properties"].items() if v["status"] == "violated"}
    assert violated == set(expected)
    for pid in violated:
        assert report["properties"][pid]["detail"].endswith(f"after {expected[pid][0]} steps")
    assert result.exit_code == (10 if NO_DEADLOCK in expected else 12)


@pytest.mark.parametrize("scenario", FAULT_SCENARIOS)
def test_fault_dead_set_is_sound_on_the_corpus(scenario):
    """Z3-FAULT-DEAD-SET, Z3-DEAD-SET: for every set of processes at once, every action
    (crashes and DOWNs included) keeps a dead set a dead set, and its members are
    blocked: a dead set is blocked forever under PROP-FAULT-BLOCKED's reading."""
    enc = NetworkEncoding(load_graph_file(BUGS / f"{scenario}.json"), symbolic_supply=True)
    inv = houdini(enc, enc.lemmas())
    obligations = prove_dead_set_sound(enc, inv)
    assert any("crash" in o.name for o in obligations)
    assert all(o.status == PROVED for o in obligations), [
        o.name for o in obligations if o.status != PROVED
    ]


class CrashBlindEncoding(NetworkEncoding):
    """The encoding with Z3-FAULT-DEAD-SET's crash clauses removed: no process is ever
    taken to be able to crash."""

    def may_crash_now(self, node: int) -> z3.BoolRef:
        return z3.BoolVal(False)


def hung_queue_that_may_be_killed():
    """reader -> channel -> a hung (stalled) queue that may crash, ``{1,1}``: the
    channel blocks on the queue, and only the queue's crash and DOWN release it."""
    g = nx.DiGraph(credit=[1, 1], name="hung-queue-killed")
    g.add_node("reader", source=True, publishes=2)
    g.add_node("channel")
    g.add_node("queue", stalled=True, may_crash=True)
    g.add_edges_from([("reader", "channel"), ("channel", "queue")])
    return flow_graph_from_networkx(g)


def test_a_dead_set_without_the_crash_clauses_is_not_sound():
    """Z3-FAULT-DEAD-SET, PROP-FAULT-BLOCKED: a channel blocked on a hung queue that may
    still be killed is not blocked forever. Without the clauses for crashes still
    possible the dead set is not kept by the crash (so the soundness test above asserts
    something); with them it is, and BMC agrees with the explorer that nothing
    deadlocks."""
    graph = hung_queue_that_may_be_killed()
    blind = CrashBlindEncoding(graph, symbolic_supply=True)
    failed = [
        o.name
        for o in prove_dead_set_sound(blind, houdini(blind, blind.lemmas()))
        if o.status != PROVED
    ]
    assert failed == ["crash(queue) keeps the dead set"]
    enc = NetworkEncoding(graph, symbolic_supply=True)
    assert all(o.status == PROVED for o in prove_dead_set_sound(enc, houdini(enc, enc.lemmas())))
    assert NO_DEADLOCK not in explorer_lengths(graph)
    bmc = bounded_check(NetworkEncoding(graph), BmcOptions(depth=12))
    assert bmc.complete and not bmc.witnesses
    blind_bmc = bounded_check(CrashBlindEncoding(graph), BmcOptions(depth=12))
    assert NO_DEADLOCK in blind_bmc.witnesses  # the wrong verdict the clauses prevent


def test_fault_rank_proves_termination_and_counts_crashes_and_downs():
    """Z3-FAULT-RANK: every step of an acyclic fault graph, crashes and DOWNs included,
    lowers the rank; the initial rank exceeds the fault-free one by the number of
    may_crash nodes and DOWN pairs."""
    graph = load_graph_file(BUGS / "dead-mirror-3.8.10-fixed.json")
    enc = NetworkEncoding(graph)
    inv = houdini(enc, enc.lemmas())
    proof = prove_termination(enc, inv)
    assert proof.proved
    assert any("crash" in o.name for o in proof.obligations)
    assert any("down" in o.name for o in proof.obligations)
    quiet = NetworkEncoding(graph.with_max_crashes(0))
    extra = len(enc.net.alive_slot) + len(enc.net.handled_slot)
    without = z3.simplify(quiet.at(quiet.rank(), quiet.initial())).as_long()
    assert z3.simplify(enc.at(enc.rank(), enc.initial())).as_long() == without + extra


def test_max_crashes_zero_proves_the_fault_free_graph():
    """NET-FAULT-BOUND on ``prove``: ``--max-crashes 0`` is the fault-free graph, which
    the deadlock rules prove for every supply (exit 0); with the crash the buggy DOWN
    handler deadlocks (exit 10)."""
    path = str(BUGS / "dead-mirror-3.8.10-bug.json")
    result = CliRunner().invoke(main, ["prove", path, "--max-crashes", "0", "--json"])
    assert result.exit_code == 0, result.output
    assert "PROP-RECOVERY" not in json.loads(result.output)["properties"]


@settings(max_examples=10, deadline=None, derandomize=True)
@given(
    graph=fault_graphs(
        max_nodes=3, max_publishes=2, acyclic=True, handler_odds=1, min_max_crashes=1
    )
)
def test_bmc_agrees_with_the_explorer_on_random_fault_graphs(graph):
    """Z3-FAULTS, Z3-FAULT-DEAD-SET, Z3-FAULT-RECOVERY, Z3-BMC: on random small fault
    graphs (those whose deepest state is at most 10 steps away) BMC, unrolled as deep as
    the explorer's deepest state (so it covers every reachable state), violates exactly
    the properties the explorer violates; a state property's and a terminal deadlock's
    shortest lengths and kinds are equal, a blocked-forever one is never shorter than
    the explorer's (Z3-BMC: a dead set may be certified a few steps later); every
    witness replays through the model (Z3-WITNESS)."""
    _, result = check_graph(graph, CheckOptions(stop_at_deadlock=False))
    assert result.complete
    deepest = max(result.graph.depth)
    assume(deepest <= MAX_AGREEMENT_DEPTH)  # bounded: BMC's cost grows with the depth
    enc = NetworkEncoding(graph)
    bmc = bounded_check(enc, BmcOptions(depth=deepest, timeout_ms=30_000))
    assert not bmc.unknown
    assert set(bmc.witnesses) == set(result.findings)
    for pid, witness in bmc.witnesses.items():
        _, replayed = finding_from_witness(witness)
        explorer = result.findings[pid]
        if pid in (NO_DEADLOCK, RECOVERY) and explorer.kind == "blocked-forever":
            assert replayed.length >= explorer.length
        else:
            assert (replayed.length, replayed.kind) == (explorer.length, explorer.kind)


@pytest.mark.parametrize("scenario", [s for s in FAULT_SCENARIOS if s.endswith("-fixed")])
def test_fixed_scenarios_are_proved_for_every_supply(scenario):
    """Z3-FAULT-SLOTS, Z3-FAULTS, SCOPE-ORDER: every fault lemma of a fixed scenario is
    inductive, and with it the invariant proves the state properties and k-induction
    deadlock freedom and recovery for every supply, without any search."""
    graph = load_graph_file(BUGS / f"{scenario}.json")
    report = prove_graph(graph, ProveOptions(every_supply=True, search=False, timeout_s=60))
    kept = set(report.invariant.lemmas)
    enc = NetworkEncoding(graph)
    fault_lemmas = {n for n in enc.lemmas() if n.split("[")[0] in ("faults", "dead", "down")}
    assert fault_lemmas and fault_lemmas <= kept
    assert report.result == "proved", {p: v.status for p, v in report.verdicts.items()}
    assert report.verdicts[NO_DEADLOCK].method.endswith("-induction")
    assert report.verdicts[RECOVERY].method.endswith("-induction")


def test_synth_on_fault_graphs(tmp_path):
    """Z3-FAULTS-SYNTH: on the fixed dead-mirror scenario the loop finds the smallest I
    (1) and proves it with the faults; on a buggy DOWN handler it stops at once with
    PROP-FAULT-FORGET (no credit helps), exit 10, the counterexample written."""
    fixed = str(BUGS / "dead-mirror-3.8.10-fixed.json")
    result = CliRunner().invoke(
        main, ["synth", fixed, "--json", "--trace-out", str(tmp_path / "f.itf.json")]
    )
    report = json.loads(result.output)
    assert result.exit_code == 0, result.output
    assert report["status"] == "found" and report["method"] == "cegis"
    assert set(map(tuple, report["credits"].values())) == {(1, 1)}
    bug = str(BUGS / "msg-store-dead-client-3.3.0-bug.json")
    trace = tmp_path / "b.itf.json"
    result = CliRunner().invoke(main, ["synth", bug, "--json", "--trace-out", str(trace)])
    report = json.loads(result.output)
    assert result.exit_code == 10, result.output
    assert report["status"] == "none" and "PROP-FAULT-FORGET" in report["explanation"]
    assert report["rounds"] == 1 and trace.exists()
