"""The adapters and the protocol driver (AD-*): the same ops give the same answers on
the model in-process, the model as a subprocess, the Python template and RabbitMQ's
real module; the driver turns every way an adapter can misbehave into a one-line
AdapterFailure."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from creditflow.adapters.rabbitmq.module import RabbitMQAdapter, escript_path, locate_ebin
from creditflow.adapters.reference.credit_flow import ReferenceAdapter
from creditflow.adapters.registry import adapter_factory
from creditflow.conformance.differential.adapter import (
    CRASH,
    HANG,
    MISSING,
    PROTOCOL,
    REFUSED,
    AdapterFailure,
)
from creditflow.conformance.differential.protocol import Op, compare
from creditflow.conformance.differential.subprocess import SubprocessAdapter
from creditflow.model.credit.spec import CreditSpec

FAULTY = [sys.executable, str(Path(__file__).parent / "faulty_adapter.py")]

#: Every op kind, the edge cases of each (AD-SEND, AD-ACK, AD-BUMP, AD-BLOCK,
#: AD-UNBLOCK, AD-PEER-DOWN, AD-STATE) and a spec override.
SCRIPT = [
    Op("state", "fresh"),
    Op("send", "A", "B"),
    Op("send", "A", "B"),
    Op("send", "A", "B"),
    Op("ack", "A", "C"),
    Op("ack", "A", "C"),
    Op("ack", "A", "D"),
    Op("ack", "A", "D"),
    Op("bump", "A", "B", amount=1),
    Op("send", "A", "E", spec=CreditSpec(1, 1)),
    Op("ack", "A", "C", spec=CreditSpec(1, 1)),
    Op("block", "A", "qq"),
    Op("block", "A", "qq"),
    Op("unblock", "A", "qq"),
    Op("peer_down", "A", "E"),
    Op("unblock", "A", "qq"),
    Op("bump", "A", "stranger", amount=3),
    Op("bump", "A", "B", amount=-7),
    Op("send", "B", "A", spec=CreditSpec(0, 0)),
    Op("ack", "B", "A", spec=CreditSpec(0, 0)),
    Op("state", "C"),
    Op("state", "A"),
]


@pytest.fixture(scope="module")
def rabbitmq():
    """The real module; a missing RabbitMQ fails these tests (it is not a skip)."""
    adapter = RabbitMQAdapter()
    yield adapter
    adapter.close()


def test_rabbitmq_module_is_installed_and_found():
    """AD-RABBITMQ: the Debian package's rabbit_common ebin is located."""
    ebin = locate_ebin()
    assert (ebin / "credit_flow.beam").is_file()
    assert "rabbit_common" in str(ebin)
    assert escript_path().is_file()


def test_hello_names_the_real_module(rabbitmq):
    """AD-HELLO: name, families and which beam ran."""
    assert rabbitmq.info["families"] == ["credit_flow"]
    assert rabbitmq.info["name"].startswith("rabbitmq credit_flow 3.10.8 (beam md5 ")
    assert rabbitmq.info["implementation"]["module"].endswith("credit_flow.beam")


@pytest.mark.parametrize("name", ["reference-process", "python-template"])
def test_every_adapter_answers_like_the_model(name, rabbitmq):
    """AD-OPS, AD-RESPONSE, AD-FRESH, AD-RESET: one script, four implementations, the
    same answers; a reset forgets every process."""
    reference = ReferenceAdapter()
    other = adapter_factory(name)()
    try:
        for spec in (CreditSpec(2, 2), CreditSpec(3, 1)):
            answers = []
            for adapter in (reference, other, rabbitmq):
                adapter.reset(spec)
                answers.append(adapter.run(SCRIPT))
            for i, op in enumerate(SCRIPT):
                assert compare(answers[0][i], answers[1][i]) == [], (name, op)
                assert compare(answers[0][i], answers[2][i]) == [], ("rabbitmq", op)
        fresh = answers[2][0].state
        assert (fresh.credit_from, fresh.credit_to, fresh.blocked, fresh.deferred) == (
            {},
            {},
            (),
            (),
        )
        assert answers[0][-1].state.blocked == ()  # qq blocked twice, unblocked twice
        # {3,1}: blocked at the third send, four acks deferred, flushed newest first
        assert answers[0][8].emitted == (("D", 1), ("D", 1), ("C", 1), ("C", 1))
    finally:
        other.close()


def test_rabbitmq_answers_errors_and_echoes_ids(rabbitmq):
    """AD-ERRORS, AD-ID: bad requests get ok:false and the adapter carries on; any id
    comes back; names may be any UTF-8 string."""
    bad = [
        {"op": "frobnicate"},
        {"op": "send", "proc": "A"},
        {"op": "bump", "proc": "A", "peer": "B", "amount": 1.5},
        {"op": "send", "proc": "", "peer": "B"},
        {"op": "reset", "spec": [1]},
    ]
    for req in bad:
        resp = rabbitmq.request(req)
        assert resp["ok"] is False and resp["error"], req
    resp = rabbitmq.request({"op": "send", "proc": 'é"ü', "peer": "😀\n", "spec": [2, 1]})
    assert resp["state"]["credit_from"] == {"😀\n": 1}
    lines = rabbitmq.exchange(
        b'{"id":"abc","op":"state","proc":"A"}\nnot json\n\n{"id":[1,{"x":null}],"op":"x"}\n', 3
    )
    answers = [json.loads(line) for line in lines]
    assert answers[0]["id"] == "abc" and answers[0]["ok"] is True
    assert answers[1]["ok"] is False and "id" not in answers[1]
    assert answers[2] == {"id": [1, {"x": None}], "ok": False, "error": 'unknown op "x"'}


