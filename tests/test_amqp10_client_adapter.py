"""The ``amqp10-client`` adapter (AD-AMQ-10): RabbitMQ's Erlang AMQP 1.0 client
``amqp10_client`` from the installed release's beams (3.10.8 here), connected over
loopback to a python-qpid-proton listener, held against the model (AD-AMQ-CONFORM).

Needs Erlang and the installed RabbitMQ's beams (``make test`` installs them), not a
running broker. One adapter (one Erlang VM) for the module; every run starts with
``reset``. The findings against 3.10.8 are pinned to that release: each test checks
the version ``hello`` reports before it asserts the finding."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.adapters.amqp.amqp10_client import (
    NAME,
    SETTINGS,
    Amqp10ClientAdapter,
    locate_client_ebin,
    policy,
)
from creditflow.adapters.registry import AMQP_BUILTIN, is_amqp_name
from creditflow.conformance.cli import main as cli
from creditflow.conformance.families.amqp.conform import (
    AmqpOp,
    model_policy,
    run_ops,
    settings_choices,
)
from creditflow.conformance.families.amqp.protocol import WireMonitor
from creditflow.model.amqp import endpoints, properties
from creditflow.model.amqp.endpoints import ReceiverConfig
from creditflow.model.amqp.frames import Transfer
from creditflow.model.amqp.policies import CreditWindow, SenderCredit, WindowNever
from creditflow.model.amqp.topology import Topology
from tests.adapter_setup import started_amqp_adapter


def test_erlang_and_the_client_are_installed() -> None:
    """AD-AMQ-10: ``make test`` installs Erlang and RabbitMQ's amqp10_client beams; a
    machine without them fails here, it does not skip the adapter's tests."""
    assert shutil.which("erl") is not None, "erl is missing (scripts/setup.sh installs it)"
    assert locate_client_ebin().is_dir()


SENDS = {"client_receives": 0}  # amqp10_client holds the sender
RECEIVES = {"client_receives": 1}  # amqp10_client holds the receiver, credit by hand
WINDOW = {"client_receives": 1, "credit_window": 4, "renew_when": 2}

TRANSFER, SETTLE, DRAINED = AmqpOp("transfer"), AmqpOp("settle", number=1), AmqpOp("drained")


def flow(n: int) -> AmqpOp:
    return AmqpOp("flow", credit=n)


def drain(n: int) -> AmqpOp:
    return AmqpOp("drain", credit=n)


@pytest.fixture(scope="module")
def client() -> Iterator[Amqp10ClientAdapter]:
    yield from started_amqp_adapter(NAME, Amqp10ClientAdapter)


def pinned(client: Amqp10ClientAdapter) -> None:
    """The findings below are 3.10.8's (AD-AMQ-10, the version matrix in docs/amqp.md)."""
    assert client.info["version"] == "3.10.8", "these findings are pinned to 3.10.8"


def crashes(client: Amqp10ClientAdapter) -> str:
    """The crash reports of the client's processes after a run (AD-AMQ-10-STATE)."""
    state = client.step({"op": "state"}).state
    return " ".join(state.get("crashed") or [])


# -- the model's new count (AMQ-POL-CREDIT-WINDOW ``outstanding``) -------------------


def test_outstanding_renews_when_credit_plus_unsettled_reaches_the_threshold() -> None:
    # AMQ-POL-CREDIT-WINDOW count = outstanding: renewed to W when credit + unsettled ≤ T
    pol = CreditWindow(4, 2, "outstanding", "absolute", "settle")
    cfg = ReceiverConfig(pol, WindowNever(100), 0, (), 0)
    r, flows = endpoints.initial_receiver(cfg, 0, 100)
    assert r.link.credit == 4 and len(flows) == 1
    for seq in (1, 2):
        r, flows = endpoints.receiver_on_frame(cfg, r, Transfer(seq))
        assert flows == ()  # an arrival leaves credit + unsettled at 4
    r, _seq, flows = endpoints.receiver_settle(cfg, r)
    assert flows == () and r.link.credit == 2  # 2 + 1 unsettled = 3 > 2
    r, _seq, flows = endpoints.receiver_settle(cfg, r)
    assert r.link.credit == 4  # 2 + 0 ≤ 2: renewed to the full window, not W − unsettled
    assert flows[0].link is not None and flows[0].link.credit == 4


