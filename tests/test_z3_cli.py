"""Z3-PROVE, Z3-SYNTH: the `prove` and `synth` commands: exit codes as `check`, JSON, and
traces written (replayable) before they are reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from creditflow.conformance import exit_codes
from creditflow.conformance.traces.network import replay_network_trace
from tests.cli_runs import run


def synth_report(cwd: Path, *options: str) -> dict:
    """The report of ``synth rabbitmq-publish OPTIONS --json`` run in ``cwd``, which
    must succeed."""
    result = run("synth", "rabbitmq-publish", *options, "--json", cwd=cwd)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_prove_rabbitmq_publish_real_defaults_exit_zero():
    """Z3-PROVE: RabbitMQ's real credits are proved conservative and deadlock-free."""
    result = run("prove", "rabbitmq-publish", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["result"] == "proved" and report["exit_code"] == 0
    assert isinstance(report["seconds"], float)
    assert report["properties"]["PROP-NO-DEADLOCK"]["method"] == "edge-lemma"
    assert report["properties"]["PROP-CONSERVATION"]["status"] == "proved"
    assert "conservation[reader->channel]" in report["invariant"]
    assert report["max_steps"] == "7*P[reader]"


def test_prove_deadlock_writes_a_replayable_trace(tmp_path):
    """Z3-WITNESS, TRACE-REPLAY: exit 10; the counterexample is the explorer's ITF format
    and replays through the model."""
    trace = tmp_path / "c.itf.json"
    result = run(
        "prove", "cycle2", "--credit", "1,1", "--depth", "8", "--json", "--trace-out", str(trace)
    )
    assert result.exit_code == 10
    report = json.loads(result.stdout)
    assert report["result"] == "counterexample" and report["trace"] == str(trace)
    assert report["counterexample"]["credits"] == {"A->B": [1, 1], "B->A": [1, 1]}
    replayed = replay_network_trace(trace)
    assert replayed.meta["property"] == "PROP-NO-DEADLOCK"
    assert len(replayed.states) >= report["counterexample"]["length"] + 1
    assert (tmp_path / "c.dot").is_file()


def test_prove_other_violation_exit_12(tmp_path):
    """Z3-PROVE: a violated mailbox bound on a deadlock-free graph is exit 12."""
    result = run(
        "prove",
        "fanout",
        "--credit",
        "3,1",
        "--publishes",
        "3",
        "--mailbox-bound",
        "1",
        "--json",
        cwd=tmp_path,
    )
    assert result.exit_code == 12
    report = json.loads(result.stdout)
    assert report["properties"]["PROP-MAILBOX-BOUND"]["status"] == "violated"
    assert report["properties"]["PROP-NO-DEADLOCK"]["status"] == "proved"
    assert (tmp_path / report["trace"]).is_file()


def test_prove_symbolic_prints_the_condition_and_the_boundary(tmp_path):
    """Z3-CONDITION, Z3-BOUNDARY: the human output states what is proved for which specs
    and writes one counterexample per edge just outside."""
    result = run("prove", "rabbitmq-publish", "--symbolic", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert (
        "PROP-NO-DEADLOCK proved for all credit specs satisfying: every edge: I <= 0 or 1 <= M <= I"
    ) in text
    assert "exact: just outside it" in text
    traces = sorted((tmp_path / "counterexamples").glob("*.boundary-*.itf.json"))
    assert len(traces) == 3
    for trace in traces:
        assert replay_network_trace(trace).meta["property"] == "PROP-NO-DEADLOCK"


def test_prove_bad_input_exit_2(tmp_path):
    """NET-FILE: a bad graph and contradictory options are exit 2 with one line."""
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = run("prove", str(bad))
    assert result.exit_code == 2 and "bad.json" in result.stderr
    result = run("prove", "fanout", "--symbolic", "--credit", "1,1")
    assert result.exit_code == 2 and "exclude" in result.stderr


def test_synth_json(tmp_path):
    """Z3-SYNTH: the smallest I per edge for RabbitMQ's publish path, proved, with the
    deadlock one step below written as a trace."""
    report = synth_report(tmp_path, "--per-edge")
    assert report["credits"] == {
        "reader->channel": [200, 200],
        "channel->queue": [200, 200],
        "queue->msg_store": [800, 800],
    }
    assert report["proof"] == "proved"
    assert report["beyond"]["reader->channel"] == [199, 200]
    assert replay_network_trace(tmp_path / report["beyond_trace"]).meta["kind"] in (
        "blocked-forever",
        "terminal",
    )
    result = run("synth", "fanout", "--goal", "mailbox")
    assert result.exit_code == 2


@pytest.mark.parametrize("name", ["stalled-queue", "cycle2"])
def test_prove_symbolic_decides_the_graphs_own_credits(tmp_path, name):
    """Z3-OWN-CREDITS: `prove --symbolic` on a graph whose own `{2,1}` deadlocks names
    the edges outside the proved condition, decides the graph's own credits and does not
    say "proved" nor exit 0 (was: `own_credits_outside: {}`, proved, exit 0)."""
    result = run("prove", name, "--symbolic", "--json", cwd=tmp_path)
    report = json.loads(result.output)
    assert report["own_credits_outside"], report
    assert report["own_credits"]["status"] == "violated"
    assert report["result"] == "counterexample"
    assert result.exit_code == exit_codes.DEADLOCK == report["exit_code"]
    assert report["counterexample"]["property"] == "PROP-NO-DEADLOCK"
    assert report["counterexample"]["credits"] == {e: [2, 1] for e in report["own_credits_outside"]}
    text = run("prove", name, "--symbolic", cwd=tmp_path).output
    assert "the graph's own credits fall outside it" in text
    assert "result: proved" not in text


def test_synth_follows_the_roles_own_settings(tmp_path):
    """Z3-SYNTH-SETTINGS: by default `synth` minimises credit_flow_default_credit over the
    edges that use it, and the msg_store edge keeps msg_store_credit_disc_bound; the
    output says what was minimised and over which edges (was: one I for every edge,
    `{800,200}`, set by the msg_store edge's M = 800)."""
    report = synth_report(tmp_path)
    assert report["credits"] == {
        "reader->channel": [200, 200],
        "channel->queue": [200, 200],
        "queue->msg_store": [4000, 800],
    }
    assert report["minimised"] == {
        "setting": "credit_flow_default_credit",
        "edges": ["reader->channel", "channel->queue"],
        "kept": {"queue->msg_store": [4000, 800]},
    }
    assert report["beyond"]["reader->channel"] == [199, 200]
    assert report["beyond"]["queue->msg_store"] == [4000, 800]
    text = run("synth", "rabbitmq-publish", cwd=tmp_path).output
    assert "credit_flow_default_credit" in text and "queue->msg_store keeps" in text
    every = json.loads(run("synth", "rabbitmq-publish", "--every-edge", "--json").stdout)
    assert {tuple(v)[0] for v in every["credits"].values()} == {800}
    assert every["minimised"]["edges"] == list(every["credits"])