def test_pipelined_batches_do_not_deadlock(rabbitmq):
    """AD-PIPELINE: 20,000 ops in one batch (far more than a pipe buffer) come back in
    order."""
    rabbitmq.reset(CreditSpec(5, 1))
    cycle = [Op("send", "A", "B"), Op("ack", "B", "A"), Op("bump", "A", "B", amount=1)]
    ops = cycle * 7_000
    first, raws = rabbitmq.run_raw(ops)
    assert len(raws) == 21_000
    assert json.loads(raws[-1])["id"] == first + 20_999
    assert json.loads(raws[-1])["state"]["credit_from"] == {"B": 5}


@pytest.mark.parametrize(
    ("mode", "kind", "words"),
    [
        ("crash", CRASH, "exited with code 7"),
        ("garbage", PROTOCOL, "not JSON"),
        ("wrong-id", PROTOCOL, "does not echo request id"),
        ("bad-state", PROTOCOL, "state.blocked"),
        ("refuse", REFUSED, "no thanks"),
        ("accept-all", PROTOCOL, "unknown op"),
        ("no-family", PROTOCOL, "credit_flow"),
        ("extra-line", PROTOCOL, "id"),
    ],
)
def test_driver_reports_each_failure_on_one_line(mode, kind, words):
    """AD-FAILURE: crash, protocol errors and refusals, each a one-line message naming
    the adapter and the problem (the crash quotes the adapter's stderr)."""
    ops = [Op("send", "A", "B")] * 3
    with pytest.raises(AdapterFailure) as info:
        adapter = SubprocessAdapter([*FAULTY, mode, "2"], name=f"faulty-{mode}", timeout=5)
        try:
            adapter.reset(CreditSpec(2, 1))
            for op in ops:
                adapter.run([op])
        finally:
            adapter.close()
    message = str(info.value)
    assert info.value.kind == kind
    assert message.startswith(f"adapter faulty-{mode}: {kind}: ")
    assert words in message
    assert "\n" not in message
    if mode == "crash":
        assert "crashing on purpose" in message


def test_hang_is_reported_after_the_timeout():
    """AD-TIMEOUTS: no answer within the timeout is a hang; the process is stopped."""
    adapter = SubprocessAdapter([*FAULTY, "hang", "1"], name="sleepy", timeout=0.5)
    started = time.monotonic()
    with pytest.raises(AdapterFailure) as info:
        adapter.run([Op("send", "A", "B")])
    assert info.value.kind == HANG
    assert 0.4 < time.monotonic() - started < 5
    assert "response not complete within 0.5 s" in str(info.value)
    proc = adapter._proc
    adapter.close()
    assert proc.poll() is not None


def test_a_command_that_does_not_exist_is_a_crash():
    """AD-CMD: the command cannot start."""
    with pytest.raises(AdapterFailure) as info:
        SubprocessAdapter(["/nonexistent/adapter"], name="ghost")
    assert info.value.kind == CRASH and "cannot start" in str(info.value)


def test_missing_rabbitmq_says_how_to_install(tmp_path, monkeypatch):
    """AD-RABBITMQ: a wrong ebin folder is a one-line 'missing' failure that says no
    credit_flow.beam is there (an install hint would mislead); a wrong variable gives
    the install hint."""
    with pytest.raises(AdapterFailure) as info:
        locate_ebin(tmp_path)
    assert info.value.kind == MISSING
    assert f"--rabbitmq-ebin {tmp_path}: holds no credit_flow.beam" in str(info.value)
    assert "apt-get" not in str(info.value)
    monkeypatch.setenv("CREDITFLOW_RABBITMQ_EBIN", str(tmp_path))
    with pytest.raises(AdapterFailure, match="CREDITFLOW_RABBITMQ_EBIN"):
        locate_ebin()


def test_escript_runs_on_its_own():
    """AD-TRANSPORT: the shipped escript is a standalone adapter (no compile cache)."""
    ebin = locate_ebin()
    lines = (
        b'{"op":"hello","id":1}\n{"op":"reset","spec":[1,1]}\n{"op":"send","proc":"A","peer":"B"}\n'
    )
    done = subprocess.run(
        ["escript", str(escript_path()), "--ebin", str(ebin)],
        input=lines,
        capture_output=True,
        timeout=60,
        check=True,
    )
    out = [json.loads(x) for x in done.stdout.splitlines()]
    assert out[0]["id"] == 1 and out[1] == {"ok": True}
    assert out[2]["state"]["blocked"] == ["B"]