def test_outstanding_bounds_unsettled_by_window_plus_threshold() -> None:
    # PROP-AMQ-BOUNDS with AMQ-POL-CREDIT-WINDOW outstanding: 4 arrive, 2 settled, the
    # renewal to 4 finds 2 unsettled, 4 more arrive: 6 unsettled, none beyond the policy
    pol = CreditWindow(4, 2, "outstanding", "absolute", "settle")
    cfg = ReceiverConfig(pol, WindowNever(100), 0, (), 0)
    t = Topology("t", "link", 0, 8, WindowNever(100), cfg, SenderCredit())
    r, _flows = endpoints.initial_receiver(cfg, 0, 100)
    for seq in range(4):
        r, _ = endpoints.receiver_on_frame(cfg, r, Transfer(seq))
    for _ in range(2):
        r, _seq, _ = endpoints.receiver_settle(cfg, r)
    assert r.link.credit == 4
    for seq in range(4, 8):
        r, _ = endpoints.receiver_on_frame(cfg, r, Transfer(seq))
    assert len(r.unsettled) == 6 == properties._credit_bound(t)


def test_the_declared_policies_have_model_parameters() -> None:
    # AD-AMQ-10-POLICY: every size choice (AD-AMQ-10-SIZES) maps onto the model's
    # policy objects; the client sends, then receives by hand and by a window
    choices = settings_choices({"settings": SETTINGS})
    assert choices == [SENDS, RECEIVES, WINDOW]
    for settings in choices:
        full = {**SETTINGS, **settings}
        model_policy(policy(full), full)
    window = model_policy(policy({**SETTINGS, **WINDOW}), {**SETTINGS, **WINDOW}).credit
    assert window == CreditWindow(4, 2, "outstanding", "absolute", "settle")


# -- the adapter ---------------------------------------------------------------------


def test_hello_names_the_release_its_policy_and_settings(client: Amqp10ClientAdapter) -> None:
    # AD-AMQ-10-HELLO, AD-AMQ-10-POLICY, AD-AMQ-10-SETTINGS
    assert NAME in AMQP_BUILTIN and is_amqp_name(NAME)
    assert client.info["families"] == ["amqp"]
    assert client.info["settings"] == SETTINGS
    assert client.info["policy"]["credit"]["policy"] == "manual"
    assert "x-sender-window" in client.info["policy"]
    impl = client.info["implementation"]
    assert impl["md5"] and impl["peer"].startswith("python-qpid-proton")
    reply = client.step({"op": "reset", "settings": WINDOW})
    assert reply.extra["policy"]["credit"]["count"] == "outstanding"
    assert client.try_step({"op": "reset", "settings": {"bogus": 1}}) is None


def test_frames_of_both_ends_come_from_each_end(client: Amqp10ClientAdapter) -> None:
    # AD-AMQ-10-FRAMES: the client's own frames (traced in its session process) and the
    # proton end's over the loopback socket (AD-AMQ-10-PEER), each transfer once, the
    # run's session on channel 0 at both ends; AD-AMQ-10-QUIESCE: the answer comes at rest
    client.step({"op": "reset", "settings": SENDS})
    client.step({"op": "begin", "session": "s"})
    client.step({"op": "attach", "session": "s", "link": "L"})
    client.step({"op": "flow", "link": "L", "credit": 1})
    reply = client.step({"op": "transfer", "link": "L"})
    seen = [(f["side"], f["dir"], f["frame"], f["channel"]) for f in reply.frames]
    assert seen == [
        ("server", "received", "transfer", 0),
        ("client", "sent", "transfer", 0),
    ]
    ends = reply.state["links"]["L"]
    assert ends["sender"]["queued"] == 0 and ends["receiver"]["unsettled"] == 1
    # AD-AMQ-10-OPS: the client has no `offered`
    assert client.try_step({"op": "offered", "link": "L", "available": 1}) is None


def test_receiving_by_hand_agrees_with_the_model(client: Amqp10ClientAdapter) -> None:
    # AD-AMQ-10-APP: flow n = flow_link_credit(credit + n, never); nothing to report
    run = run_ops(client, RECEIVES, [flow(2), TRANSFER, TRANSFER, TRANSFER, SETTLE, flow(1)])
    assert run.verdict == "pass", run.to_json()


def test_3_10_8_a_drain_crashes_the_sending_session(client: Amqp10ClientAdapter) -> None:
    # finding (AD-AMQ-10): handle_link_flow/2 answers a drain with {send_flow, Link},
    # mapped/3 matches {ok, Link}: the session dies, the held message is never sent
    pinned(client)
    run = run_ops(client, SENDS, [TRANSFER, drain(1)])
    assert run.verdict == "diverged" and run.index == 1
    assert {d.field for d in run.diffs} >= {"sender.delivery_count", "receiver.credit"}
    assert "stall" in {v.rule for v in run.violations}
    assert "badmatch" in crashes(client) and "send_flow" in crashes(client)


