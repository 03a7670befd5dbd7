"""The one output writer under attack (OUT-NAME, OUT-ATOMIC, OUT-SYMLINK, OUT-FAILURE,
OUT-EXIT): hostile names in every input format for every writing command, planted
symlinks, and write failures of every kind, each with the verdict still printed."""

from __future__ import annotations

import json
import os
import stat
import string
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from creditflow.conformance.outputs import MAX_STEM, OutputError, derived_path, safe_stem
from creditflow.conformance.outputs.writer import write_atomic
from tests.hardening.helpers import (
    DOCUMENTED,
    HOSTILE_NAMES,
    actor_graph_json,
    files_under,
    graph_dot,
    graph_graphml,
    graph_json,
    invoke,
    one_error_line,
)

SAFE = set(string.ascii_letters + string.digits + "._+=,@-")


# -- OUT-NAME: the class of names, by Hypothesis ------------------------------------------


@given(st.text(max_size=400))
def test_any_name_becomes_one_safe_component(name):
    """OUT-NAME: whatever the name, one short component of safe characters, never
    ``.``/``..``, and unchanged names stay unchanged."""
    stem = safe_stem(name)
    assert stem and set(stem) <= SAFE
    assert stem not in (".", "..") and not stem.startswith(".")
    assert len(stem) <= MAX_STEM + 11
    assert derived_path("out", name, ".itf.json").parent == Path("out")
    if (
        set(name) <= SAFE
        and name
        and name[0] not in "._"
        and name[-1] not in "._"
        and len(name) <= MAX_STEM
    ):
        assert stem == name


@given(st.text(max_size=60), st.text(max_size=60))
def test_distinct_names_never_share_a_file(a, b):
    """OUT-NAME: two different names never map to one file."""
    if a != b:
        assert safe_stem(a) != safe_stem(b)


def test_names_that_sanitise_alike_get_distinct_files():
    stems = {safe_stem(n) for n in ("a/b", "a\\b", "a b", "a\x00b", "a_b")}
    assert len(stems) == 5


# -- OUT-NAME through every writing command and input format -----------------------------


def _name(kind: str, tmp_path: Path) -> str:
    name = HOSTILE_NAMES[kind]
    return str(tmp_path / "abs-victim" / "x") if name == "@ABS@" else name


FORMATS = {
    "json": (".json", graph_json),
    "graphml": (".graphml", graph_graphml),
    "dot": (".dot", graph_dot),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_NAMES))
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_check_writes_hostile_names_inside_the_output_folder(tmp_path, monkeypatch, kind, fmt):
    """OUT-NAME: check with a hostile graph name (JSON, GraphML, DOT) writes only inside
    counterexamples/, and the report still shows the name in full."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    name = _name(kind, tmp_path)
    suffix, render = FORMATS[fmt]
    (work / f"g{suffix}").write_text(render(name), encoding="utf-8")
    before = files_under(tmp_path)
    code, out, err = invoke("check", f"g{suffix}", "--json")
    assert code in DOCUMENTED
    if code == 2:  # the format cannot carry this name (XML has no NUL): one line, no file
        one_error_line(err)
        assert files_under(tmp_path) == before
        return
    assert code == 10, err
    report = json.loads(out)
    assert report["graph"] == name  # shown in full
    new = files_under(tmp_path) - before
    assert new and all(p.is_relative_to(work / "counterexamples") for p in new), new
    assert {p.parent for p in new if p.is_file()} == {work / "counterexamples"}
    assert Path(report["trace"]).parent == Path("counterexamples")
    assert not (tmp_path / "abs-victim").exists() and not (tmp_path / "escaped").exists()


@pytest.mark.parametrize("command", ["prove", "synth", "accounts"])
def test_other_writers_sanitise_hostile_names(tmp_path, monkeypatch, command):
    """OUT-NAME: prove, synth and accounts check name their files the same safe way."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    kinds = ("absolute", "nul") if command == "synth" else ("absolute", "dotdot", "long", "nul")
    for kind in kinds:  # synth costs ~2 s a run
        name = _name(kind, tmp_path)
        if command == "accounts":
            (work / "g.json").write_text(actor_graph_json(name))
            args = ["accounts", "check", "g.json", "--json"]
        else:
            (work / "g.json").write_text(graph_json(name))
            args = [command, "g.json", "--json"] + (
                ["--depth", "8"] if command == "prove" else ["--max-credit", "1", "--depth", "6"]
            )
        before = files_under(tmp_path)
        code, out, err = invoke(*args)
        assert code in DOCUMENTED and "Traceback" not in err
        new = files_under(tmp_path) - before
        assert new, (command, kind, code, out[:300])
        assert all(p.parent == work / "counterexamples" for p in new if p.is_file()), new
        assert not (tmp_path / "abs-victim").exists() and not (tmp_path / "escaped").exists()


