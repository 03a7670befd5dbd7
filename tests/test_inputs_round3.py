"""Issue 20, classes 4, 5, 9, 10 and 11: numbers checked where they enter (IN-BOUNDS),
names that are names (AD-EXPECTATIONS-NAME, SW-GLOB), ITF values of any shape
(TRACE-HASHABLE), nothing left behind (OUT-HYPOTHESIS, SIG-PLUGIN), a graph with nothing
to synthesise (Z3-SYNTH-EDGES) and Erlang's ERL_EPMD_PORT (OBS-EPMD-ENV)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from creditflow.conformance import exit_codes
from creditflow.conformance.cli import main
from creditflow.conformance.cli import observe as observe_cli
from creditflow.conformance.cli.common import BoundedParam
from creditflow.conformance.differential.corpus import corpus_dir
from creditflow.conformance.inputs import bounds
from creditflow.conformance.inputs.expectations import ExpectationsError, load_expectations
from creditflow.conformance.inputs.itf import decode
from creditflow.conformance.inputs.reading import InputError
from creditflow.conformance.sweep.replay import ReplayError, corpus_files
from tests.hardening.helpers import alive, invoke, one_error_line, run

pytest_plugins = ["pytester"]
ROOT_SPEC = Path(__file__).resolve().parents[1] / "spec"


# -- IN-BOUNDS --------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e308", "-1", "0", "abc", ""])
def test_prove_timeout_is_a_bounded_number_of_seconds(value):
    """IN-BOUNDS: ``check --prove-timeout`` refuses what is not 0.01 s to a day."""
    code, _, err = invoke("check", "cycle2", "--prove-timeout", value)
    assert code == exit_codes.USAGE
    assert "--prove-timeout" in one_error_line(err)


def test_flags_refuse_numbers_the_files_refuse():
    """IN-BOUNDS: ``accounts check --limit 10**23`` is refused like the same limit in a
    file (IN-INT); a 19-digit seed is refused before it reaches a trace."""
    code, _, err = invoke("accounts", "check", "seed-small", "--limit", str(10**23))
    assert code == exit_codes.USAGE and "--limit" in one_error_line(err)
    code, _, err = invoke("conform", "--adapter", "reference", "--seed", "1" * 19)
    assert code == exit_codes.USAGE and "--seed" in one_error_line(err)


def test_the_largest_seed_is_written_and_replays(tmp_path):
    """IN-BOUNDS: the largest accepted seed (18 digits) round-trips through ``conform``'s
    report, so the printed ``replay:`` command would accept it too."""
    seed = str(bounds.SEED.high)
    code, out, err = invoke(
        "conform",
        "--adapter",
        "reference",
        "--seed",
        seed,
        "--max-examples",
        "1",
        "--phase",
        "process-ops",
        "--out",
        str(tmp_path / "out"),
        "--json",
    )
    assert code == exit_codes.OK, err
    assert json.loads(out)["seed"] == int(seed)


@pytest.mark.parametrize(
    ("value", "bound", "accepted"),
    [
        ("0.01", bounds.SECONDS, 0.01),
        ("86400", bounds.SECONDS, 86400.0),
        ("86400.5", bounds.SECONDS, None),
        ("nan", bounds.SECONDS, None),
        ("999999999999999999", bounds.COUNT, 999999999999999999),
        ("1000000000000000000", bounds.COUNT, None),
        ("٣", bounds.COUNT, None),  # a digit, but not ASCII
        ("1.0", bounds.COUNT, None),
        ("0", bounds.POSITIVE, None),
        ("65535", bounds.PORT, 65535),
        ("65536", bounds.PORT, None),
    ],
)
def test_the_bounds_table(value, bound, accepted):
    """IN-BOUNDS: the one table, as flags, the environment and the plugin use it."""
    if accepted is None:
        with pytest.raises(InputError, match="is not"):
            bounds.check_number(value, bound, "--x")
    else:
        assert bounds.check_number(value, bound, "--x") == accepted


NEW_NUMERIC_OPTIONS = [
    ("check", "cycle2", "--max-crashes"),
    ("observe", "record", "--out", "x.itf.json", "--seconds"),
    ("observe", "record", "--out", "x.itf.json", "--workload"),
    ("observe", "workload", "--publishes"),
    ("observe", "snapshot", "--max-pause-ms"),
]


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e308", "1" * 19])
@pytest.mark.parametrize("command", NEW_NUMERIC_OPTIONS, ids=lambda c: " ".join(c))
def test_numeric_options_added_since_are_bounded(command, value):
    """IN-BOUNDS: ``check --max-crashes`` (faults), ``observe record --seconds`` and
    ``--workload``, ``observe workload --publishes`` and ``observe snapshot
    --max-pause-ms`` refuse nan, inf, negative and huge values in one line, exit 2,
    before any broker is started."""
    code, _, err = invoke(*command, value)
    assert code == exit_codes.USAGE
    assert command[-1] in one_error_line(err)


def test_workload_publishes_are_the_largest_supply():
    """IN-BOUNDS: the workload bound is IN-LIMITS' largest supply of a source."""
    from creditflow.model.network.graph import MAX_PUBLISHES

    assert bounds.PUBLISHES.high == MAX_PUBLISHES and bounds.PUBLISHES.low == 0


