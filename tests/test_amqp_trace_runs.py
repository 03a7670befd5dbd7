"""TRACE-RUNS: a long AMQP witness is gathered into runs (a block of actions repeated)
in the typed steps, the text, ``--json`` and a compressed ITF trace that ``show``
replays through the model (TRACE-REPLAY), refusing a run that does not lead where the
trace says."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.explore.runs import MIN_GATHERED, StepRun, expand, step_runs
from creditflow.conformance.families.amqp.codec import COMPRESS_ABOVE, replay_amqp_document
from creditflow.conformance.inputs.itf import TraceFormatError
from creditflow.conformance.traces.network import TraceReplayError
from tests.json_schemas import validate

ROOT = Path(__file__).resolve().parents[1]
BLOCK = ["send", "take_fwd", "settle", "send", "take_fwd", "take_back", "settle"]


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_runs_expand_to_the_steps():
    """TRACE-RUNS: expanding the runs gives the steps back, for random step lists."""
    rng = random.Random(28)
    for _ in range(300):
        alphabet = ["a", "b", "c"][: rng.randint(1, 3)]
        steps = [rng.choice(alphabet) for _ in range(rng.randint(0, 60))]
        if rng.random() < 0.5:
            steps += rng.choice([["a"], ["a", "b"], BLOCK]) * rng.randint(1, 20)
        runs = step_runs(steps)
        assert expand(runs) == tuple(steps)
        assert all(r.count == 1 or len(r.block) * r.count >= MIN_GATHERED for r in runs)
        assert [r.first for r in runs] == [1, *[r.last + 1 for r in runs]][: len(runs)]


def test_periodic_steps_are_one_run_and_short_repeats_stay():
    """TRACE-RUNS: a period-7 witness is one run; a repeat covering fewer than
    MIN_GATHERED steps stays step by step; on a tie the shortest block wins."""
    assert step_runs(["take_back", *BLOCK * 4096]) == (
        StepRun(1, ("take_back",), 1),
        StepRun(2, tuple(BLOCK), 4096),
    )
    assert all(r.count == 1 for r in step_runs(["send", "send", "take_fwd", "take_fwd"]))
    assert step_runs(["a"] * 12) == (StepRun(1, ("a",), 12),)


def _never_renewed(tmp_path: Path, window: int) -> Path:
    doc = json.loads((ROOT / "spec/graphs/amqp/session-window-never-renewed.json").read_text())
    nodes = {n["id"]: n for n in doc["nodes"]}
    nodes["receiver-session"]["window"]["window"] = window
    nodes["sender"]["publishes"] = window + 1
    path = tmp_path / f"never{window}.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def long_witness(tmp_path_factory):
    """``check`` on a session window of 512 never renewed: a witness of 1,793 steps."""
    tmp = tmp_path_factory.mktemp("runs")
    topo = _never_renewed(tmp, 512)
    trace = tmp / "never.itf.json"
    text = cli("check", str(topo), "--publishes", "513", "--trace-out", str(trace))
    as_json = cli("check", str(topo), "--publishes", "513", "--trace-out", str(trace), "--json")
    return text, as_json, trace


def test_long_witness_is_gathered_in_text_and_json(long_witness):
    """TRACE-RUNS in the text (one line for the run, its state after) and in
    ``--json`` (``runs``, valid against check.json, expanding to ``steps``)."""
    text, as_json, _ = long_witness
    assert text.exit_code == 10 and as_json.exit_code == 10
    assert "   2–1,793. (send, take_fwd, settle, send, take_fwd, take_back, settle) ×256" in (
        text.output
    )
    assert len(text.output.splitlines()) < 20
    validate("check", as_json.stdout)
    v = json.loads(as_json.stdout)["violation"]
    assert v["length"] == 1793 > COMPRESS_ABOVE
    runs = [StepRun(r["first"], tuple(r["steps"]), r["count"]) for r in v["runs"]]
    assert expand(runs) == tuple(v["steps"])
    assert len(runs) == 2


def test_long_witness_trace_is_compressed_and_replays(long_witness):
    """TRACE-RUNS: the trace keeps 3 states of 1,794, says ``compressed``, and replays
    through the model to the same steps; ``show`` prints the run and ``--json`` is valid."""
    _, as_json, trace = long_witness
    doc = json.loads(trace.read_text())
    assert doc["#meta"]["creditflow"]["compressed"] == "runs"
    assert [s["#meta"]["index"] for s in doc["states"]] == [0, 1, 1793]
    assert doc["states"][2]["#meta"]["run"] == {"steps": BLOCK, "count": 256}
    replayed = replay_amqp_document(doc)
    assert replayed.steps == tuple(json.loads(as_json.stdout)["violation"]["steps"])
    assert len(replayed.states) == 1794
    shown = cli("show", str(trace))
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines()[0].endswith("1793 steps, PROP-AMQ-NO-STALL at the end")
    assert "2–1,793. (send, take_fwd" in shown.output
    shown_json = cli("show", str(trace), "--json")
    validate("show", shown_json.stdout)
    assert len(json.loads(shown_json.stdout)["runs"]) == 2


@pytest.mark.parametrize(
    ("tamper", "error", "message"),
    [
        (lambda run: run.update(count=255), TraceReplayError, "is not where its run"),
        (lambda run: run.update(count=257), TraceReplayError, "is not a step of the model"),
        (lambda run: run.update(count="many"), TraceFormatError, "#meta.run must be"),
        (lambda run: run.update(count=10**9), TraceFormatError, "#meta.run must be"),
        (lambda run: run.update(steps=[]), TraceFormatError, "#meta.run must be"),
        (lambda run: run.update(steps=["fly"]), TraceReplayError, "'fly' is not a step"),
    ],
)
def test_a_tampered_run_is_refused(long_witness, tamper, error, message):
    """TRACE-RUNS, TRACE-REPLAY: a run that does not lead to the state written, or that
    is no list of actions with a count, is refused naming the state."""
    _, _, trace = long_witness
    doc = json.loads(trace.read_text())
    tamper(doc["states"][2]["#meta"]["run"])
    with pytest.raises(error, match=message) as exc:
        replay_amqp_document(doc, "t.itf.json")
    assert "t.itf.json: states[2]" in str(exc.value)


def test_a_wrong_index_is_refused(long_witness):
    """TRACE-RUNS: ``#meta.index`` must be the step the state is reached at."""
    _, _, trace = long_witness
    doc = json.loads(trace.read_text())
    doc["states"][2]["#meta"]["index"] = 1792
    with pytest.raises(TraceReplayError, match="#meta.index 1792, but is step 1793"):
        replay_amqp_document(doc)


def test_short_witnesses_keep_every_state(tmp_path, monkeypatch):
    """TRACE-RUNS: a witness of at most COMPRESS_ABOVE steps keeps every state."""
    monkeypatch.chdir(tmp_path)
    assert cli("check", "ring-one-held").exit_code == 10
    doc = json.loads(Path("counterexamples/ring-one-held.itf.json").read_text())
    assert "compressed" not in doc["#meta"]["creditflow"]
    assert [s["#meta"]["index"] for s in doc["states"]] == list(range(8))


def test_the_compressed_trace_is_valid_itf_for_other_readers(long_witness):
    """TRACE-RUNS, TRACE-ITF: the compressed trace is an ITF document itf-py reads, its
    states the kept ones with the same values as ours (a subsequence of the run)."""
    from itf_py import trace_from_json

    from creditflow.conformance.inputs.itf import read_document

    _, _, trace = long_witness
    doc = read_document(trace)
    theirs = trace_from_json(json.loads(trace.read_text()))
    assert len(theirs.states) == len(doc["states"]) == 3
    assert theirs.states[-1].values["receiver"].session.incoming_window == 0
