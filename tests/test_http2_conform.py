"""``conform``/``replay`` for the HTTP/2 adapters (AD-H2-CONFORM, AD-H2-CONFORM-OPS,
AD-H2-CONFORM-RUNS, AD-H2-CONFORM-RULES, AD-H2-CONFORM-SETTLE, TRACE-H2-RUN,
AD-H2-CONFORM-REPLAY, AD-H2-CONFORM-EXPECTATIONS, AD-H2-CONFORM-CLI): real libraries,
no mocks; a missing one fails (AD-H2-VERSION). Explorer runs only, to keep the time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from creditflow.adapters.http2 import versions
from creditflow.adapters.registry import http2_adapter_factory
from creditflow.conformance.families.http2.alphabet import ALPHABET
from creditflow.conformance.families.http2.conform import (
    H2ConformOptions,
    H2ConformResult,
    check_step,
)
from creditflow.conformance.families.http2.replay import replay_traces
from creditflow.conformance.families.http2.traces import load_run_trace

CLI = [str(Path(sys.executable).with_name("creditflow"))]
EXPLORE = ("explorer-runs",)

#: docs/http2-adapters.md: the rule of each known finding at the pinned releases
KNOWN = {
    "h2": set(),
    "node": {"H2-ZERO-INCREMENT", "H2-WINDOW-MAX"},  # H2-F1
    "httpcore": {"H2-ERRORS", "H2-NEGATIVE", "H2-RESET"},  # H2-F4, H2-F3, H2-F5
    "hypercorn": {"PROP-H2-NO-STALL"},  # H2-F2
    "nghttp2": set(),
}


def conform(name: str, out: Path, expected: dict[str, str] | None = None) -> H2ConformResult:
    options = H2ConformOptions(
        seed=1, max_examples=0, steps=3, phases=EXPLORE, out_dir=out, expected=expected or {}
    )
    return ALPHABET.conform(http2_adapter_factory(name), name, options)


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_each_adapter_through_conform(name: str, tmp_path: Path) -> None:
    """AD-H2-CONFORM: each pinned adapter's findings are the rules of its known findings
    (H2-F1..F5), every one with a trace written (TRACE-H2-RUN)."""
    result = conform(name, tmp_path)
    assert {f.rule.id for f in result.findings} == KNOWN[name]
    assert result.exit_code == (1 if KNOWN[name] else 0)
    for f in result.findings:
        assert f.trace is not None and Path(f.trace).exists()
    doc = result.to_json()
    assert doc["family"] == "http2" and len(doc["findings"]) == len(result.findings)


def test_node_releases_differ(tmp_path: Path) -> None:
    """H2-F1 is absent from Node 22.23.5 (docs/http2-adapters.md): its zero increment
    and window overflow are answered as RFC 9113 asks."""
    new = conform("node@22.23.5", tmp_path)
    assert {f.rule.id for f in new.findings} & {"H2-ZERO-INCREMENT", "H2-WINDOW-MAX"} == set()


def test_a_broken_policy_declaration_fails_with_its_rule() -> None:
    """AD-H2-CONFORM-RULES: an answer without the GOAWAY a zero increment needs is
    H2-ERRORS; with the wrong code, H2-ZERO-INCREMENT; a missing PING ACK, PROP-H2-NO-STALL."""
    model = ALPHABET.model_side({"policy": {}, "role": "client", "ops": ALPHABET.ops})
    model.apply({"op": "open", "stream": 1})
    req = {"op": "window_update", "stream": 0, "increment": 0}
    quiet: dict[str, object] = {"frames": [], "state": {}}
    assert [b.rule for b in check_step(model, req, quiet, "w")] == ["H2-ERRORS"]
    model = ALPHABET.model_side({"policy": {}, "role": "client", "ops": ALPHABET.ops})
    model.apply({"op": "open", "stream": 1})
    wrong = {"frames": [{"from": "implementation", "type": "GOAWAY", "error": "INTERNAL_ERROR"}]}
    assert [b.rule for b in check_step(model, req, wrong, "w")] == ["H2-ZERO-INCREMENT"]
    model = ALPHABET.model_side({"policy": {}, "role": "client", "ops": ALPHABET.ops})
    assert [b.rule for b in check_step(model, {"op": "ping"}, quiet, "p")] == ["PROP-H2-NO-STALL"]


def test_replay_and_expectations(tmp_path: Path) -> None:
    """AD-H2-CONFORM-REPLAY: a written trace re-runs against the adapter (FAILED at
    httpcore, PASS at h2); AD-H2-CONFORM-EXPECTATIONS: listed signatures are expected."""
    result = conform("httpcore", tmp_path / "found")
    traces = [load_run_trace(Path(f.trace)) for f in result.findings if f.trace]
    report = replay_traces(http2_adapter_factory("httpcore"), "httpcore", traces)
    assert report.exit_code == 1 and all(o.status == "FAILED" for o in report.outcomes)
    h2 = replay_traces(http2_adapter_factory("h2"), "h2", traces)
    assert h2.exit_code == 0
    known = {f.signature: "known" for f in result.findings}
    masked = replay_traces(http2_adapter_factory("httpcore"), "httpcore", traces, known)
    assert {o.status for o in masked.outcomes} == {"EXPECTED"}


def test_cli_conform_replay_expectations_and_adapter_cmd(tmp_path: Path) -> None:
    """AD-H2-CONFORM-CLI: ``conform --json``, ``--expectations`` (a bad file: exit 2),
    ``--adapter-cmd`` with an http2 hello, ``replay``; ``adapters`` lists them."""
    out = tmp_path / "cx"
    ran = subprocess.run(
        [*CLI, "conform", "--adapter", "h2", "--seed", "1", "--json", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["family"] == "http2"
    cmd = " ".join(versions.command("h2").argv)
    ran = subprocess.run(
        [*CLI, "conform", "--adapter-cmd", cmd, "--seed", "1", "--phase", "explorer-runs"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "h2 4.3.0" in ran.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    ran = subprocess.run(
        [*CLI, "conform", "--adapter", "h2", "--expectations", str(bad)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ran.returncode == 2 and len(ran.stderr.strip().splitlines()) == 1
    listed = subprocess.run([*CLI, "adapters"], capture_output=True, text=True, timeout=60)
    for name in ("h2", "node", "httpcore", "hypercorn", "nghttp2"):
        assert f"{name}[@VERSION]" in listed.stdout
