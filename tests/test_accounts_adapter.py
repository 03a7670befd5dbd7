"""AD-AC-*: the accounts family of the adapter protocol: the reference adapter in-process
and as a subprocess, every mutant found and shrunk, adapter failures reported with exit 3,
and a Hypothesis machine driving the subprocess step by step against the model."""

from __future__ import annotations

import json
import sys

import networkx as nx
import pytest
from click.testing import CliRunner
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from creditflow.adapters.reference.accounts_mutants import MUTANTS
from creditflow.conformance.cli import main
from creditflow.conformance.families.accounts.conform import conform, replay
from creditflow.conformance.families.accounts.protocol import (
    AdapterError,
    ReferenceAccountsAdapter,
    SubprocessAccountsAdapter,
    observations_json,
    request_for,
    state_json,
)
from creditflow.conformance.inputs.itf import read_document
from creditflow.model.accounts.graph import actor_graph_from_networkx
from creditflow.model.accounts.rules import AccountsModel
from tests.stateful_machines import machine_test_case
from tests.strategies import actor_graphs

SERVER = [sys.executable, "-m", "creditflow.adapters.reference.accounts"]


def conform_graph():
    g = nx.DiGraph(name="conform", limit=2)
    g.add_node("A", reads=6)
    g.add_node("B", reads=4, batch=2)
    g.add_node("D", may_crash=True)
    g.add_node("T", timer=2)
    g.add_edges_from([("A", "D"), ("B", "D"), ("D", "O1"), ("D", "O2"), ("D", "T"), ("T", "O1")])
    return actor_graph_from_networkx(g)


def test_reference_in_process_and_as_subprocess_conform():
    """AD-AC-CONFORM, AD-AC-TRANSPORT, AD-AC-OPS: the model's own answers pass."""
    graph = conform_graph()
    assert conform(ReferenceAccountsAdapter(), graph, runs=40).divergence is None
    sub = SubprocessAccountsAdapter(SERVER)
    try:
        assert sub.hello()["families"] == ["accounts"]
        result = conform(sub, graph, runs=40)
    finally:
        sub.close()
    assert result.divergence is None and result.steps > 500


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_mutant_is_found_and_shrunk(name, tmp_path):
    """AD-AC-MUTANTS, AD-AC-TRACE: each faulty server diverges within 3 shrunk steps, and
    the divergence trace is on disk with both answers."""
    sub = SubprocessAccountsAdapter([*SERVER, "--mutant", name])
    try:
        result = conform(sub, conform_graph(), runs=200, trace_out=tmp_path / "d.itf.json")
    finally:
        sub.close()
    d = result.divergence
    assert d is not None, f"{name} not found"
    assert d.index + 1 <= 3 and d.index + 1 <= result.shrunk_from
    doc = read_document(result.trace)
    div = doc["#meta"]["creditflow"]["divergence"]
    assert div["expected"] != div["actual"] and len(doc["states"]) == d.index + 2


def test_observations_of_a_turn_follow_the_protocol():
    """AD-AC-OBSERVATIONS, AD-AC-STATE, AD-AC-STEP: a turn reports the loan it took, then
    its borrows; the state names debts, waiters, mailboxes, held loans."""
    model = AccountsModel(conform_graph())
    s = model.initial()
    read = model.encode("read", "A")
    s = model.apply(s, read).state
    turn = model.encode("turn", "D")
    outcome = model.apply(s, turn)
    assert request_for(model, turn) == {"op": "turn", "actor": "D"}
    assert observations_json(model, s, turn, outcome.observations) == (
        {"event": "turn", "actor": "D", "account": "A", "cost": 1},
        {"event": "borrow", "account": "A", "amount": 1, "debt": 2},
        {"event": "borrow", "account": "A", "amount": 1, "debt": 3},
        {"event": "borrow", "account": "A", "amount": 1, "debt": 4},
    )
    state = state_json(model, outcome.state)
    assert state["debt"] == {"A": 4, "B": 0} and state["held"] == {"D": ["A", 1]}
    assert state["mailbox"]["O1"] == [["A", 1]] and state["waiting"] == {"A": [], "B": []}


