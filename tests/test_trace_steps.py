"""TRACE-STEPS: the steps of a counterexample as data (conformance/traces/steps.py) and in
words (``check``, ``prove``, ``creditflow show``): one line per step, repeated steps
gathered, the violation and the loop marked, the last state's blocked processes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.traces.network import network_trace
from creditflow.conformance.traces.steps import Effect, Step, compress, network_witness
from creditflow.model.credit.spec import CreditSpec

CORPUS = Path(__file__).resolve().parent.parent / "conformance/corpus/credit_flow"


def stalled_queue_doc() -> dict:
    system, result = check_graph(load_preset("stalled-queue"), CheckOptions(stop_at_deadlock=True))
    finding = result.primary()
    assert finding is not None
    return network_trace(system, finding, "stalled-queue")


def test_stalled_queue_steps_and_effects() -> None:
    """TRACE-STEPS: each step's action and what it caused, read off the states: the
    reader blocks at its 2nd read ({2,1}), the channel grants 1 per take and blocks on
    the stalled queue at step 4 (the violation), then grants it owes are deferred."""
    witness = network_witness(stalled_queue_doc())
    assert witness.length == 4 and witness.blocked_forever == ("channel",)
    steps = [s for run in witness.runs for s in run.steps]
    assert [(s.action, s.node, s.peer) for s in steps[:4]] == [
        ("read", "reader", None),
        ("read", "reader", None),
        ("take", "channel", "reader"),
        ("take", "channel", "reader"),
    ]
    assert [s.publish for s in steps[:2]] == [1, 2]
    assert steps[1].effects == (Effect("blocked", "reader", "channel"),)
    assert steps[2].effects == (Effect("grants", "channel", "reader", 1),)
    assert steps[3].effects == (
        Effect("grants", "channel", "reader", 1),
        Effect("blocked", "channel", "queue"),
    )
    bump = next(s for s in steps if s.action == "bump")
    assert bump.grant == 1 and bump.effects[0] == Effect("unblocked", "reader", "channel")
    assert any(e.kind == "defers" for s in steps for e in s.effects)
    assert all(run.last <= 4 or run.first > 4 for run in witness.runs), "runs cut at the violation"
    assert dict(witness.final_blocked) == {"reader": ("channel",), "channel": ("queue",)}


def test_repeated_steps_are_gathered() -> None:
    """TRACE-STEPS: rabbitmq-publish with {40,0} on every edge: 39 reads then the read
    that blocks the reader; each process's 39 plain takes are one run."""
    graph = load_preset("rabbitmq-publish").with_credit(CreditSpec(40, 0)).with_publishes(45)
    system, result = check_graph(graph, CheckOptions(stop_at_deadlock=True))
    finding = result.primary()
    assert finding is not None
    witness = network_witness(network_trace(system, finding, "rp"))
    first = witness.runs[0]
    assert (first.period, first.repeat, first.publishes(0)) == (1, 39, (1, 39))
    assert witness.runs[1].steps[0].effects == (Effect("blocked", "reader", "channel"),)
    assert witness.length == 40 and witness.runs[1].last == 40
    takes = [r for r in witness.runs if r.block[0].action == "take" and r.repeat == 39]
    assert {r.block[0].node for r in takes} == {"channel", "queue"}


def test_compress_prefers_the_longest_repeat() -> None:
    """TRACE-STEPS: a block of two steps repeated three times is one run of period 2;
    a lone step stays a run of one."""
    a = Step(0, "read", "r")
    b = Step(0, "take", "c", "r")
    steps = [Step(i + 1, s.action, s.node, s.peer) for i, s in enumerate([a, b, a, b, a, b, b])]
    runs = compress(steps)
    assert [(r.first, r.last, r.period, r.repeat) for r in runs] == [(1, 6, 2, 3), (7, 7, 1, 1)]


def test_show_prints_the_steps_and_marks(tmp_path: Path) -> None:
    """TRACE-STEPS through ``creditflow show``: the violation line, a loop mark where
    the document's loop says, the blocked processes at the end; --json gives the data."""
    doc = stalled_queue_doc()
    doc["loop"] = 6
    path = tmp_path / "sq.itf.json"
    path.write_text(json.dumps(doc))
    shown = CliRunner().invoke(main, ["show", str(path)])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert "reader reads publish 2; now blocked on channel" in lines[3]
    violation = next(i for i, line in enumerate(lines) if "after step 4" in line)
    assert "channel blocked forever from here" in lines[violation]
    loop = next(i for i, line in enumerate(lines) if "repeat forever" in line)
    assert loop > violation and lines[loop + 1].split()[0].startswith("7")
    assert lines[-1] == "blocked after the last step (10): reader (on channel), channel (on queue)"
    data = json.loads(CliRunner().invoke(main, ["show", str(path), "--json"]).stdout)
    assert data["length"] == 4 and data["loop_start"] == 6


