"""``creditflow conform`` and ``creditflow replay`` end to end: verdicts, exit codes,
the failing trace on disk before the report, the corpus, usage errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.adapters.registry import adapter_factory
from creditflow.conformance.cli import main
from creditflow.conformance.differential.conform import ConformOptions, run_conform
from creditflow.conformance.differential.corpus import corpus_dir
from creditflow.conformance.differential.traces import load_trace
from creditflow.conformance.inputs.itf import read_document

FAULTY = f"{sys.executable} {Path(__file__).parent / 'faulty_adapter.py'}"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_conform_reference_and_template_are_conformant(tmp_path):
    """AD-COMPARE: the model in-process and the documented template agree with the
    model on every machine and every explorer run (no false divergence)."""
    for name in ("reference", "python-template"):
        result = run_conform(
            adapter_factory(name), ConformOptions(max_examples=20, seed=3, out_dir=tmp_path)
        )
        assert result.verdict == "conformant", (name, result.divergence)
        assert [p.name for p in result.phases] == [
            "batched-ops",
            "process-ops",
            "network-runs",
            "explorer-runs",
        ]
        assert all(p.ops > 0 for p in result.phases)
    assert not list(tmp_path.iterdir())


def test_conform_the_real_rabbitmq_module(tmp_path):
    """AD-RABBITMQ: Debian's RabbitMQ 3.10.8 passes a bounded, seeded conform run (CI)."""
    code, out, err = invoke(
        "conform",
        "--adapter",
        "rabbitmq",
        "--seed",
        "7",
        "--max-examples",
        "40",
        "--json",
        "--out",
        str(tmp_path),
    )
    report = json.loads(out)
    assert code == 0, (report, err)
    assert report["verdict"] == "conformant"
    assert report["implementation"].startswith("rabbitmq credit_flow 3.10.8 (beam md5 ")
    assert report["ops"] > 1500
    assert not list(tmp_path.iterdir())


def test_divergence_is_written_before_it_is_reported(tmp_path):
    """AD-DIVERGENCE, TRACE-PROCESS-DOC: exit 1; the minimal trace is on disk, names the
    divergence and replays to the same divergence at its last op."""
    code, out, _ = invoke(
        "conform", "--adapter", "mutant:grants-not-deferred", "--seed", "1", "--out", str(tmp_path)
    )
    assert code == 1
    assert "DIVERGENCE found by batched-ops (example " in out
    assert "model" in out and "implementation" in out
    (path,) = tmp_path.glob("*.itf.json")
    assert f"trace: {path}" in out
    doc = read_document(path)
    meta = doc["#meta"]["creditflow"]
    assert meta["model"] == "credit-flow-process"
    assert meta["divergence"]["state"] == len(doc["states"]) - 1
    assert {"deferred", "emitted"} <= set(meta["divergence"]["fields"])
    loaded = load_trace(path)
    assert len(loaded.trace.steps) <= 3  # e.g. block(A, B), ack(A, B)
    code, out, _ = invoke("replay", str(path), "--adapter", "mutant:grants-not-deferred")
    assert code == 1 and "DIVERGED" in out
    code, out, err = invoke("replay", str(path), "--adapter", "rabbitmq")
    assert code == 0 and "1 traces: 1 pass" in out, (out, err)


def test_conform_json_report(tmp_path):
    """AD-DIVERGENCE: --json carries the op, both answers and the trace path."""
    code, out, _ = invoke(
        "conform",
        "--adapter",
        "mutant:blockers-as-set",
        "--seed",
        "2",
        "--json",
        "--out",
        str(tmp_path),
    )
    report = json.loads(out)
    assert code == 1 == report["exit_code"]
    d = report["divergence"]
    assert d["fields"] == ["blocked"]
    assert sorted(d["model"]["state"]["blocked"]) != sorted(d["implementation"]["state"]["blocked"])
    assert Path(report["trace"]).is_file()


def test_corpus_keeps_every_bug_found(tmp_path):
    """AD-CORPUS: conform --corpus lands the shrunk failure in the corpus, where replay
    and the expectations file pick it up."""
    corpus = tmp_path / "corpus"
    code, _, _ = invoke(
        "conform", "--adapter", "mutant:ack-off-by-one", "--seed", "4", "--corpus", str(corpus)
    )
    assert code == 1
    (trace,) = corpus.glob("*.itf.json")
    code, out, _ = invoke("replay", str(corpus), "--adapter", "mutant:ack-off-by-one")
    assert code == 1
    expectations = tmp_path / "known.json"
    name = trace.name.removesuffix(".itf.json")
    expectations.write_text(json.dumps({"known_divergences": {name: "off by one"}}))
    code, out, _ = invoke(
        "replay",
        str(corpus),
        "--adapter",
        "mutant:ack-off-by-one",
        "--expectations",
        str(expectations),
    )
    assert code == 0 and "XFAIL" in out
    code, out, _ = invoke(
        "replay", str(corpus), "--adapter", "reference", "--expectations", str(expectations)
    )
    assert code == 1 and "XPASS" in out


