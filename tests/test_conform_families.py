"""One conform driver, replay and trace reader for every family with an alphabet
(FAM-ALPHABET, FAM-CODEC): ``--adapter-cmd`` of any family (AD-HELLO, AD-CMD), the AMQP
adapter template, OUT-HYPOTHESIS for every family, ``creditflow adapters`` listing the
AMQP adapters, and TRACE-RUNS-BOUNDED (a compressed run with a wrong end refused before
it is expanded)."""

from __future__ import annotations

import json
import os
import random
import shlex
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.families.amqp.alphabet import ALPHABET as AMQP_ALPHABET
from creditflow.conformance.families.amqp.alphabet import QUEUE_ALPHABET
from creditflow.conformance.families.amqp.codec import (
    COUNTED,
    counted_fields,
    itf_value,
    replay_amqp_document,
)
from creditflow.conformance.families.network.alphabet import ALPHABET as NET_ALPHABET
from creditflow.conformance.inputs.amqp_topologies import read_amqp_preset, topology_from_document
from creditflow.conformance.inputs.itf import encode
from creditflow.conformance.traces.network import ACTION_VAR, TraceReplayError
from creditflow.model.amqp import system

ROOT = Path(__file__).resolve().parents[1]
PY = shlex.quote(sys.executable)
AMQP_TEMPLATE = f"{PY} -m creditflow.adapters.amqp_template"
NET_TEMPLATE = f"{PY} -m creditflow.adapters.python_template"


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("alphabet", [AMQP_ALPHABET, QUEUE_ALPHABET, NET_ALPHABET])
def test_alphabets_name_their_family_ops_phases_and_model(alphabet):
    """FAM-ALPHABET: a family, its ops (``reset`` among them), phases, budgets, runs and
    a model side that answers."""
    assert alphabet.family in ("amqp", "credit_flow")
    assert "reset" in alphabet.ops and alphabet.phases
    assert alphabet.default_examples > 0 and alphabet.default_steps > 0
    assert alphabet.runs({"settings": {}}) is not None
    declared = {
        "policy": {"credit": {"policy": "manual"}, "window": {"policy": "never", "window": 2}}
    }
    assert alphabet.model_side(declared) is not None


#: OUT-HYPOTHESIS: per family with an alphabet, an adapter whose conform reaches
#: Hypothesis (a conformant one: every phase runs)
HYPOTHESIS_RUNS = {
    "credit_flow": ["--adapter", "reference", "--max-examples", "4", "--steps", "10"],
    "amqp": ["--adapter-cmd", AMQP_TEMPLATE, "--depth", "1", "--max-examples", "5"],
}


