"""TRACE-OPTIONS: every kind of trace creditflow writes is read by itf-py (the Python
ITF library, a dev dependency: a missing one fails these tests), and decodes to the
same values as our own reader. Cost: about 2 s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from itf_py import trace_from_json

from creditflow.conformance.cli import main
from creditflow.conformance.differential.corpus import corpus_dir
from creditflow.conformance.differential.traces import load_trace
from creditflow.conformance.inputs.itf import Record, Variant, decoded_states, read_document


def _same(ours: Any, theirs: Any) -> bool:
    """Does itf-py's value equal ours (records as namedtuples, options as variants)?"""
    if isinstance(ours, Variant):
        return type(theirs).__name__ == ours.tag and _same(ours.value, theirs.value)
    if isinstance(ours, Record):
        return list(theirs._fields) == list(ours) and all(
            _same(v, getattr(theirs, k)) for k, v in ours.items()
        )
    if isinstance(ours, dict):
        return len(ours) == len(theirs) and all(_same(v, theirs[k]) for k, v in ours.items())
    if isinstance(ours, list):
        return len(ours) == len(theirs) and all(map(_same, ours, theirs))
    return ours == theirs


def _check(path: Path) -> None:
    doc = read_document(path)
    trace = trace_from_json(json.loads(path.read_text()))
    assert len(trace.states) == len(doc["states"]) and trace.vars == doc["vars"]
    for ours, theirs in zip(decoded_states(doc), trace.states, strict=True):
        for var, value in ours.items():
            assert _same(value, theirs.values[var]), (path, var)


def _written(tmp_path: Path) -> list[Path]:
    """One trace of each kind: network (explorer, Z3), per-process (conform), model
    (accounts), AMQP (AMQ-TRACE)."""
    runner = CliRunner()
    out = []
    for name, args in {
        "check.itf.json": ["check", "stalled-queue"],
        "prove.itf.json": ["prove", "cycle2", "--credit", "1,1", "--depth", "8"],
        "accounts.itf.json": ["accounts", "check", "slow-consumer"],
        "amqp-link.itf.json": ["check", "ring-one-held"],
        "amqp-publish.itf.json": ["check", "limit-removed-no-go"],
    }.items():
        runner.invoke(main, [*args, "--trace-out", str(tmp_path / name)], catch_exceptions=False)
        out.append(tmp_path / name)
    runner.invoke(
        main,
        [
            "conform",
            "--adapter",
            "mutant:ack-off-by-one",
            "--seed",
            "1",
            "--max-examples",
            "20",
            "--out",
            str(tmp_path / "conform"),
        ],
        catch_exceptions=False,
    )
    out += sorted((tmp_path / "conform").glob("*.itf.json"))
    assert all(p.is_file() for p in out) and len(out) == 6
    return out


def test_itf_py_reads_every_kind_of_trace_we_write(tmp_path: Path) -> None:
    """TRACE-OPTIONS: explorer, Z3, conform and model traces, and the shipped corpus."""
    for path in [*_written(tmp_path), *sorted(corpus_dir().glob("*.itf.json"))]:
        _check(path)


def test_quint_options_are_what_itf_py_cannot_read_and_we_still_can(tmp_path: Path) -> None:
    """TRACE-OPTIONS: Quint's option form of the picks makes itf-py 0.5 fail twice
    over ({"tag": "None"} is a Python keyword; Some of a #tup or #bigint becomes a
    namedtuple field named '#tup'); we no longer write it but still read it."""
    source = corpus_dir() / "cf4-channel-blocked-on-dead-queue.itf.json"
    doc = json.loads(source.read_text())
    first = doc["states"][0]["mbt::nondetPicks"]
    assert set(first) == {"spec"}  # proc, peer, amount left out at the reset
    for state in doc["states"]:
        picks = state["mbt::nondetPicks"]
        for key in ("proc", "peer", "amount", "spec"):
            picks[key] = (
                {"tag": "Some", "value": picks[key]}
                if key in picks
                else {"tag": "None", "value": {"#tup": []}}
            )
    old = tmp_path / "old-style.itf.json"
    old.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="keyword|valid identifiers"):
        trace_from_json(doc)
    none_only = json.loads(json.dumps(doc))
    none_only["states"][0]["mbt::nondetPicks"]["spec"] = {"tag": "Some", "value": "x"}
    with pytest.raises(ValueError, match="keyword: 'None'"):
        trace_from_json(none_only)
    assert load_trace(old).trace == load_trace(source).trace
