"""Issue 37, held-out check: the campaign's nine classes attacked again with new cases
(none a copy of tests/test_reliability_round5.py, test_input_fuzz.py,
test_conform_families.py or test_overshoot_work.py), for every family where a class
applies, plus controls whose documented result must still hold. Every case asserts an
exit code, a message fragment and that no Python traceback reaches the user."""

from __future__ import annotations

import copy
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from creditflow.conformance import exit_codes
from creditflow.conformance.cli import main
from tests.test_input_fuzz import numeric_fields, with_value

ROOT = Path(__file__).resolve().parents[1]
AMQP_DIR = ROOT / "spec" / "graphs" / "amqp"
H2_DIR = ROOT / "spec" / "graphs" / "http2"
AMQP_PRESETS = sorted(p.stem for p in AMQP_DIR.glob("*.json"))
VERDICTS = {
    exit_codes.OK,
    exit_codes.INCOMPLETE,
    exit_codes.DEADLOCK,
    exit_codes.VIOLATION,
}
PY = shlex.quote(sys.executable)


def cli(*args: Any, env: dict[str, str] | None = None) -> Any:
    """``creditflow ARGS`` in-process: never an exception other than SystemExit, never
    a traceback on either stream."""
    result = CliRunner().invoke(main, [str(a) for a in args], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr
    return result


def refused(result: Any, *fragments: str) -> str:
    """IN-ONE-LINE: exit 2 and one ``creditflow: error:`` line holding ``fragments``."""
    assert result.exit_code == exit_codes.USAGE, (result.exit_code, result.output[-600:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("creditflow: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


# the fuzz file's walkers: every integer's path, a copy with one value changed
numbers, put = numeric_fields, with_value


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc))
    return path


# -- class 1: numbers at and beyond the limits, wrong types, every family's reader --------

UPLOAD = json.loads((H2_DIR / "upload.json").read_text())
#: H2-TOPOLOGY: each number's path (created where the preset leaves it out) and its range
H2_FIELDS = {
    ("client", "initial_window_size"): (0, 2**31 - 1),
    ("server", "connection_window"): (65_535, 2**31 - 1),
    ("server", "max_frame_size"): (16_384, 2**24 - 1),
    ("client", "frame_octets"): (1, 2**24 - 1),
    ("client", "padding"): (0, 256),
    ("server", "over_credit"): (0, 2**31 - 1),
    ("server", "settings_changes", 0): (0, 2**32 - 1),
    ("server", "stream_credit", "threshold"): (1, 2**31 - 1),
    ("streams", 0, "id"): (1, 2**31 - 1),
    ("streams", 0, "octets"): (0, 2**40),
}


def h2_with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(UPLOAD)
    target: Any = doc
    for key, nxt in zip(path[:-1], path[1:], strict=True):
        if isinstance(target, dict) and key not in target:
            target[key] = [] if isinstance(nxt, int) else {}
        target = target[key]
    if isinstance(target, list) and path[-1] >= len(target):
        target.append(value)
    else:
        target[path[-1]] = value
    return doc


@pytest.mark.parametrize("field", sorted(H2_FIELDS, key=str), ids=lambda p: ".".join(map(str, p)))
def test_http2_numbers_at_and_beyond_their_limits(tmp_path, monkeypatch, field):
    """H2-TOPOLOGY, IN-SCHEMA, IN-INT: every HTTP/2 number at its maximum gives a verdict;
    one past it, 2^31, 2^32 − 1, 2^63, −1, a float, a boolean, a string and null are
    refused in one line naming the file and the JSON path (2^63: IN-INT's 18 digits)."""
    monkeypatch.chdir(tmp_path)
    low, high = H2_FIELDS[field]
    where = ".".join(f"[{k}]" if isinstance(k, int) else k for k in field).replace(".[", "[")
    cases: list[Any] = [high + 1, 2**31, 2**32 - 1, -1, low - 1, 1.5, 2.0, True, "5", None]
    for value in [high, *cases]:
        path = write(tmp_path / "h.json", h2_with(field, value))
        result = cli("check", path, "--no-prove", "--max-states", "200", "--no-progress")
        taken = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
        if taken and not (field == ("streams", 0, "id") and value % 2 == 0):
            assert result.exit_code in VERDICTS, (field, value, result.output[-400:])
        else:
            refused(result, "h.json", where)
    result = cli("check", write(tmp_path / "h.json", h2_with(field, 2**63)), "--no-progress")
    refused(result, "h.json", "IN-INT")


#: values no AMQP number takes: each refused with the field's name (null: some fields
#: take it, e.g. a queue's max_length)
NOT_NUMBERS: list[Any] = [-1, 2.0, True, "7", [3]]


@pytest.mark.parametrize("preset", AMQP_PRESETS)
def test_amqp_numbers_of_every_preset_refuse_what_is_no_number(tmp_path, monkeypatch, preset):
    """AMQ-TOPOLOGY, AMQ-TOPOLOGY-LIMITS, IN-SCHEMA: in every AMQP preset, every number
    (graph, nodes) replaced by a negative, the float 2.0, a boolean, a string or a list
    is refused by ``check`` in one line naming the file and the field;
    null is refused or taken, never a traceback; 2^63 is IN-INT's refusal."""
    monkeypatch.chdir(tmp_path)
    doc = json.loads((AMQP_DIR / f"{preset}.json").read_text())
    fields = [p for p in numbers(doc) if p[0] != "edges"]
    assert fields
    for field in fields:
        name = next(k for k in reversed(field) if isinstance(k, str))
        for value in NOT_NUMBERS:
            path = write(tmp_path / "a.json", put(doc, field, value))
            result = cli("check", path, "--graph-supply", "--max-states", "50", "--no-progress")
            refused(result, "a.json", name)
        result = cli("check", write(tmp_path / "a.json", put(doc, field, None)), "--no-progress")
        assert result.exit_code in VERDICTS | {exit_codes.USAGE}, (field, result.output[-300:])
    result = cli("check", write(tmp_path / "a.json", put(doc, fields[-1], 2**63)), "--no-progress")
    refused(result, "a.json", "IN-INT")


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> dict[str, Path]:
    """Counterexample traces written by ``check``: two AMQP link presets (one with a
    hand grant), an HTTP/2 stall, a NET deadlock, and a compressed AMQP run (TRACE-RUNS:
    a session window of 300 never renewed, 1,000+ steps)."""
    folder = tmp_path_factory.mktemp("traces")
    made = {}
    for name, extra in [
        ("threshold-reset-by-grant", ["--graph-supply"]),
        ("credit-as-delta", ["--graph-supply"]),
        ("reset-never-credited", ["--no-prove"]),
        ("cycle2", []),
    ]:
        trace = folder / f"{name}.itf.json"
        result = cli("check", name, *extra, "--no-progress", "--trace-out", trace)
        assert result.exit_code in (exit_codes.DEADLOCK, exit_codes.VIOLATION), result.output
        made[name] = trace
    doc = json.loads((AMQP_DIR / "session-window-never-renewed.json").read_text())
    nodes = {n["id"]: n for n in doc["nodes"]}
    nodes["receiver-session"]["window"]["window"] = 300
    nodes["sender"]["publishes"] = 301
    topology = write(folder / "long.json", doc)
    trace = folder / "long.itf.json"
    result = cli("check", topology, "--graph-supply", "--no-progress", "--trace-out", trace)
    assert result.exit_code == exit_codes.DEADLOCK, result.output
    assert json.loads(trace.read_text())["#meta"]["creditflow"]["compressed"] == "runs"
    made["long"] = trace
    return made


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("threshold-reset-by-grant", "graph"),
        ("credit-as-delta", "graph"),
        ("reset-never-credited", "topology"),
    ],
)
def test_a_traces_embedded_topology_with_bad_numbers_is_one_line(tmp_path, traces, name, key):
    """AMQ-TOPOLOGY-LIMITS and H2-TOPOLOGY through a trace's ``#meta`` (``show``,
    TRACE-REPLAY, IN-ONE-LINE): every number of the embedded topology set to 2^31, −1
    or a string is refused in one line naming the trace; a value of the
    wrong kind names ``#meta.creditflow.<key>`` and the field (HTTP/2 said only
    "#meta does not describe a http2 input")."""
    doc = json.loads(traces[name].read_text())
    meta = doc["#meta"]["creditflow"]
    fields = list(numbers(meta[key]))
    assert fields
    for field in fields:
        label = next(k for k in reversed(field) if isinstance(k, str))
        for value in (2**31, -1, "5"):
            tampered = copy.deepcopy(doc)
            tampered["#meta"]["creditflow"][key] = put(meta[key], field, value)
            path = write(tmp_path / "t.itf.json", tampered)
            line = refused(cli("show", path), "t.itf.json")
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                assert f"#meta.creditflow.{key}" in line and label in line, line