@pytest.mark.parametrize("family", sorted(HYPOTHESIS_RUNS))
def test_no_family_writes_hypothesis_storage(family, tmp_path, monkeypatch):
    """OUT-HYPOTHESIS: a conform run of any family writes no ``./.hypothesis/``."""
    monkeypatch.chdir(tmp_path)
    result = cli("conform", *HYPOTHESIS_RUNS[family], "--seed", "3", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert any("hypothesis" in p["name"] or p["name"] == "process-ops" for p in doc["phases"])
    assert not (tmp_path / ".hypothesis").exists()
    assert sorted(os.listdir(tmp_path)) == []


def test_the_amqp_template_runs_through_conform_and_replay(tmp_path):
    """AD-CMD, AD-HELLO: an ``--adapter-cmd`` whose hello lists ``amqp`` is held against
    the AMQP model (no "does not list family credit_flow"); a mutant's failing trace,
    written by conform, replays against the template (passes) and the mutant (fails)."""
    ok = cli(
        "conform",
        "--adapter-cmd",
        AMQP_TEMPLATE,
        "--depth",
        "2",
        "--max-examples",
        "5",
        "--seed",
        "1",
        "--out",
        str(tmp_path),
    )
    assert ok.exit_code == 0, ok.output
    assert "amqp-template 0.1.0" in ok.output and "CONFORMANT" in ok.output
    mutant = f"{PY} -m creditflow.adapters.amqp.reference --mutant delta-credit"
    bad = cli("conform", "--adapter-cmd", mutant, "--seed", "1", "--out", str(tmp_path), "--json")
    assert bad.exit_code == 1, bad.output
    doc = json.loads(bad.stdout)
    assert doc["family"] == "amqp" and doc["verdict"] == "divergence"
    assert "--adapter-cmd" in doc["replay"]
    trace = doc["trace"]
    passing = cli("replay", trace, "--adapter-cmd", AMQP_TEMPLATE)
    assert passing.exit_code == 0, passing.output
    assert "1 traces: 1 pass" in passing.output
    failing = cli("replay", trace, "--adapter-cmd", mutant)
    assert failing.exit_code == 1 and "DIVERGED" in failing.output


def test_an_adapter_of_no_known_family_is_an_adapter_failure(tmp_path):
    """AD-HELLO: a hello listing no family the engine drives fails in one line, exit 3."""
    script = tmp_path / "other.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    r = json.loads(line)\n"
        "    a = {'ok': True, 'name': 'x', 'families': ['smtp']} if r['op'] == 'hello' "
        "else {'ok': False, 'error': 'no'}\n"
        "    print(json.dumps({'id': r['id'], **a}), flush=True)\n"
    )
    result = cli("conform", "--adapter-cmd", f"{PY} {script}", "--seed", "1")
    assert result.exit_code == 3
    assert "['smtp']" in result.output and "credit_flow, amqp, http2" in result.output


def test_adapters_lists_the_amqp_adapters():
    """``creditflow adapters``: the credit_flow adapters, the AMQP ones and mutants."""
    out = cli("adapters").output
    for name in (
        "reference",
        "proton",
        "rhea",
        "azure-pyamqp",
        "rabbit-fifo",
        "amqp10-client",
        "rabbitmq-amqp1.0",
        "amqp-reference:mutant:delta-credit",
    ):
        assert any(line.split()[0] == name for line in out.splitlines()), name


def test_counted_fields_change_as_declared_on_random_runs():
    """TRACE-RUNS-BOUNDED: every step of random runs of every AMQP preset changes each
    counted field by exactly what COUNTED declares for its action (0 for the others)."""
    rng = random.Random(34)
    names = sorted(p.stem for p in (ROOT / "spec/graphs/amqp").glob("*.json"))
    shapes = set()
    steps, actions = 0, set()
    for name in names:
        t = read_amqp_preset(name).topology
        for _ in range(60):
            s = system.initial_state(t)
            for _ in range(150):
                succ = system.successors(t, s)
                if not succ:
                    break
                action, nxt = rng.choice(succ)
                steps += 1
                actions.add(action)
                before, after = counted_fields(s), counted_fields(nxt)
                effects = COUNTED[type(s).__name__]
                for path, value in before.items():
                    assert after[path] - value == effects[path].get(action, 0), (name, action)
                shapes.add(type(s).__name__)
                s = nxt
    assert shapes == set(COUNTED)
    assert steps > 3_000 and {"send", "settle", "grant", "drain"} <= actions


def _state_values(state, action: str, meta: dict) -> dict:
    values = {f: encode(itf_value(v)) for f, v in zip(state._fields, state, strict=True)}
    values[ACTION_VAR] = action
    values["#meta"] = meta
    return values