def test_3_10_8_a_transfer_raises_the_sender_credit(client: Amqp10ClientAdapter) -> None:
    # finding (AD-AMQ-10): incr_link_counters/1 adds 1 to link_credit per transfer
    # (fixed by a6996ab1bc, 3.12.9 and 3.13.0): credit 1 carries two messages
    pinned(client)
    run = run_ops(client, SENDS, [TRANSFER, TRANSFER, flow(1)])
    assert run.verdict == "diverged" and run.index == 2
    assert {"no-credit", "over-delivery"} <= {v.rule for v in run.violations}
    assert run.implementation["receiver.credit"] == -1


def test_3_10_8_the_sender_ignores_the_session_window(client: Amqp10ClientAdapter) -> None:
    # finding (AD-AMQ-10, AD-AMQ-MONITOR no-window): send_msg checks link credit only;
    # to a proton window of 2 frames, 3 messages go out (fixed by 8cb313d5a1, 4.0.0)
    pinned(client)
    monitor = WireMonitor(manual=True)
    steps = [
        {"op": "reset", "settings": {"incoming_capacity": 1024, "max_frame_size": 512}},
        {"op": "begin", "session": "s"},
        {"op": "attach", "session": "s", "link": "L"},
        {"op": "transfer", "link": "L"},
        {"op": "transfer", "link": "L"},
        {"op": "transfer", "link": "L"},
        {"op": "flow", "link": "L", "credit": 3},
    ]
    found = [v.rule for req in steps for v in monitor.feed(client.step(req).frames)]
    assert found == ["no-window"]


def test_3_10_8_a_grant_after_a_drain_crashes_the_receiver(
    client: Amqp10ClientAdapter,
) -> None:
    # finding (AD-AMQ-10): a drain answer without `available` (proton omits it) sets the
    # receiver's available to undefined; the next flow_link_credit cannot encode it
    pinned(client)
    run = run_ops(client, RECEIVES, [flow(1), drain(1), DRAINED, flow(1)])
    assert run.verdict == "diverged" and run.index == 3
    assert run.implementation["receiver.credit"] == 0 and run.model["receiver.credit"] == 1
    assert "badarg" in crashes(client)


def test_3_10_8_credit_renewal_drifts(client: Amqp10ClientAdapter) -> None:
    # finding (AD-AMQ-10, AMQ-POL-CREDIT-WINDOW outstanding): link_credit_unsettled
    # adds W at each renewal without removing the credit it replaced, so after one
    # renewal with credit left the next is late (fixed by 8cb313d5a1, 4.0.0)
    pinned(client)
    cycle = [TRANSFER, TRANSFER, SETTLE, SETTLE]
    assert run_ops(client, WINDOW, cycle).verdict == "pass"
    run = run_ops(client, WINDOW, cycle + cycle)
    assert run.verdict == "diverged" and run.index == 7
    assert (run.model["receiver.credit"], run.implementation["receiver.credit"]) == (4, 2)


def test_conform_reports_the_shortest_failing_trace() -> None:
    # AD-AMQ-CONFORM-EXPLORE, AD-AMQ-CONFORM-VERDICT with --adapter amqp10-client
    args = ["conform", "--adapter", NAME, "--seed", "1", "--depth", "2"]
    result = CliRunner().invoke(cli, [*args, "--phase", "explorer-runs"])
    assert result.exit_code == 1, result.output
    assert "amqp10-client 3.10.8" in result.output
    assert "shortest failing trace: 2 ops (sizes: client_receives 0)" in result.output
    assert ">  2  drain 1" in result.output


def test_a_missing_client_is_one_line_exit_3(tmp_path: Path) -> None:
    # AD-AMQ-10: no amqp10_client in or beside --rabbitmq-ebin: one line, exit 3
    ebin = tmp_path / "plugins" / "nothing" / "ebin"
    ebin.mkdir(parents=True)
    args = ["conform", "--adapter", NAME, "--seed", "1", "--rabbitmq-ebin", str(ebin)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 3, result.output
    lines = [ln for ln in result.output.splitlines() if "amqp10_client" in ln]
    assert len(lines) == 1 and str(ebin) in lines[0]


def test_the_ebin_beside_is_found_as_rabbit_fifo_finds_it() -> None:
    # AD-AMQ-10: --rabbitmq-ebin names the amqp10_client ebin or any ebin beside it
    found = locate_client_ebin()
    beside = sorted(found.parent.parent.glob("rabbit_common-*/ebin"))
    assert beside, "the installed plugins folder has a rabbit_common ebin"
    assert locate_client_ebin(beside[0]) == found
    assert locate_client_ebin(found) == found