#: an AMQP run trace (TRACE-AMQP-RUN) of the shipped corpus, written by conform
AMQP_RUN_TRACE = (
    ROOT / "conformance" / "corpus" / "amqp" / "proton-0.40.0-flow-cancels-drain.itf.json"
)


@pytest.fixture
def amqp_run_trace() -> Path:
    return AMQP_RUN_TRACE


@pytest.mark.parametrize(
    ("part", "key", "value", "high"),
    [
        ("settings", "window", 2**31, 2**31 - 1),
        ("settings", "threshold", 2**32, 2**31 - 1),
        ("settings", "window", -1, 2**31 - 1),
        ("start", "delivery_count", 2**32, 2**32 - 1),
        ("start", "sender_window", -1, 2**32 - 1),
        ("start", "client_next_outgoing_id", 2**32, 2**32 - 1),
    ],
)
def test_replay_of_a_run_trace_with_numbers_beyond_the_limits(
    amqp_run_trace, tmp_path, part, key, value, high
):
    """AMQ-TOPOLOGY-LIMITS for the trace entry point of ``replay`` (TRACE-AMQP-RUN): a
    run's sizes or start beyond what the model handles is the trace's fault, one line
    naming the place and the maximum, exit 2 (it was an adapter failure, exit 3)."""
    doc = json.loads(amqp_run_trace.read_text())
    doc["#meta"]["creditflow"]["settings"] = {"window": 3, "threshold": 1}
    doc["#meta"]["creditflow"][part][key] = value
    path = write(tmp_path / "t.itf.json", doc)
    result = cli("replay", path, "--adapter", "amqp-reference")
    refused(result, "t.itf.json", f"#meta.creditflow.{part}.{key}", f"0 … {high}")