def test_show_refuses_traces_that_do_not_replay(tmp_path: Path) -> None:
    """TRACE-STEPS, TRACE-REPLAY: a trace whose states the model does not reproduce, or
    a file that is not ITF, is one line, exit 2."""
    doc = stalled_queue_doc()
    doc["states"][2]["publishes_left"] = {"#map": [["reader", {"#bigint": "7"}]]}
    bad = tmp_path / "bad.itf.json"
    bad.write_text(json.dumps(doc))
    junk = tmp_path / "junk.json"
    junk.write_text('{"states": 3}')
    for path in (bad, junk):
        refused = CliRunner().invoke(main, ["show", str(path)])
        assert refused.exit_code == 2
        assert len(refused.stderr.strip().splitlines()) == 1 and str(path) in refused.stderr


def test_show_lists_other_traces() -> None:
    """TRACE-STEPS of a per-process corpus trace: ten sends then ten acks, gathered."""
    shown = CliRunner().invoke(main, ["show", str(CORPUS / "cf13-disabled-0-0.itf.json")])
    assert shown.exit_code == 0, shown.output
    assert "1–10  reader send (peer=channel) (×10)" in shown.stdout
    assert "11–20  channel ack (peer=reader) (×10)" in shown.stdout


def test_show_names_the_actor_of_an_accounts_trace(tmp_path: Path) -> None:
    """TRACE-STEPS of an accounts trace (its picks name the ``actor``): every step line
    starts with the actor, none with a blank name ("  reads publish 0")."""
    trace = tmp_path / "sc.itf.json"
    checked = CliRunner().invoke(
        main, ["accounts", "check", "slow-consumer", "--trace-out", str(trace)]
    )
    assert checked.exit_code == 10, checked.output
    shown = CliRunner().invoke(main, ["show", str(trace)])
    assert shown.exit_code == 0, shown.output
    actions = ("read", "wait", "turn", "repay")
    steps = [re.sub(r"^[0-9–]+\s+", "", line.strip()) for line in shown.stdout.splitlines()[2:]]
    assert steps and not [s for s in steps if s.startswith(actions)], shown.stdout
    assert "reads publish 0" not in shown.stdout
    assert "P1 read (×2)" in shown.stdout and "P1 wait" in shown.stdout


@pytest.mark.parametrize("command", ["check", "prove"])
def test_check_and_prove_print_the_steps(tmp_path: Path, command: str) -> None:
    """TRACE-STEPS: the text report of check and prove ends with the steps of the
    counterexample it wrote, the violation marked at its length."""
    trace = tmp_path / "t.itf.json"
    done = CliRunner().invoke(main, [command, "stalled-queue", "--trace-out", str(trace)])
    assert done.exit_code == 10, done.output
    assert "steps:" in done.stdout
    length = json.loads(trace.read_text())["#meta"]["creditflow"]["length"]
    assert f"== after step {length}: PROP-NO-DEADLOCK" in done.stdout
    assert "reader reads publish 1" in done.stdout


def test_show_reads_the_option_form_of_older_traces(tmp_path: Path) -> None:
    """TRACE-STEPS, TRACE-OPTIONS: a trace whose picks are written as Quint options
    (``{"tag": "Some", ...}``, earlier versions) lists the same steps."""
    doc = stalled_queue_doc()
    plain = tmp_path / "plain.itf.json"
    plain.write_text(json.dumps(doc))
    for state in doc["states"]:
        picks = state["mbt::nondetPicks"]
        state["mbt::nondetPicks"] = {
            name: {"tag": "Some", "value": picks[name]}
            if name in picks
            else {"tag": "None", "value": {}}
            for name in ("node", "peer")
        }
    options = tmp_path / "options.itf.json"
    options.write_text(json.dumps(doc))
    shown = [CliRunner().invoke(main, ["show", str(p)]) for p in (plain, options)]
    assert [r.exit_code for r in shown] == [0, 0], shown[1].output
    assert shown[0].stdout.splitlines()[1:] == shown[1].stdout.splitlines()[1:]
    assert "channel takes from reader; grants 1 to reader" in shown[1].stdout