@pytest.mark.parametrize(
    "program,message",
    [
        ("import sys; sys.exit(4)", "crash: exited with code 4"),
        (
            "import sys, time; sys.stdin.readline(); time.sleep(30)",
            "hang: response not complete within 2 s",
        ),
        ("import sys; sys.stdin.readline(); print('hello there', flush=True)", "not JSON"),
        (
            'import sys; sys.stdin.readline(); print(\'{"ok": false, "error": "nope"}\', '
            "flush=True)",
            "id",
        ),
    ],
)
def test_broken_adapters_fail_with_exit_3(program, message):
    """AD-AC-TRANSPORT: a crash, a hang, garbage, a wrong answer: exit 3, one line."""
    cmd = f"{sys.executable} -c {json.dumps(program)}"
    result = CliRunner().invoke(
        main, ["accounts", "conform", "--adapter-cmd", cmd, "--timeout", "2"]
    )
    assert result.exit_code == 3, result.output
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_step_errors_are_answers_not_crashes():
    """AD-AC-OPS: a step that is not enabled is refused with an error answer."""
    sub = SubprocessAccountsAdapter(SERVER)
    try:
        sub.reset(conform_graph())
        with pytest.raises(AdapterError, match="turn\\(D\\) is not enabled"):
            sub.step({"op": "turn", "actor": "D"})
        assert replay(sub, conform_graph(), []) is None  # still alive and answering
    finally:
        sub.close()


def test_cli_conform_reports_and_exits_1_on_a_mutant(tmp_path):
    """AD-AC-CONFORM: exit 1, JSON report, trace path."""
    cmd = " ".join([*SERVER, "--mutant", "strict-check"])
    trace = tmp_path / "t.itf.json"
    result = CliRunner().invoke(
        main, ["accounts", "conform", "--adapter-cmd", cmd, "--json", "--trace-out", str(trace)]
    )
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert not report["conformant"] and report["trace"] == str(trace) and trace.exists()


class DriveSubprocess(RuleBasedStateMachine):
    """AD-AC-STEP: Hypothesis picks every step; the subprocess answers as the model does."""

    @initialize(graph=actor_graphs(max_actors=5, max_reads=4, max_limit=3))
    def start(self, graph):
        self.model = AccountsModel(graph)
        self.state = self.model.initial()
        self.sub = SubprocessAccountsAdapter(SERVER)
        self.sub.reset(graph)

    @precondition(lambda self: hasattr(self, "model") and any(self.model.enabled(self.state)))
    @rule(data=st.data())
    def step(self, data):
        action = data.draw(st.sampled_from(list(self.model.enabled(self.state))))
        outcome = self.model.apply(self.state, action)
        reply = self.sub.step(request_for(self.model, action))
        assert list(reply.observations) == list(
            observations_json(self.model, self.state, action, outcome.observations)
        )
        self.state = outcome.state
        assert reply.state == state_json(self.model, self.state)

    @precondition(lambda self: hasattr(self, "model"))
    @rule()
    def idle(self):
        """Nothing (keeps a finished run going)."""

    def teardown(self):
        if hasattr(self, "sub"):
            self.sub.close()


TestDriveSubprocess = machine_test_case(DriveSubprocess, max_examples=8, steps=40)


def test_the_spec_names_every_op_and_event():
    """AD-AC-OPS, AD-AC-OBSERVATIONS, AD-AC-RUST: the protocol document lists exactly the
    ops the driver sends and the events it compares, and the harness sketch covers every
    step op."""
    from pathlib import Path

    from creditflow.conformance.families.accounts.protocol import STEP_OPS

    text = (
        Path(__file__).resolve().parent.parent / "spec" / "adapter-protocol-accounts.md"
    ).read_text()
    for op in ("hello", "reset", *STEP_OPS):
        assert f'{{"op":"{op}"' in text
    for event in ("ensure_clear_funds", "turn", "borrow", "repay", "wake", "notify"):
        assert f'{{"event":"{event}"' in text
    rust = text.split("## AD-AC-RUST", 1)[1]
    for op in ("reset", "turn", "repay", "check"):
        assert f"**{op}**" in rust or f"`{op}`" in rust
