"""The azure-pyamqp adapter (AD-AMQ-AZURE): azure-servicebus' pure-Python AMQP 1.0 stack
driven by frames in memory, its declared policy, and its findings, each pinned to the
release it was found in (docs/amqp.md's version matrix)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from creditflow.adapters.amqp import versions
from creditflow.adapters.registry import amqp_adapter_factory, is_amqp_name
from creditflow.conformance.cli import main
from creditflow.conformance.families.amqp.conform import (
    AmqpConformOptions,
    AmqpOp,
    model_policy,
    run_amqp_conform,
    run_ops,
    settings_choices,
)
from creditflow.conformance.families.amqp.protocol import AmqpAdapter, WireMonitor
from creditflow.model.amqp.policies import CreditWindow, WindowFixed
from tests.adapter_setup import fake_installed_release, started_amqp_adapter

PINNED = versions.PINNED["azure-pyamqp"]
MANUAL = {"link_credit": 0, "incoming_window": 3}
#: the release the findings below were found in (docs/amqp.md's version matrix)
FOUND_IN = "7.15.0"


@pytest.fixture(scope="module")
def azure() -> Iterator[AmqpAdapter]:
    yield from started_amqp_adapter("azure-pyamqp", AmqpAdapter)


def start(a: AmqpAdapter, settings: dict[str, int]) -> tuple[WireMonitor, dict[str, Any]]:
    """reset, begin s, attach L; the monitor fed with every frame; the last state."""
    monitor = WireMonitor(manual=settings.get("link_credit", 1) == 0)
    a.step({"op": "reset", "settings": settings})
    state: dict[str, Any] = {}
    for req in ({"op": "begin", "session": "s"}, {"op": "attach", "session": "s", "link": "L"}):
        got = a.step(req)
        monitor.feed(got.frames)
        state = got.state
    return monitor, state


def step(a: AmqpAdapter, monitor: WireMonitor, req: dict[str, Any]) -> tuple[list[Any], Any]:
    """One op: its frames fed to the monitor; (the violations, the reply)."""
    got = a.step({"link": "L", **req})
    if req["op"] in ("flow", "drain"):
        monitor.granted("L", int(req["credit"]))
    found = monitor.feed(got.frames) + monitor.at_rest(req["op"], got.state)
    return found, got


def conform(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["conform", *args])
    return result.exit_code, result.output


def test_hello_declares_the_pinned_release_its_sizes_and_the_models_policy(
    azure: AmqpAdapter,
) -> None:
    """AD-AMQ-AZURE, AD-AMQ-AZURE-SETTINGS, AD-AMQ-AZURE-POLICY: hello names the pinned
    release; reset repeats the policy with the sizes in effect, and it is the model's
    (a credit window renewed at 0, absolute; a fixed session window renewed at 0)."""
    assert is_amqp_name("azure-pyamqp") and is_amqp_name(f"azure-pyamqp@{PINNED}")
    assert azure.info["version"] == PINNED
    assert set(azure.info["settings"]) == {
        "link_credit",
        "incoming_window",
        "sender_link_credit",
        "max_frame_size",
        "message_size",
    }
    assert "drained" not in azure.ops and "offered" not in azure.ops  # AD-AMQ-AZURE-OPS
    window = azure.step({"op": "reset", "settings": {"link_credit": 2, "incoming_window": 3}})
    pol = model_policy(window.extra["policy"], {})
    assert pol.credit == CreditWindow(2, 0, "credit", "absolute", "arrival")
    assert pol.window == WindowFixed(3, 0) and pol.uncompared == ()
    manual = azure.step({"op": "reset", "settings": MANUAL})
    assert model_policy(manual.extra["policy"], {}).credit is None
    assert manual.extra["policy"]["sender_credit"]["x-self-grant"] == 10000
    for bad in ({"prefetch": 1}, {"max_frame_size": 511}):
        assert azure.try_step({"op": "reset", "settings": bad}) is None
    assert settings_choices(azure.info) == [  # AD-AMQ-AZURE-SIZES
        {"link_credit": 0, "incoming_window": 3},
        {"link_credit": 0, "incoming_window": 2},
        {"link_credit": 2, "incoming_window": 3},
        {"link_credit": 2, "incoming_window": 2},
    ]


def test_frames_cross_through_the_library_codec_and_the_server_answers(
    azure: AmqpAdapter,
) -> None:
    """AD-AMQ-AZURE-WIRE, AD-AMQ-AZURE-ENDS: the client's BEGIN is answered by the
    server's session naming the client's channel; its ATTACH by the server's receiver
    ATTACH and the receiver's FLOW; every frame is reported sent by one end and received
    (decoded by the library) by the other."""
    azure.step({"op": "reset", "settings": MANUAL})
    begun = azure.step({"op": "begin", "session": "s"})
    kinds = [(f["side"], f["dir"], f["frame"]) for f in begun.frames]
    assert kinds == [
        ("client", "sent", "begin"),
        ("server", "received", "begin"),
        ("server", "sent", "begin"),
        ("client", "received", "begin"),
    ]
    answer = begun.frames[2]
    assert answer["remote-channel"] == begun.frames[0]["channel"] == 1
    attached = azure.step({"op": "attach", "session": "s", "link": "L"})
    server_sent = [f for f in attached.frames if f["side"] == "server" and f["dir"] == "sent"]
    assert [f["frame"] for f in server_sent] == ["attach", "flow"]
    assert server_sent[0]["role"] == "receiver" and server_sent[1]["link-credit"] == 0
    sent = sum(1 for f in attached.frames if f["dir"] == "sent")
    assert sent == sum(1 for f in attached.frames if f["dir"] == "received")


def test_flow_adds_to_the_credit_and_settle_disposes(azure: AmqpAdapter) -> None:
    """AD-AMQ-AZURE-OPS, AD-AMQ-AZURE-STATE: ``flow n`` adds n to the receiver's credit
    (pyamqp's ``Link.flow`` sets it: the adapter passes current + n); a settled delivery
    leaves the sender's unsettled pending deliveries; ``drained`` is refused."""
    monitor, _ = start(azure, MANUAL)
    step(azure, monitor, {"op": "flow", "credit": 1})
    _, got = step(azure, monitor, {"op": "flow", "credit": 2})
    grants = [f for f in got.frames if f["frame"] == "flow" and f["side"] == "server"]
    assert grants[0]["link-credit"] == 3
    _, got = step(azure, monitor, {"op": "transfer"})
    link = got.state["links"]["L"]
    assert link["sender"]["unsettled"] == 1 and link["receiver"]["unsettled"] == 1
    assert link["receiver"]["credit"] == 2 and link["receiver"]["delivery_count"] == 1
    _, got = step(azure, monitor, {"op": "settle", "count": 1})
    assert got.state["links"]["L"]["sender"]["unsettled"] == 0
    assert [f["frame"] for f in got.frames] == ["disposition", "disposition"]
    assert set(got.state["sessions"]["s"]["server"]) >= {"incoming_window", "next_incoming_id"}
    assert azure.try_step({"op": "drained", "link": "L"}) is None


def test_7_15_0_sender_grants_itself_credit_when_the_receiver_gives_none(
    azure: AmqpAdapter,
) -> None:
    """Finding (7.15.0): ``SenderLink.update_pending_deliveries`` resets a credit ≤ 0 to
    the sender's own ``link_credit`` (10000) and says so in a FLOW: the receiver's
    attach FLOW with credit 0 leaves the sender with 10000, and a message goes out that
    the receiver never granted (its library credit goes to −1; the monitor's ledger:
    granted 0, 1 arrived)."""
    assert azure.info["version"] == FOUND_IN
    monitor, state = start(azure, MANUAL)
    assert state["links"]["L"]["sender"]["credit"] == 10000
    assert state["links"]["L"]["receiver"]["credit"] == 0
    found, got = step(azure, monitor, {"op": "transfer"})
    arrived = [f for f in got.frames if f["frame"] == "transfer" and f["side"] == "server"]
    assert len(arrived) == 1
    assert got.state["links"]["L"]["receiver"]["credit"] == -1
    assert "credit-ledger" in {v.rule for v in found}


def test_7_15_0_a_grant_sends_every_queued_message_whatever_the_credit(
    azure: AmqpAdapter,
) -> None:
    """Finding (7.15.0): a FLOW with credit makes the sender send all its queued
    messages (the loop in ``update_pending_deliveries`` checks no credit): two queued,
    one more credit granted, both delivered (``over-delivery`` on the receiver)."""
    assert azure.info["version"] == FOUND_IN
    monitor, _ = start(azure, {"link_credit": 0, "incoming_window": 64})
    step(azure, monitor, {"op": "flow", "credit": 1})
    step(azure, monitor, {"op": "transfer"})
    step(azure, monitor, {"op": "transfer"})
    _, got = step(azure, monitor, {"op": "transfer"})
    assert got.state["links"]["L"]["sender"]["queued"] == 2
    found, got = step(azure, monitor, {"op": "flow", "credit": 1})
    arrived = [f for f in got.frames if f["frame"] == "transfer" and f["side"] == "server"]
    assert len(arrived) == 2
    assert got.state["links"]["L"]["receiver"]["credit"] == -1
    assert "over-delivery" in {v.rule for v in found}


def test_7_15_0_a_session_window_flow_at_zero_credit_self_grants(azure: AmqpAdapter) -> None:
    """Finding (7.15.0): the session's window renewal (a FLOW without a handle) reaches
    ``SenderLink._incoming_flow`` and so the same self-grant: with a window of 2, the
    second transfer spends the last credit and renews the window, and the sender's own
    FLOW then claims 10000."""
    assert azure.info["version"] == FOUND_IN
    monitor, _ = start(azure, {"link_credit": 0, "incoming_window": 2})
    step(azure, monitor, {"op": "flow", "credit": 2})
    assert monitor.link_view("L")["snd_credit"] == 2
    step(azure, monitor, {"op": "transfer"})
    _, got = step(azure, monitor, {"op": "transfer"})
    own = [
        f
        for f in got.frames
        if f["frame"] == "flow" and f["side"] == "client" and f["dir"] == "sent"
    ]
    assert own and own[-1]["link-credit"] == 10000 and "handle" in own[-1]
    found, _ = step(azure, monitor, {"op": "transfer"})
    assert "credit-ledger" in {v.rule for v in found}


def test_7_15_0_the_sender_ignores_drain(azure: AmqpAdapter) -> None:
    """Finding (7.15.0): a drain with nothing to send is never answered (§2.6.7 wants
    the sender to use up the credit and send its flow state): ``SenderLink`` reads no
    drain flag, the client sends nothing back and keeps its credit (Service Bus' own
    ``drain_and_release_messages`` notes that pyamqp drops the drain echo)."""
    assert azure.info["version"] == FOUND_IN
    monitor, _ = start(azure, MANUAL)
    step(azure, monitor, {"op": "flow", "credit": 1})
    _, got = step(azure, monitor, {"op": "drain", "credit": 1})
    assert [f["drain"] for f in got.frames if f["frame"] == "flow"] == [True, True]
    assert not [f for f in got.frames if f["side"] == "client" and f["dir"] == "sent"]
    assert got.state["links"]["L"]["sender"]["credit"] == 2
    assert monitor.link_view("L")["snd_credit"] == 2


def test_7_15_0_multi_frame_messages_count_one_transfer_id(azure: AmqpAdapter) -> None:
    """Finding (7.15.0): ``Session._outgoing_transfer`` advances next-outgoing-id and the
    remote window once per message however many frames it sends, while the receiving
    session counts every frame (§2.5.6: every transfer frame has a transfer-id): a
    2-frame message leaves the client at next-outgoing-id 1, the server at 2."""
    assert azure.info["version"] == FOUND_IN
    settings = {"link_credit": 0, "incoming_window": 8, "max_frame_size": 512}
    monitor, _ = start(azure, {**settings, "message_size": 700})
    step(azure, monitor, {"op": "flow", "credit": 2})
    _, got = step(azure, monitor, {"op": "transfer"})
    frames = [f for f in got.frames if f["frame"] == "transfer" and f["dir"] == "sent"]
    assert [f["more"] for f in frames] == [True, False]
    sessions = got.state["sessions"]["s"]
    assert sessions["client"]["next_outgoing_id"] == 1
    assert sessions["server"]["next_incoming_id"] == 2
    assert monitor.endpoints()["sessions"]["client:1"]["next_outgoing_id"] == 2


def test_7_15_0_outgoing_window_goes_negative(azure: AmqpAdapter) -> None:
    """Finding (7.15.0): the session's outgoing-window is decremented per message and
    never restored; a later FLOW carries it negative (``negative``; the encoder puts
    its absolute value on the wire)."""
    assert azure.info["version"] == FOUND_IN
    monitor, _ = start(azure, {"link_credit": 2, "incoming_window": 2})
    found: list[Any] = []
    for _ in range(4):
        got_found, got = step(azure, monitor, {"op": "transfer"})
        found += got_found
    assert got.state["sessions"]["s"]["client"]["outgoing_window"] == -2
    assert "negative" in {v.rule for v in found}
    wire = [
        f["outgoing-window"]
        for f in got.frames
        if f["frame"] == "flow" and f["side"] == "server" and f["dir"] == "received"
    ]
    assert wire == [2]


def test_conform_finds_the_self_grant_with_its_shortest_trace() -> None:
    """AD-AMQ-CONFORM on azure-pyamqp 7.15.0: the explorer's first run, one transfer
    right after attach, diverges (the sender's credit is its own 10000, not the
    receiver's 0): exit 1."""
    code, out = conform("--adapter", "azure-pyamqp", "--seed", "1")
    assert code == 1, out
    assert "shortest failing trace: 1 op" in out and "sender.credit" in out
    assert "azure-pyamqp 7.15.0" in out


def test_hypothesis_runs_find_and_shrink_the_self_grant() -> None:
    """AD-AMQ-CONFORM-HYPOTHESIS on azure-pyamqp: the random runs find the divergence
    too and shrink it to one op."""
    factory = amqp_adapter_factory("azure-pyamqp")
    options = AmqpConformOptions(seed=3, max_examples=10, steps=6, phases=("hypothesis-runs",))
    result = run_amqp_conform(factory, options)
    assert result.found_by == "hypothesis-runs" and result.run is not None
    assert result.run.verdict == "diverged" and len(result.run.ops) == 1


def test_with_credit_windows_only_conform_runs_the_window_policy(azure: AmqpAdapter) -> None:
    """AD-AMQ-AZURE-POLICY: with the ReceiveClient's credit window (2) and a session
    window of 3, transfers and settles agree with the model op by op (the self-grant
    is undone by the receiver's renewal before the next op)."""
    ops = [AmqpOp("transfer")] * 3 + [AmqpOp("settle", number=1)] + [AmqpOp("transfer")]
    run = run_ops(azure, {"link_credit": 2, "incoming_window": 3}, ops)
    assert run.verdict == "pass", json.dumps(run.to_json())


def test_a_release_that_cannot_be_installed_is_one_line_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """AD-AMQ-VERSION for azure-pyamqp: pip cannot install the release → one line naming
    it, exit 3, nothing left in the cache; through conform the same, exit 3."""
    monkeypatch.setenv("CREDITFLOW_CACHE", str(tmp_path))
    assert versions.main(["install", "azure-pyamqp@0.0.0.no.such"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("adapter azure-pyamqp@0.0.0.no.such: ")
    assert not any((tmp_path / "amqp").iterdir())
    code, out = conform("--adapter", "azure-pyamqp@0.0.0.no.such", "--seed", "1")
    assert code == 3 and out.count("\n") <= 2, out


def test_a_release_runs_from_its_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AD-AMQ-VERSION: ``azure-pyamqp@V`` puts V's cache folder first on the adapter's
    PYTHONPATH and runs the azure adapter; plain ``azure-pyamqp`` the project's
    environment."""
    folder = fake_installed_release(tmp_path, monkeypatch, "amqp", "azure-pyamqp", "7.12.0")
    cmd = versions.command("azure-pyamqp@7.12.0")
    assert cmd.env["PYTHONPATH"].split(":")[0] == str(folder)
    assert cmd.argv[-1] == "creditflow.adapters.amqp.azure_pyamqp"
    plain = versions.command("azure-pyamqp")
    assert plain.version == PINNED and str(tmp_path) not in plain.env.get("PYTHONPATH", "")


def test_with_credit_windows_the_negative_outgoing_window_is_a_property_verdict(
    azure: AmqpAdapter,
) -> None:
    """AD-AMQ-CONFORM-VERDICT on azure-pyamqp 7.15.0 with the ReceiveClient's credit
    window 2 and a session window of 2: four transfers agree with the model, but the
    sender's FLOW carries outgoing-window −2 (``negative``) while the model, which keeps
    no outgoing window, is in the same state: a property verdict (exit 12)."""
    assert azure.info["version"] == FOUND_IN
    run = run_ops(azure, {"link_credit": 2, "incoming_window": 2}, [AmqpOp("transfer")] * 4)
    assert run.verdict == "property" and run.index == 3 and run.diffs == ()
    assert {v.rule for v in run.violations} == {"negative"}


def test_detach_and_end_are_answered_and_a_detached_link_is_refused(azure: AmqpAdapter) -> None:
    """AD-AMQ-AZURE-OPS, AD-AMQ-REFUSE: the client's DETACH (closed) and END are answered
    by the server's; ops on the detached link are refused and change nothing."""
    start(azure, MANUAL)
    got = azure.step({"op": "detach", "link": "L"})
    assert [(f["side"], f["dir"], f["frame"]) for f in got.frames] == [
        ("client", "sent", "detach"),
        ("server", "received", "detach"),
        ("server", "sent", "detach"),
        ("client", "received", "detach"),
    ]
    assert azure.try_step({"op": "transfer", "link": "L"}) is None
    assert azure.try_step({"op": "flow", "link": "L", "credit": 1}) is None
    got = azure.step({"op": "end", "session": "s"})
    assert [f["frame"] for f in got.frames] == ["end"] * 4