def test_accounts_conform_names_its_divergence_safely(tmp_path, monkeypatch):
    """OUT-NAME for accounts conform: a hostile actor graph name, a divergence found."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    (work / "g.json").write_text(actor_graph_json("../../escaped"))
    code, out, err = invoke(
        "accounts",
        "conform",
        "--adapter-cmd",
        f"{sys.executable} -m creditflow.adapters.reference.accounts --mutant strict-check",
        "--graph",
        "g.json",
        "--json",
    )
    assert code == 1, err
    trace = Path(json.loads(out)["trace"])
    assert trace.parent == Path("counterexamples") and (work / trace).is_file()
    assert not (tmp_path / "escaped").exists()


# -- OUT-SYMLINK -------------------------------------------------------------------------


@pytest.mark.parametrize("planted", ["cycle2.dot", "cycle2.svg", "cycle2.itf.json"])
def test_a_planted_symlink_is_replaced_not_followed(tmp_path, monkeypatch, planted):
    """OUT-SYMLINK: `ln -s ../victim counterexamples/cycle2.dot` leaves victim alone."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "counterexamples").mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "counterexamples" / planted).symlink_to("../victim")
    code, out, _ = invoke("check", "cycle2", "--credit", "1,1")
    assert code == 10 and "PROP-NO-DEADLOCK" in out
    assert victim.read_text() == "precious\n"
    link = tmp_path / "counterexamples" / planted
    if planted != "cycle2.svg" or link.exists():  # the SVG needs Graphviz
        assert not link.is_symlink() and link.stat().st_size > 0


def test_explicit_paths_are_atomic_and_do_not_follow_a_final_symlink(tmp_path, monkeypatch):
    """OUT-SYMLINK for --trace-out/--dot-out: the user's path, but the link is replaced."""
    monkeypatch.chdir(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "t.itf.json").symlink_to(victim)
    code, _, _ = invoke(
        "check", "cycle2", "--credit", "1,1", "--trace-out", "t.itf.json", "--dot-out", "pic/p.dot"
    )
    assert code == 10
    assert victim.read_text() == "precious\n"
    assert json.loads((tmp_path / "t.itf.json").read_text())["#meta"]["format"] == "ITF"
    assert (tmp_path / "pic" / "p.dot").read_text().startswith("digraph")
    assert not [p for p in tmp_path.rglob(".cf-*")]  # no temporary file left behind


# -- OUT-FAILURE / OUT-EXIT --------------------------------------------------------------


def _assert_failure_after_verdict(code: int, out: str, err: str, verdict: int) -> str:
    line = one_error_line(err)
    assert line.startswith("creditflow: error: could not write ")
    assert code == (verdict if verdict else 5)
    return line


def test_output_folder_is_a_regular_file(tmp_path, monkeypatch):
    """OUT-FAILURE: `counterexamples` a file: verdict, the trace on stdout, one line."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "counterexamples").write_text("not a folder")
    code, out, err = invoke("check", "cycle2", "--credit", "1,1")
    line = _assert_failure_after_verdict(code, out, err, 10)
    assert "is not a folder" in line
    assert "PROP-NO-DEADLOCK" in out and "blocked forever: A, B" in out
    assert "TRACE NOT WRITTEN" in out and '"#meta"' in out
    code, out, err = invoke("check", "cycle2", "--credit", "1,1", "--json")
    report = json.loads(out)
    assert code == 10 and report["trace"] is None and report["write_errors"]
    (doc,) = report["unsaved_traces"].values()
    assert doc["#meta"]["format"] == "ITF" and len(doc["states"]) > 1


@pytest.mark.parametrize("bad", ["long", "fifo"])
def test_bad_explicit_paths_fail_in_one_line(tmp_path, monkeypatch, bad):
    """OUT-FAILURE: a 300-character name or a FIFO as --trace-out: verdict, trace on
    stdout, one line (a folder is refused by the option itself, exit 2)."""
    monkeypatch.chdir(tmp_path)
    target = {"long": "x" * 300 + ".itf.json", "fifo": "pipe.itf.json"}[bad]
    if bad == "fifo":
        os.mkfifo(tmp_path / target)
    code, out, err = invoke("check", "cycle2", "--credit", "1,1", "--trace-out", target)
    _assert_failure_after_verdict(code, out, err, 10)
    assert "PROP-NO-DEADLOCK" in out and "TRACE NOT WRITTEN" in out
    if bad == "fifo":
        assert stat.S_ISFIFO((tmp_path / target).stat().st_mode)


def test_write_atomic_refuses_and_never_leaves_a_partial_file(tmp_path):
    """OUT-ATOMIC, OUT-FAILURE: each failure is one line; the old file stays whole; no
    temporary file is left behind."""
    target = tmp_path / "t.json"
    target.write_text("old")
    (tmp_path / "plain").write_text("a file")
    (tmp_path / "dir.json").mkdir()
    for bad in (
        tmp_path / "plain" / "t.json",
        tmp_path / "dir.json",
        tmp_path / ("y" * 300),
        Path(str(tmp_path / "nul") + "\x00.json"),
    ):
        with pytest.raises(OutputError) as info:
            write_atomic(bad, "x")
        assert "\n" not in str(info.value) and str(info.value).isprintable()
        assert info.value.payload == b"x"
    assert target.read_text() == "old"
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert not list(tmp_path.rglob(".cf-*"))