def test_replay_of_a_run_trace_whose_window_the_policy_refuses(amqp_run_trace, tmp_path):
    """AD-AMQ-POLICY, AD-AMQ-REPLAY: a run whose ``settings.window`` is 0 makes the
    adapter declare a window the model cannot take: an adapter failure (exit 3) named in
    one line, never a traceback (``ValueError: window needs window ≥ 1``)."""
    doc = json.loads(amqp_run_trace.read_text())
    doc["#meta"]["creditflow"]["settings"] = {"window": 0, "threshold": 1}
    result = cli("replay", write(tmp_path / "t.itf.json", doc), "--adapter", "amqp-reference")
    assert result.exit_code == exit_codes.ADAPTER_FAILURE, result.output[-500:]
    assert "cannot take" in result.stdout and "window" in result.stdout


# -- class 2: bounded work on a compressed trace with a tampered end ----------------------


def leaves(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to an ITF leaf (a ``#bigint`` counts as one) of a state's values."""
    if isinstance(doc, dict):
        if set(doc) == {"#bigint"}:
            yield path
            return
        for k, v in doc.items():
            yield from leaves(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from leaves(v, (*path, i))
    else:
        yield path


def changed(value: Any) -> Any:
    if isinstance(value, dict):
        return {"#bigint": str(int(value["#bigint"]) + 1)}
    if isinstance(value, bool):
        return not value
    return f"{value}x" if isinstance(value, str) else 1


def test_every_field_of_a_compressed_runs_end_is_checked(tmp_path, traces):
    """TRACE-RUNS, TRACE-RUNS-BOUNDED, TRACE-REPLAY: each field of the state written at
    the end of a real compressed run (``check``'s own trace) changed in turn — the
    action taken included — is refused by ``show`` in one line naming the state, within
    a few seconds; the untampered trace shows (exit 0)."""
    doc = json.loads(traces["long"].read_text())
    assert cli("show", traces["long"]).exit_code == exit_codes.OK
    end = doc["states"][-1]
    assert "run" in end["#meta"]
    fields = [p for p in leaves(end) if p[0] != "#meta"]
    assert len(fields) > 20
    for field in fields:
        value = end
        for key in field:
            value = value[key]
        tampered = copy.deepcopy(doc)
        tampered["states"][-1] = put(end, field, changed(value))
        started = time.perf_counter()
        result = cli("show", write(tmp_path / "t.itf.json", tampered))
        assert time.perf_counter() - started < 10
        refused(result, "t.itf.json", f"states[{len(doc['states']) - 1}]")


@pytest.mark.parametrize(
    "run",
    [
        {"count": 0},
        {"count": -2},
        {"count": 1.0},
        {"count": False},
        {"count": "150"},
        {"count": 10**7},
        {"steps": []},
        {"steps": "send"},
        {"steps": [{"a": 1}]},
        {"steps": ["send", "teleport"]},
    ],
    ids=lambda r: json.dumps(r),
)
def test_a_compressed_runs_meta_tampered_is_refused_at_once(tmp_path, traces, run):
    """TRACE-RUNS: a run that is not a non-empty list of action names with a count from 1
    (10,000,000 steps in all at most), or whose block is no step of the model, is
    refused in one line naming the state, before anything is expanded."""
    doc = json.loads(traces["long"].read_text())
    doc["states"][-1]["#meta"]["run"].update(run)
    started = time.perf_counter()
    result = cli("show", write(tmp_path / "t.itf.json", doc))
    assert time.perf_counter() - started < 5
    refused(result, "t.itf.json", f"states[{len(doc['states']) - 1}]")


def scaled(doc: dict[str, Any], window: int, count: int) -> dict[str, Any]:
    """``doc`` (the long trace) with its embedded window and supply raised and the
    states before the run rewritten by the model, the run's count set to ``count`` and
    its written end left as it was (a wrong end: the run is far longer)."""
    from creditflow.conformance.families.amqp.codec import itf_value
    from creditflow.conformance.inputs.amqp_topologies import topology_from_document
    from creditflow.conformance.inputs.itf import encode
    from creditflow.model.amqp import system

    doc = copy.deepcopy(doc)
    graph = doc["#meta"]["creditflow"]["graph"]
    nodes = {n["id"]: n for n in graph["nodes"]}
    nodes["receiver-session"]["window"]["window"] = window
    nodes["sender"]["publishes"] = 1_000_000
    topology = topology_from_document(graph, "t")
    state = system.initial_state(topology)
    for i, written in enumerate(doc["states"][:-1]):
        if i:
            action = written["mbt::actionTaken"]
            (state,) = [s for a, s in system.successors(topology, state) if a == action]
        for f, v in zip(state._fields, state, strict=True):
            written[f] = encode(itf_value(v))
    end = doc["states"][-1]
    end["#meta"]["run"]["count"] = count
    end["#meta"]["index"] = len(doc["states"]) - 2 + count * len(end["#meta"]["run"]["steps"])
    return doc


def test_a_ten_million_step_run_with_a_wrong_end_is_refused_quickly_through_show(tmp_path, traces):
    """TRACE-RUNS-BOUNDED through ``show`` (a file, not the reader's function): a
    compressed run of 9,999,997 steps (just within TRACE-RUNS' 10,000,000) whose written
    end is wrong is refused in one line before it is expanded, in well under 5 s; one
    block more is refused at once as too long."""
    doc = json.loads(traces["long"].read_text())
    most = 10_000_000 // 7
    started = time.perf_counter()
    result = cli("show", write(tmp_path / "t.itf.json", scaled(doc, 999_999, most)))
    assert time.perf_counter() - started < 5
    refused(result, "is not where its run", "refused before expanding it")
    result = cli("show", write(tmp_path / "t.itf.json", scaled(doc, 999_999, most + 1)))
    refused(result, "10,000,000")


# -- class 3: budgets ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "budget", "fragment"),
    [
        (["prove", "rabbitmq4-consume", "--timeout", "0.5"], 0.5, "not established"),
        (["prove", "many-streams", "--timeout", "0.5"], 0.5, "FAM-DEADLINE"),
        (["prove", "reset-in-flight", "--timeout", "0.3"], 0.3, "FAM-DEADLINE"),
        (["check", "rabbitmq4-consume", "--prove-timeout", "0.5"], 0.5, "FAM-DEADLINE"),
        (["check", "rabbitmq4-publish", "--prove-timeout", "0.05"], 0.05, "not established"),
        (
            ["synth", "ring-one-held", "--timeout", "2", "--max-credit", str(10**18 - 1)],
            2,
            "not established",
        ),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else str(v),
)
def test_budgets_on_amqp_and_http2_are_honoured(tmp_path, monkeypatch, args, budget, fragment):
    """FAM-DEADLINE, SCOPE-EXIT: ``--timeout`` and ``--prove-timeout`` on AMQP and
    HTTP/2 presets end the run near the budget (within a few seconds of it, the machine
    being shared) and say the claim is not established, exit 4 — never "proved"."""
    monkeypatch.chdir(tmp_path)
    started = time.perf_counter()
    result = cli(*args, *(["--no-progress"] if args[0] == "check" else []))
    elapsed = time.perf_counter() - started
    assert result.exit_code == exit_codes.INCOMPLETE, result.output[-600:]
    assert fragment in result.output
    assert "holds for every supply (proved" not in result.output
    assert elapsed < budget + 8, elapsed


@pytest.mark.parametrize("value", ["0", "0.001", "nan", "inf", "-1", "86401", "1e400"])
def test_a_budget_out_of_range_is_refused(tmp_path, monkeypatch, value):
    """IN-BOUNDS: seconds are finite, 0.01 … 86400, for AMQP and HTTP/2 as for NET."""
    monkeypatch.chdir(tmp_path)
    refused(cli("prove", "rabbitmq4-publish", "--timeout", value), "--timeout")
    refused(cli("check", "upload", "--prove-timeout", value, "--no-progress"), "--prove-timeout")


# -- class 4: options honoured or refused in one line ---------------------------------------

NET_ONLY = [
    ["--no-symmetry"],
    ["--no-reduction"],
    ["--partial-order"],
    ["--all-check-blocked"],
    ["--mailbox-bound", "3"],
    ["--max-crashes", "1"],
    ["--credit", "2,1"],
    ["--edge-credit", "a->b=1,1"],
    ["--role-credit", "msg_store=1,1"],
]


@pytest.mark.parametrize("option", NET_ONLY, ids=lambda o: o[0])
@pytest.mark.parametrize("graph", ["threshold-reset-by-grant", "reset-in-flight"])
def test_check_refuses_an_option_its_family_does_not_take(tmp_path, monkeypatch, graph, option):
    """FAM-OPTIONS: ``check`` on an AMQP or HTTP/2 preset given a NET-only option refuses
    it in one line naming the option and the family, exit 2 — never silently dropped."""
    monkeypatch.chdir(tmp_path)
    family = "amqp" if graph in AMQP_PRESETS else "http2"
    result = cli("check", graph, *option, "--no-progress")
    refused(result, option[0], f"not an option of the {family} family", "FAM-OPTIONS")


@pytest.mark.parametrize(
    "option",
    [
        ["--credit", "2,1"],
        ["--goal", "mailbox", "--bound", "4"],
        ["--per-edge"],
        ["--every-edge"],
        ["--depth", "2"],
        ["--max-crashes", "0"],
        ["--role-credit", "msg_store=1,1"],
    ],
    ids=lambda o: o[0],
)
def test_synth_on_amqp_refuses_net_options(tmp_path, monkeypatch, option):
    """FAM-OPTIONS, AMQ-SYNTH: ``synth`` on an AMQP topology file (not a preset name)
    refuses each NET-only option in one line, exit 2."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.json"
    path.write_text((AMQP_DIR / "credit-as-delta.json").read_text())
    refused(cli("synth", path, *option), option[0], "not an option of the amqp family")


def test_synth_and_prove_on_http2_are_refused_or_decided(tmp_path, monkeypatch):
    """FAM-OPTIONS: the HTTP/2 family has no synthesis (one line, exit 2), and takes no
    ``--config`` for ``check`` or ``prove`` (one line naming the file)."""
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "advanced.config"
    config.write_text("[{rabbit, [{max_link_credit, 5}]}].\n")
    refused(cli("synth", "download"), "download", "no synthesis")
    refused(cli("check", "upload", "--config", config, "--no-progress"), "take no --config")
    refused(cli("prove", "upload", "--config", config), "take no --config")


def test_no_prove_and_config_are_honoured_on_amqp(tmp_path, monkeypatch):
    """AMQ-CONFIG, Z3-AMQ-EVERY-SUPPLY, SCOPE-EXIT: on rabbitmq4-publish ``check`` proves
    every supply (exit 0, the control); ``--no-prove`` explores the supply only and says
    every supply is not established (exit 4); ``--config`` with max_link_credit 5 is in
    effect for ``check``, ``synth`` and ``prove`` (named with its source)."""
    monkeypatch.chdir(tmp_path)
    control = cli("check", "rabbitmq4-publish", "--no-progress")
    assert control.exit_code == exit_codes.OK, control.output
    assert "holds for every supply (proved" in control.stdout
    result = cli("check", "rabbitmq4-publish", "--no-prove", "--no-progress")
    assert result.exit_code == exit_codes.INCOMPLETE, result.output
    assert "for every supply: not established" in result.stdout
    config = tmp_path / "advanced.config"
    config.write_text("[{rabbit, [{max_link_credit, 5}]}].\n")
    shown = f"rabbitmq4.max_link_credit=5 [--config {config}]"
    result = cli("check", "rabbitmq4-publish", "--config", config, "--graph-supply")
    assert result.exit_code == exit_codes.OK and shown in result.stdout, result.output
    result = cli("synth", "rabbitmq4-publish", "--config", config, "--timeout", "20")
    assert result.exit_code in VERDICTS and shown in result.stdout, result.output
    result = cli("prove", "rabbitmq4-publish", "--config", config, "--timeout", "20")
    assert result.exit_code == exit_codes.OK, result.output
    assert "max_link_credit=5" in result.stdout


# -- class 5 (and 9): no ./.hypothesis/, and the adapter start-up deadline -----------------


def run_cli(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> Any:
    """``creditflow ARGS`` as a real process in ``cwd`` (Hypothesis's default storage is
    the process's working folder)."""
    full = {**os.environ, **(env or {})}
    full.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    result = subprocess.run(
        [sys.executable, "-m", "creditflow.conformance.cli", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr, result.stderr
    return result


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["conform", "--adapter", "h2", "--max-examples", "2", "--depth", "1"], 0),
        (
            ["conform", "--adapter", "amqp-reference", "--phase", "hypothesis-runs"]
            + ["--max-examples", "2", "--steps", "4"],
            0,
        ),
    ],
    ids=["http2-h2", "amqp-reference-hypothesis-phase"],
)
def test_no_conform_run_writes_hypothesis_storage_in_the_working_folder(tmp_path, args, code):
    """OUT-HYPOTHESIS: a real ``conform`` process of the HTTP/2 family and of a built-in
    AMQP adapter's Hypothesis phase, run in an empty folder, leaves it empty (no
    ``.hypothesis/``), with its documented verdict."""
    result = run_cli([*args, "--seed", "4", "--json"], tmp_path)
    assert result.returncode == code, (result.stdout[-500:], result.stderr[-500:])
    assert os.listdir(tmp_path) == []


AMQP_SLOW_ADAPTER = """
import sys, time
time.sleep(float(sys.argv[1]))
from creditflow.adapters import amqp_template
amqp_template.main()
"""


@pytest.mark.parametrize("value", ["0", "nan", "86401"])
def test_a_bad_start_deadline_is_refused_for_an_amqp_adapter(tmp_path, monkeypatch, value):
    """AD-START-DEADLINE through ``conform --adapter-cmd`` of the AMQP family: a value of
    CREDITFLOW_ADAPTER_START_TIMEOUT that is not seconds above 0 and at most a day is an
    adapter failure (exit 3) whose one message names the variable and the value."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "slow.py"
    script.write_text(AMQP_SLOW_ADAPTER)
    result = cli(
        "conform",
        "--adapter-cmd",
        f"{PY} {script} 0",
        "--seed",
        "1",
        env={"CREDITFLOW_ADAPTER_START_TIMEOUT": value},
    )
    assert result.exit_code == exit_codes.ADAPTER_FAILURE, result.output[-400:]
    assert f"CREDITFLOW_ADAPTER_START_TIMEOUT={value}" in result.output
    assert "AD-START-DEADLINE" in result.output


def test_a_slow_amqp_adapter_names_the_start_up_deadline(tmp_path, monkeypatch):
    """AD-START-DEADLINE: an AMQP adapter answering ``hello`` after 3 s against a start-up
    deadline of 0.5 s is an adapter failure (exit 3) that says which deadline ran out
    and how to set it."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "slow.py"
    script.write_text(AMQP_SLOW_ADAPTER)
    result = cli(
        "conform",
        "--adapter-cmd",
        f"{PY} {script} 3",
        "--seed",
        "1",
        env={"CREDITFLOW_ADAPTER_START_TIMEOUT": "0.5"},
    )
    assert result.exit_code == exit_codes.ADAPTER_FAILURE, result.output[-400:]
    assert "start-up deadline" in result.output
    assert "CREDITFLOW_ADAPTER_START_TIMEOUT" in result.output


# -- class 6: limits and types of names and of a trace's #meta ------------------------------


@pytest.mark.parametrize("bad", ["x" * 5000, ["a", {"b": 1}], {"a": 1}, 7, "", None, True])
def test_an_http2_topology_name_is_checked_as_every_familys(tmp_path, monkeypatch, bad):
    """IN-LIMITS, IN-SCHEMA: an HTTP/2 topology's name of 5,000 characters (it was
    accepted), a list, an object, a number, an empty string, null or a boolean is
    refused in one line with its JSON path, never as a Python repr; 1,024 is taken."""
    monkeypatch.chdir(tmp_path)
    doc = {**UPLOAD, "name": bad}
    line = refused(cli("check", write(tmp_path / "h.json", doc), "--no-prove"), "h.json", "name")
    assert "['a'" not in line and "{'a'" not in line and "None" not in line
    if isinstance(bad, str) and bad:
        assert "1,024" in line
    ok = write(tmp_path / "ok.json", {**UPLOAD, "name": "n" * 1024})
    assert cli("check", ok, "--no-prove", "--no-progress").exit_code in VERDICTS


@pytest.mark.parametrize("family", ["amqp", "http2", "credit_flow"])
def test_a_5000_character_name_inside_a_trace_is_refused(tmp_path, traces, family):
    """IN-LIMITS through a trace's embedded input (``show``, TRACE-REPLAY): a name of
    5,000 characters in the embedded topology or graph is refused in one line (the
    HTTP/2 trace was shown)."""
    name, key = {
        "amqp": ("credit-as-delta", ("graph", "graph", "name")),
        "http2": ("reset-never-credited", ("topology", "name")),
        "credit_flow": ("cycle2", ("graph", "graph", "name")),
    }[family]
    doc = json.loads(traces[name].read_text())
    doc["#meta"]["creditflow"] = put(doc["#meta"]["creditflow"], key, "x" * 5000)
    refused(cli("show", write(tmp_path / "t.itf.json", doc)), "t.itf.json", "1,024")


@pytest.mark.parametrize("trace", ["cycle2", "reset-never-credited", "long"])
@pytest.mark.parametrize(
    ("key", "bad"),
    [("property", ["x"]), ("property", {"a": 1}), ("property", 5), ("kind", ["x"])],
)
def test_a_traces_meta_of_the_wrong_type_is_refused_not_printed(tmp_path, traces, trace, key, bad):
    """IN-SCHEMA, FAM-CODEC ("no Python repr reaches a user"): a trace whose
    ``#meta.creditflow.property`` (or ``kind``) is a list, an object or a number is
    refused by ``show`` in one line with the JSON path (it was printed as ``['x'] at the
    end``), for a NET, an HTTP/2 and a compressed AMQP trace."""
    doc = json.loads(traces[trace].read_text())
    doc["#meta"]["creditflow"][key] = bad
    refused(cli("show", write(tmp_path / "t.itf.json", doc)), f"#meta.creditflow.{key}")


def test_an_amqp_node_id_of_5000_characters_is_refused(tmp_path, monkeypatch):
    """IN-LIMITS: node names too are at most 1,024 characters in an AMQP topology."""
    monkeypatch.chdir(tmp_path)
    doc = json.loads((AMQP_DIR / "ring-one-held.json").read_text())
    long = "n" * 5000
    doc["nodes"][0]["id"] = long
    doc["edges"][0]["source"] = long
    refused(cli("check", write(tmp_path / "a.json", doc)), "a.json", "nodes[0].id", "1,024")


# -- class 7: the right file blamed ---------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "value", "fragment"),
    [
        ("max_link_credit", "2147483648", "maximum 2147483647"),
        ("max_incoming_window", "-5", "positive integer"),
        ("max_queue_credit", "1.5", "float"),
        ("quorum_commands_soft_limit", '"32"', "string"),
        ("max_link_credit", "0", "positive integer"),
        ("max_incoming_window", "99999999999999999999", "IN-INT"),
    ],
)
@pytest.mark.parametrize("command", ["prove", "synth", "check-file"])
def test_a_bad_config_value_is_blamed_on_the_config_file(
    tmp_path, monkeypatch, command, setting, value, fragment
):
    """FAM-CONFIG-BLAME, AMQ-CONFIG, IN-INT: a bad AMQP value in advanced.config given to
    ``prove``, ``synth`` or ``check`` of a user's topology file is reported against the
    config file and its line, never against the topology file or the shipped preset."""
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "advanced.config"
    config.write_text(f"%% AMQP\n[{{rabbit, [{{{setting}, {value}}}]}}].\n")
    topology = tmp_path / "mine.json"
    topology.write_text((AMQP_DIR / "rabbitmq4-publish.json").read_text())
    args = {
        "prove": ["prove", "rabbitmq4-publish"],
        "synth": ["synth", "rabbitmq4-publish"],
        "check-file": ["check", topology, "--no-progress"],
    }[command]
    line = refused(cli(*args, "--config", config), f"{config}:2:", fragment)
    assert "mine.json" not in line and "rabbitmq4-publish.json" not in line


def test_a_missing_or_broken_config_is_blamed_on_itself(tmp_path, monkeypatch):
    """FAM-CONFIG-BLAME, IN-ONE-LINE: a missing config file and one whose term never ends
    are each one line naming that file (``synth`` used to exit 0 on an invalid one)."""
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "nowhere.config"
    refused(cli("synth", "ring-one-held", "--config", missing), str(missing))
    broken = tmp_path / "broken.config"
    broken.write_text("[{rabbit, [{max_link_credit,\n")
    refused(cli("synth", "ring-one-held", "--config", broken), str(broken))
    refused(cli("prove", "rabbitmq4-consume", "--config", broken), str(broken))


# -- class 8: --trace-out DIR ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["check", "threshold-reset-by-grant", "--graph-supply"], exit_codes.DEADLOCK),
        (["check", "empty-end-refused", "--no-prove"], exit_codes.VIOLATION),
        (["check", "reset-never-credited", "--no-prove"], exit_codes.DEADLOCK),
    ],
    ids=lambda v: v[1] if isinstance(v, list) else str(v),
)
def test_trace_out_below_a_regular_file_prints_the_verdict_and_the_unsaved_trace(
    tmp_path, monkeypatch, args, code
):
    """OUT-FAILURE, OUT-EXIT, OUT-TARGET for AMQP and HTTP/2: ``--trace-out F/t.itf.json``
    where ``F`` is a regular file gives the verdict with its own exit code, the trace
    that could not be written on stdout after ``TRACE NOT WRITTEN (…)``
    (``unsaved_traces`` in ``--json``), then one line on stderr naming the path; ``F`` is
    left as it was."""
    monkeypatch.chdir(tmp_path)
    blocker = tmp_path / "out"
    blocker.write_text("mine")
    target = blocker / "t.itf.json"
    result = cli(*args, "--trace-out", target, "--no-progress")
    assert result.exit_code == code, result.output[-500:]
    assert "TRACE NOT WRITTEN" in result.stdout and '"#meta"' in result.stdout
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"creditflow: error: could not write {target}"), line
    result = cli(*args, "--trace-out", target, "--no-progress", "--json")
    assert result.exit_code == code
    report = json.loads(result.stdout)
    assert report["exit_code"] == code
    assert any(e.startswith(f"could not write {target}") for e in report["write_errors"])
    assert report["unsaved_traces"][str(target)]["states"]
    assert blocker.read_text() == "mine"