def _long_run_trace(count: int, tamper: bool) -> dict:
    """A compressed run of ``7 * count`` steps (session-window-never-renewed with a large
    window), its written end the true end, or with ``tamper`` one field the model keeps
    no fixed count of (``receiver.credit``) changed."""
    doc = json.loads((ROOT / "spec/graphs/amqp/session-window-never-renewed.json").read_text())
    nodes = {n["id"]: n for n in doc["nodes"]}
    nodes["receiver-session"]["window"]["window"] = 999_999
    nodes["sender"]["publishes"] = 1_000_000
    topology = topology_from_document(doc, "t")
    s0 = system.initial_state(topology)
    (a1, s1), *_ = [(a, s) for a, s in system.successors(topology, s0) if a == "take_back"]
    block = ["send", "take_fwd", "settle", "send", "take_fwd", "take_back", "settle"]
    end = s1
    for _ in range(count):
        for a in block:
            (end,) = [s for b, s in system.successors(topology, end) if b == a]
    values = _state_values(
        end, "settle", {"index": 1 + 7 * count, "run": {"steps": block, "count": count}}
    )
    if tamper:
        values["receiver"] = {**values["receiver"], "credit": encode(10**6)}
    meta = {"model": "amqp", "version": 1, "graph": doc, "property": "PROP-AMQ-NO-STALL"}
    return {
        "#meta": {"creditflow": {**meta, "length": 1 + 7 * count, "compressed": "runs"}},
        "vars": [*s0._fields, ACTION_VAR],
        "states": [
            _state_values(s0, "init", {"index": 0}),
            _state_values(s1, a1, {"index": 1}),
            values,
        ],
    }


def test_a_run_with_a_wrong_end_anywhere_is_refused_in_memory_independent_of_its_length():
    """TRACE-RUNS-BOUNDED (issue 37 class 2): a run whose written end is wrong in a field
    with no fixed count is expanded keeping one state, not every state: the peak memory
    of refusing a run ten times longer is about the same. The true end replays."""
    import tracemalloc

    assert replay_amqp_document(_long_run_trace(300, tamper=False)).states[-1] is not None
    peaks = []
    for count in (500, 4_000):
        trace = _long_run_trace(count, tamper=True)
        tracemalloc.start()
        with pytest.raises(TraceReplayError, match=r"states\[2\] is not where its run"):
            replay_amqp_document(trace, "t.itf.json")
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    # every state kept would be 24,500 more states (tens of MB) for the longer run
    assert peaks[1] < peaks[0] + 2_000_000, peaks


def test_a_long_run_with_a_wrong_end_is_refused_before_it_is_expanded():
    """TRACE-RUNS-BOUNDED (issue 37 class 2): a compressed run of 3.5M steps whose
    written end state is wrong is refused in well under 5 s, naming the state."""
    doc = json.loads((ROOT / "spec/graphs/amqp/session-window-never-renewed.json").read_text())
    nodes = {n["id"]: n for n in doc["nodes"]}
    window = 999_999
    nodes["receiver-session"]["window"]["window"] = window
    nodes["sender"]["publishes"] = window + 1
    topology = topology_from_document(doc, "t")
    s0 = system.initial_state(topology)
    (a1, s1), *_ = [(a, s) for a, s in system.successors(topology, s0) if a == "take_back"]
    block = ["send", "take_fwd", "settle", "send", "take_fwd", "take_back", "settle"]
    count = 500_000  # 3.5M steps
    trace = {
        "#meta": {
            "creditflow": {
                "model": "amqp",
                "version": 1,
                "graph": doc,
                "property": "PROP-AMQ-NO-STALL",
                "length": 1 + 7 * count,
                "compressed": "runs",
            }
        },
        "vars": [*s0._fields, ACTION_VAR],
        "states": [
            _state_values(s0, "init", {"index": 0}),
            _state_values(s1, a1, {"index": 1}),
            # the wrong end: the state after one step, not after the run
            _state_values(
                s1, "settle", {"index": 1 + 7 * count, "run": {"steps": block, "count": count}}
            ),
        ],
    }
    t0 = time.perf_counter()
    with pytest.raises(TraceReplayError, match=r"t\.itf\.json: states\[2\] is not where its run"):
        replay_amqp_document(trace, "t.itf.json")
    assert time.perf_counter() - t0 < 5
