"""The one adapter transport under attack (AD-TRANSPORT-DEADLINE, AD-TRANSPORT-LINE,
AD-TRANSPORT-PARSE, AD-TRANSPORT-GROUP, AD-TRANSPORT-STDERR): hostile adapters that never
write a newline, trickle bytes, write endless blank lines or a 10 MB line, answer with
deep nesting, huge integers, non-objects or wrong types, leave a grandchild behind, or
write terminal escapes on stderr."""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from creditflow.conformance.differential.adapter import HANG, PROTOCOL, AdapterFailure
from creditflow.conformance.differential.protocol import Op
from creditflow.conformance.differential.subprocess import SubprocessAdapter
from creditflow.conformance.differential.transport import MAX_LINE_BYTES
from creditflow.conformance.runtime import children
from creditflow.model.credit.spec import CreditSpec
from tests.hardening.helpers import (
    HOSTILE,
    ROOT,
    alive,
    gone,
    hostile_adapter,
    invoke,
    one_error_line,
)

CORPUS_TRACE = ROOT / "conformance" / "corpus" / "credit_flow" / "cf13-disabled-0-0.itf.json"


def _adapter(mode: str, timeout: float = 0.5, **kw: Any) -> SubprocessAdapter:
    return SubprocessAdapter([sys.executable, str(HOSTILE), mode], name=mode, timeout=timeout, **kw)


def _fail_on_first_op(mode: str, timeout: float = 0.5) -> tuple[AdapterFailure, float]:
    adapter = _adapter(mode, timeout)
    try:
        adapter.reset(CreditSpec(2, 1))
        started = time.monotonic()
        with pytest.raises(AdapterFailure) as info:
            adapter.run([Op("send", "A", "B")])
        return info.value, time.monotonic() - started
    finally:
        proc = adapter._proc
        adapter.close()
        assert proc.returncode is not None and gone([proc.pid])


@pytest.mark.parametrize("mode", ["trickle", "blank-lines"])
def test_the_deadline_is_per_response_not_per_chunk(mode):
    """AD-TRANSPORT-DEADLINE: a byte every 50 ms or endless blank lines do not keep a
    response alive past the timeout."""
    failure, took = _fail_on_first_op(mode, timeout=0.5)
    assert failure.kind == HANG and "not complete within 0.5 s" in str(failure)
    assert 0.45 < took < 3


def test_hello_has_the_same_hard_deadline():
    """AD-TRANSPORT-DEADLINE at start: blank lines instead of a hello."""
    started = time.monotonic()
    with pytest.raises(AdapterFailure) as info:
        _adapter("blank-lines-hello", start_timeout=0.5)
    assert info.value.kind == HANG and time.monotonic() - started < 3


@pytest.mark.parametrize("mode", ["no-newline", "huge-line", "no-newline-hello"])
def test_line_length_is_bounded(mode):
    """AD-TRANSPORT-LINE: endless bytes without a newline or a 10 MB line are a protocol
    error once 1 MiB is buffered; the driver's memory stays bounded."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if mode.endswith("-hello"):
        with pytest.raises(AdapterFailure) as info:
            _adapter(mode, timeout=5)
        failure = info.value
    else:
        failure, _ = _fail_on_first_op(mode, timeout=5)
    assert failure.kind == PROTOCOL and f"{MAX_LINE_BYTES:,} bytes" in str(failure)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 * 1024  # far below the 650 MB of the unbounded driver


@pytest.mark.parametrize("mode", ["deep", "huge-int", "non-object", "wrong-types"])
def test_no_response_crashes_the_driver(mode):
    """AD-TRANSPORT-PARSE: 100,000-deep nesting, a 5,000-digit integer, a list, wrong
    types: a protocol error, one printable line."""
    failure, _ = _fail_on_first_op(mode)
    assert failure.kind == PROTOCOL
    assert str(failure).isprintable() and len(str(failure)) < 2500


def test_stderr_escapes_are_neutralised_on_the_command_line(tmp_path):
    """AD-TRANSPORT-STDERR: ESC/CSI/OSC/BEL/CR from the adapter never reach our terminal."""
    code, _, err = invoke(
        "conform", "--adapter-cmd", hostile_adapter("escape"), "--seed", "1", "--out", str(tmp_path)
    )
    assert code == 3
    line = one_error_line(err)
    assert "\x1b" not in err and "\x07" not in err and "\r" not in err
    assert "crash: exited with code 9" in line and "\\x1b" in line


def test_no_grandchild_survives_replay(tmp_path):
    """AD-TRANSPORT-GROUP: an adapter's grandchild is killed when replay ends normally."""
    pidfile = tmp_path / "pids"
    code, out, err = invoke(
        "replay", str(CORPUS_TRACE), "--adapter-cmd", hostile_adapter("grandchild", pidfile)
    )
    assert code == 0, out + err
    adapter_pid, grandchild_pid = map(int, pidfile.read_text().split())
    assert gone([adapter_pid, grandchild_pid])