def _numeric_options(command: click.Command, path: str) -> Iterator[tuple[str, click.Option]]:
    if isinstance(command, click.Group):  # loaded through the group (START-LAZY)
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                yield from _numeric_options(sub, f"{path} {name}")
    for param in command.params:
        if isinstance(param, click.Option) and not param.is_flag:
            yield path, param


def test_no_numeric_option_is_unbounded():
    """IN-BOUNDS: every numeric option of every command goes through the bounds table
    (or a small ``IntRange``); a plain ``int``/``float`` option would take nan, inf or
    10**30."""
    unbounded = [
        f"{path} {param.opts[0]}"
        for path, param in _numeric_options(main, "creditflow")
        if isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType))
        and not isinstance(param.type, click.types._NumberRangeBase)
    ]
    assert unbounded == []
    checked = [
        p for _, p in _numeric_options(main, "creditflow") if isinstance(p.type, BoundedParam)
    ]
    assert len(checked) > 20


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "1e308"])
def test_the_plugin_timeout_is_checked(pytester, value):
    """IN-BOUNDS: ``--creditflow-timeout`` outside the table is one usage line."""
    result = pytester.runpytest("--creditflow-adapter", "reference", "--creditflow-timeout", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--creditflow-timeout*is not a finite number*"])
    assert "INTERNALERROR" not in result.stderr.str() + result.stdout.str()


def test_the_plugin_refuses_an_unbalanced_quote(pytester):
    """AD-TRANSPORT-DEADLINE in the plugin: an adapter command that does not split like
    a shell command line is one usage line, not an INTERNALERROR."""
    result = pytester.runpytest("--creditflow-adapter-cmd", "python3 'adapter.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--creditflow-adapter-cmd: No closing quotation*"])
    assert "INTERNALERROR" not in result.stderr.str() + result.stdout.str()


# -- AD-EXPECTATIONS-NAME, SW-GLOB ------------------------------------------------------


@pytest.mark.parametrize("name", ["/x", "a/b", "..", ".", "", "nul\x00"])
def test_a_name_that_cannot_be_a_file_is_refused(tmp_path, name):
    """AD-EXPECTATIONS-NAME: such a name can never name a trace: one line, exit 2."""
    path = tmp_path / "known.json"
    path.write_text(json.dumps({"known_divergences": {name: "why"}}))
    with pytest.raises(ExpectationsError, match="is not a trace name"):
        load_expectations(path)