def test_adapter_failure_exits_3_with_one_line_and_a_trace(tmp_path):
    """AD-FAILURE: a crash mid-run is exit 3, one line on stderr, the run's trace on disk."""
    code, out, err = invoke(
        "conform", "--adapter-cmd", f"{FAULTY} crash 5", "--seed", "1", "--out", str(tmp_path)
    )
    assert code == 3
    (line,) = err.strip().splitlines()
    assert line.startswith("creditflow: error: adapter ") and "crash: exited with code 7" in line
    (path,) = tmp_path.glob("*.itf.json")
    assert read_document(path)["#meta"]["creditflow"]["failure"]["kind"] == "crash"
    code, _, err = invoke(
        "conform", "--adapter-cmd", f"{FAULTY} hang 3", "--timeout", "0.5", "--out", str(tmp_path)
    )
    assert code == 3 and "hang: response not complete within 0.5 s" in err
    code, _, err = invoke("conform", "--adapter-cmd", f"{FAULTY} garbage 2", "--out", str(tmp_path))
    assert code == 3 and "protocol error" in err


def test_missing_module_is_exit_3_with_the_install_hint(tmp_path, monkeypatch):
    """AD-RABBITMQ, AD-FAILURE: CREDITFLOW_RABBITMQ_EBIN without the module (an empty
    --rabbitmq-ebin is a bad input instead: test_conform_usability.py)."""
    monkeypatch.setenv("CREDITFLOW_RABBITMQ_EBIN", str(tmp_path))
    code, _, err = invoke("conform", "--adapter", "rabbitmq", "--out", str(tmp_path))
    assert code == 3
    assert "apt-get install rabbitmq-server" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args",
    [
        ["conform"],
        ["conform", "--adapter", "reference", "--adapter-cmd", "x"],
        ["conform", "--adapter", "no-such-adapter"],
        ["replay", "--adapter", "reference"],
    ],
)
def test_usage_errors_exit_2(args):
    code, _, _ = invoke(*args)
    assert code == 2


def test_replay_rejects_bad_traces_with_exit_2(tmp_path):
    """TRACE-PROCESS-REPLAY: a trace the model does not reproduce is stale (exit 2)."""
    good = corpus_dir() / "cf4-channel-blocked-on-dead-queue.itf.json"
    doc = json.loads(good.read_text())
    doc["states"][5]["state"]["blocked"] = ["queue"]
    stale = tmp_path / "stale.itf.json"
    stale.write_text(json.dumps(doc))
    code, _, err = invoke("replay", str(stale), "--adapter", "reference")
    assert code == 2
    assert "states[5]" in err and "stale or edited" in err
    (tmp_path / "junk.itf.json").write_text("{")
    code, _, err = invoke("replay", str(tmp_path / "junk.itf.json"), "--adapter", "reference")
    assert code == 2 and "not valid JSON" in err


def test_adapters_lists_the_mutants():
    code, out, _ = invoke("adapters")
    assert code == 0
    assert "rabbitmq" in out and "mutant:flush-oldest-first" in out


def test_replay_shrinks_a_long_diverging_trace(tmp_path):
    """AD-DIVERGENCE for saved traces: `replay --shrink` delta-debugs the explorer's
    network trace down to a short per-process trace that still diverges."""
    network = corpus_dir() / "stalled-queue-network-2-1.itf.json"
    code, out, _ = invoke(
        "replay",
        str(network),
        "--adapter",
        "mutant:grants-not-deferred",
        "--shrink",
        "--out",
        str(tmp_path),
    )
    assert code == 1 and "DIVERGED" in out
    (shrunk,) = tmp_path.glob("*.itf.json")
    assert f"shrunk trace: {shrunk}" in out
    original, small = load_trace(network), load_trace(shrunk)
    assert small.kind == "process"
    assert len(small.trace.steps) < len(original.trace.steps)
    code, _, _ = invoke("replay", str(shrunk), "--adapter", "mutant:grants-not-deferred")
    assert code == 1
    code, _, _ = invoke("replay", str(shrunk), "--adapter", "reference")
    assert code == 0


def test_a_replay_that_draws_differently_keeps_the_divergence(tmp_path, monkeypatch):
    """AD-SHRINK-FLAKY: Hypothesis stops with FlakyStrategyDefinition while shrinking
    (seen under load); the divergence already compared with the model is reported with
    the "could not reproduce" note, exit 1, its trace written, not an internal error."""
    from hypothesis.errors import FlakyStrategyDefinition

    from creditflow.conformance.differential import conform as conform_module

    real = conform_module.get_state_machine_test

    def drawing_differently(machine, settings):
        test = real(machine, settings=settings)

        def run() -> None:
            try:
                test()
            except BaseException as exc:
                raise FlakyStrategyDefinition("the replay drew differently") from exc

        return run

    monkeypatch.setattr(conform_module, "get_state_machine_test", drawing_differently)
    code, out, _ = invoke(
        "conform",
        "--adapter",
        "mutant:grants-not-deferred",
        "--phase",
        "process-ops",
        "--seed",
        "1",
        "--out",
        str(tmp_path),
    )
    assert code == 1 and "DIVERGENCE found by process-ops" in out
    assert "Hypothesis could not reproduce" in out
    (path,) = tmp_path.glob("*.itf.json")
    code, out, _ = invoke("replay", str(path), "--adapter", "mutant:grants-not-deferred")
    assert code == 1 and "DIVERGED" in out