def test_group_is_killed_after_a_failure():
    """AD-TRANSPORT-GROUP: a failing adapter's whole group is gone after close."""
    pidfile = Path(f"/tmp/cf-hostile-{time.monotonic_ns()}")
    adapter = SubprocessAdapter(
        [sys.executable, str(HOSTILE), "grandchild", str(pidfile)], name="g", timeout=0.5
    )
    try:
        pids = list(map(int, pidfile.read_text().split()))
        assert all(alive(p) for p in pids) and adapter._proc.pid in children.live_pids()
    finally:
        adapter.close()
        pidfile.unlink()
    assert gone(pids) and not children.live_pids()


@pytest.mark.parametrize("value", ["inf", "1e308", "nan", "-1", "0"])
@pytest.mark.parametrize("command", ["conform", "replay", "accounts"])
def test_bad_timeouts_are_usage_errors(command, value):
    """AD-TRANSPORT-DEADLINE: --timeout must be finite and in range: exit 2."""
    args = {
        "conform": ["conform", "--adapter", "reference"],
        "replay": ["replay", str(CORPUS_TRACE), "--adapter", "reference"],
        "accounts": ["accounts", "conform", "--adapter", "reference"],
    }[command]
    code, out, err = invoke(*args, f"--timeout={value}")
    assert code == 2 and "--timeout" in one_error_line(err) and not out


@pytest.mark.parametrize("command", ["conform", "replay", "accounts"])
def test_an_unbalanced_quote_in_adapter_cmd_is_a_usage_error(command):
    """AD-TRANSPORT-DEADLINE (the command line): an unbalanced quote is exit 2."""
    args = {
        "conform": ["conform"],
        "replay": ["replay", str(CORPUS_TRACE)],
        "accounts": ["accounts", "conform"],
    }[command]
    code, _, err = invoke(*args, "--adapter-cmd", "python3 'adapter.py")
    assert code == 2 and "No closing quotation" in one_error_line(err)


def test_a_hostile_adapter_in_json_mode_still_gives_one_json_object(tmp_path):
    """AD-TRANSPORT-PARSE through the CLI: exit 3, one JSON object on stdout."""
    code, out, err = invoke(
        "replay", str(CORPUS_TRACE), "--adapter-cmd", hostile_adapter("huge-int"), "--json"
    )
    assert code == 3 and "Traceback" not in err
    report = json.loads(out)
    assert report["counts"]["adapter-failure"] == 1


ESCAPING_ACCOUNTS_ADAPTER = """
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if req.get("op") == "hello":
        out = {"id": req["id"], "ok": True, "name": "esc", "families": ["accounts"]}
    elif req.get("op") == "reset":
        out = {"id": req["id"], "ok": False, "error": "\\x1b[2J\\x1b]0;pwn\\x07boom\\nsecond"}
    else:
        out = {"id": req["id"], "ok": False, "error": "unknown op"}
    print(json.dumps(out), flush=True)
"""


def test_accounts_adapter_error_text_is_escaped(tmp_path):
    """AD-TRANSPORT-STDERR for the accounts family: an error text with escapes and a
    newline is echoed as one escaped line, exit 3."""
    script = tmp_path / "esc.py"
    script.write_text(ESCAPING_ACCOUNTS_ADAPTER)
    code, _, err = invoke("accounts", "conform", "--adapter-cmd", f"{sys.executable} {script}")
    assert code == 3
    line = one_error_line(err)
    assert "\x1b" not in err and "\\x1b]0;pwn\\x07boom\\nsecond" in line