# -- controls: documented results ------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (["check", "cycle2"], exit_codes.DEADLOCK, "PROP-NO-DEADLOCK"),
        (["check", "ring-one-held"], exit_codes.DEADLOCK, "PROP-AMQ-NO-STALL violated"),
        (["check", "credit-as-delta", "--graph-supply"], exit_codes.VIOLATION, "PROP-AMQ-AGREE"),
        (["check", "empty-end-refused", "--no-prove"], exit_codes.VIOLATION, "PROP-H2-EMPTY-END"),
        (["check", "upload", "--no-prove"], exit_codes.INCOMPLETE, "not established"),
        (["prove", "rabbitmq4-publish"], exit_codes.OK, "holds for every supply (proved"),
        (["presets"], exit_codes.OK, "http2 presets"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else str(v),
)
def test_controls_give_their_documented_results(tmp_path, monkeypatch, args, code, fragment):
    """SCOPE-EXIT, README's exit codes: shipped presets of every family give their
    documented verdicts (a NET deadlock 10, an AMQP stall 10 and disagreement 12, an
    HTTP/2 refused empty END_STREAM 12, an HTTP/2 supply explored without proof 4, the
    publish shape proved 0) and write nothing but their counterexamples."""
    monkeypatch.chdir(tmp_path)
    extra = ["--no-progress"] if args[0] == "check" else []
    result = cli(*args, *extra)
    assert result.exit_code == code, result.output[-600:]
    assert fragment in result.stdout
    assert not (tmp_path / ".hypothesis").exists()
    assert set(os.listdir(tmp_path)) <= {"counterexamples"}
