"""The regression corpus (AD-CORPUS): up to date with the model, and passed by the real
RabbitMQ 3.10.8 module in CI; the example expectations file is true."""

from __future__ import annotations

import json

from creditflow.adapters.registry import adapter_factory
from creditflow.conformance.differential.corpus import corpus_dir, corpus_documents, regressions
from creditflow.conformance.differential.replay import DIVERGED, PASS, XFAIL, replay_traces
from creditflow.conformance.differential.traces import load_trace, trace_files
from creditflow.conformance.inputs.expectations import load_expectations, shipped_expectations


def test_shipped_corpus_is_up_to_date():
    """Every shipped file equals its regenerated document (else run
    `python -m creditflow.conformance.differential.corpus`)."""
    shipped = {p.name.removesuffix(".itf.json"): p for p in trace_files([corpus_dir()])}
    generated = dict(corpus_documents())
    assert set(shipped) == set(generated)
    for name, doc in generated.items():
        assert json.loads(shipped[name].read_text()) == json.loads(json.dumps(doc)), name


def test_corpus_covers_the_bugs_table():
    names = {r.name for r in regressions()}
    for bug in ("cf2", "cf3", "cf4", "cf5", "cf7", "cf13"):
        assert any(n.startswith(bug + "-") for n in names), bug
    cf4 = load_trace(corpus_dir() / "cf4-channel-blocked-on-dead-queue.itf.json")
    op, after = cf4.trace.steps[4]
    assert op.kind == "peer_down"
    assert after.state.blocked == () and after.emitted == (("reader", 1), ("reader", 1))


def test_real_module_passes_the_corpus():
    """CI gate: Debian's RabbitMQ 3.10.8 replays every corpus trace without divergence,
    and its shipped expectations file lists none."""
    expectations = load_expectations(shipped_expectations("rabbitmq-3.10.8"))
    assert expectations.known == {}
    traces = [load_trace(p) for p in trace_files([corpus_dir()])]
    report = replay_traces(adapter_factory("rabbitmq"), traces, expectations)
    assert report.failure is None
    assert [o.status for o in report.outcomes] == [PASS] * len(traces)
    assert {t.kind for t in traces} == {"process", "network"}


def test_cf4_mutant_expectations_hold():
    """AD-EXPECTATIONS: the mutant that reintroduces CF4 fails exactly the traces its
    expectations file lists; without the file they are divergences."""
    expectations = load_expectations(shipped_expectations("mutant-peer-down-no-unblock"))
    traces = [load_trace(p) for p in trace_files([corpus_dir()])]
    factory = adapter_factory("mutant:peer-down-no-unblock")
    report = replay_traces(factory, traces, expectations)
    failing = {o.trace.name for o in report.outcomes if o.status == XFAIL}
    assert failing == set(expectations.known)
    assert report.exit_code == 0
    bare = replay_traces(factory, traces)
    assert {o.trace.name for o in bare.outcomes if o.status == DIVERGED} == failing
    assert bare.exit_code == 1