@pytest.mark.parametrize("name", ["**", "a**b", "cf4*", "cf[4]-x"])
def test_a_name_is_matched_exactly_not_as_a_pattern(tmp_path, name):
    """AD-EXPECTATIONS-NAME: ``cf4*`` used to match a shipped trace, so ``conform``
    passed where ``replay`` failed; now every pattern-like name is a name that no trace
    has: ``conform`` says so in one line (exit 2), with no traceback."""
    path = tmp_path / "known.json"
    path.write_text(json.dumps({"known_divergences": {name: "why"}}))
    assert load_expectations(path).reason(name) == "why"
    code, _, err = invoke(
        "conform",
        "--adapter",
        "reference",
        "--expectations",
        str(path),
        "--seed",
        "1",
        "--max-examples",
        "1",
        "--out",
        str(tmp_path / "out"),
    )
    assert code == exit_codes.USAGE, err
    assert f"no trace {name}.itf.json" in one_error_line(err)


@pytest.mark.parametrize("pattern", ["", "/x", "**x", "a**b", "../*", "x/../../*", "a\x00"])
def test_a_glob_is_validated(pattern):
    """SW-GLOB: an odd ``--glob`` is a ReplayError (one line, exit 2), never a crash."""
    with pytest.raises(ReplayError, match="--glob"):
        corpus_files(corpus_dir(), pattern)


def test_a_valid_glob_still_finds_the_corpus():
    """SW-GLOB: the default pattern and a plain one are accepted."""
    assert corpus_files(corpus_dir(), "**/*.itf.json")
    assert corpus_files(corpus_dir(), "cf2-*.itf.json")


# -- TRACE-HASHABLE ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        {"#set": [{"tag": "x", "value": [1]}]},
        {"#set": [{"#map": [[1, 2], ["a", 3]]}]},
        {"#set": [{"#tup": [[1]]}]},
        {"#map": [[{"#tup": [[1]]}, 1]]},
        {"#set": [{"a": [1], "b": {"#map": [[[1], [2]]]}}]},
    ],
)
def test_any_itf_value_is_a_set_member(value):
    """TRACE-HASHABLE: these raised TypeError; they decode, deterministically."""
    assert decode(value) == decode(json.loads(json.dumps(value)))
    assert hash(frozenset([repr(decode(value))]))


def test_the_plugin_replays_a_trace_with_unhashable_looking_values(pytester):
    """TRACE-HASHABLE through the plugin: a trace whose picks hold a ``#set`` with a
    variant of a list (a TypeError traceback before) is one item, and it passes."""
    src = next(corpus_dir().glob("cf2-*.itf.json"))
    doc = json.loads(src.read_text())
    doc["states"][1]["mbt::nondetPicks"]["odd"] = {"#set": [{"tag": "t", "value": [3]}]}
    (pytester.path / "odd.itf.json").write_text(json.dumps(doc))
    result = pytester.runpytest("--creditflow-adapter", "reference", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "TypeError" not in result.stdout.str()


def test_a_map_key_with_keys_of_two_types_is_read(tmp_path):
    """TRACE-HASHABLE: a ``#map`` key that is a set of a map with an int and a str key
    (a TypeError traceback before) is read; the trace is then refused by its schema in
    one line (a credit map's keys are names), exit 2."""
    src = next(corpus_dir().glob("cf2-*.itf.json"))
    doc = json.loads(src.read_text())
    odd = {"#set": [{"#map": [[1, 2], ["a", 3]]}]}
    doc["states"][1]["state"]["credit_to"] = {"#map": [[odd, 1]]}
    path = tmp_path / "odd.itf.json"
    path.write_text(json.dumps(doc))
    code, _, err = invoke("replay", str(path), "--adapter", "reference")
    assert code == exit_codes.USAGE
    assert "credit_to must be a map from names to integers" in one_error_line(err)


# -- OUT-HYPOTHESIS, SIG-PLUGIN, Z3-SYNTH-EDGES ------------------------------------------


def test_conform_writes_nothing_in_the_working_folder(tmp_path):
    """OUT-HYPOTHESIS: ``conform --out out`` leaves only ``out`` behind (Hypothesis's
    caches went to a temporary folder, since removed)."""
    done = run(
        "conform",
        "--adapter",
        "reference",
        "--seed",
        "1",
        "--max-examples",
        "2",
        "--phase",
        "process-ops",
        "--out",
        "out",
        cwd=tmp_path,
        timeout=180,
    )
    assert done.returncode == exit_codes.OK, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["out"])
    assert not (tmp_path / ".hypothesis").exists()


def test_the_plugin_stops_its_adapter_on_sigterm(tmp_path):
    """SIG-PLUGIN: pytest cancelled by SIGTERM while an adapter runs leaves no adapter."""
    corpus = tmp_path / "corpus"
    shutil.copytree(corpus_dir(), corpus)
    pidfile = tmp_path / "pids"
    slow = Path(__file__).parent / "hardening" / "hostile_adapter.py"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            str(corpus),
            "--creditflow-adapter-cmd",
            f"{sys.executable} {slow} slow {pidfile}",
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pidfile.exists(), "the adapter never started"
    pids = [int(p) for p in pidfile.read_text().split()]
    assert all(alive(p) for p in pids)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == -signal.SIGTERM
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids), pids


def test_synth_on_a_graph_without_edges(tmp_path):
    """Z3-SYNTH-EDGES: one line, exit 2 (was an AttributeError)."""
    graph = tmp_path / "lone.json"
    graph.write_text(
        json.dumps(
            {
                "directed": True,
                "multigraph": False,
                "graph": {"name": "lone"},
                "nodes": [{"id": "a", "source": True, "publishes": 2}],
                "edges": [],
            }
        )
    )
    code, _, err = invoke("synth", str(graph))
    assert code == exit_codes.USAGE
    assert "no edges" in one_error_line(err)


# -- OBS-EPMD-ENV -----------------------------------------------------------------------


def test_observe_honours_erl_epmd_port(monkeypatch):
    """OBS-EPMD-ENV: without ``--epmd-port``, ``ERL_EPMD_PORT`` is the port; the option
    still wins; both are checked as a port."""
    monkeypatch.setenv("ERL_EPMD_PORT", "4370")
    ctx = observe_cli.snapshot.make_context("snapshot", ["--node", "a@b"])
    assert ctx.params["epmd_port"] == 4370
    ctx = observe_cli.snapshot.make_context("snapshot", ["--node", "a@b", "--epmd-port", "4371"])
    assert ctx.params["epmd_port"] == 4371
    monkeypatch.setenv("ERL_EPMD_PORT", "99999")
    code, _, err = invoke("observe", "snapshot", "--node", "a@b")
    assert code == exit_codes.USAGE and "--epmd-port" in one_error_line(err)
    monkeypatch.delenv("ERL_EPMD_PORT")
    ctx = observe_cli.snapshot.make_context("snapshot", ["--node", "a@b"])
    assert ctx.params["epmd_port"] is None
    assert os.environ.get("ERL_EPMD_PORT") is None


def test_out_of_memory_is_one_line(tmp_path, monkeypatch):
    """IN-MEMORY: a MemoryError while a file is read or processed (a 51 MB trace under a
    700 MB limit) ends the command with one line naming it and the file, exit 2."""
    from creditflow.conformance.inputs import reading

    trace = tmp_path / "big.itf.json"
    trace.write_text("{}")

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(reading.json, "loads", exhausted)
    code, out, err = invoke("replay", str(trace), "--adapter", "reference")
    assert code == exit_codes.USAGE
    line = one_error_line(err)
    assert "out of memory" in line and "IN-MEMORY" in line and str(trace) in line
    assert "creditflow replay" in line and "Traceback" not in out + err


@pytest.mark.parametrize("op", [[[[]]], {"a": 1}, 3])
def test_a_paging_op_that_is_no_name_is_one_line(tmp_path, op):
    """IN-SCHEMA (found by the fuzz suite): a step whose ``op`` is a list, an object or a
    number is refused in one line, exit 2 (a list raised TypeError: unhashable)."""
    doc = json.loads(Path(ROOT_SPEC / "paging" / "small-embedded.json").read_text())
    doc["steps"][0]["op"] = op
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    for extra in ([], ["--json"]):
        code, out, err = invoke("paging", str(path), *extra)
        assert code == exit_codes.USAGE and "unknown op" in one_error_line(err)
        assert out == ""
