"""The AMQP family's rules one by one (AMQ-*): serial numbers, link and session
endpoints, the policies, RabbitMQ 4's session and relay, the quorum-queue end, the
topology file and the transition system. Each test states a rule's expected value
computed by hand from spec/amqp.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from creditflow.conformance.inputs.amqp_topologies import (
    AmqpTopologyError,
    TopologyError,
    amqp_preset_names,
    load_amqp_preset,
    load_amqp_topology,
    topology_from_dict,
)
from creditflow.model.amqp import endpoints, link, queue, relay, session, system
from creditflow.model.amqp.frames import CreditReply, CreditRequest, Delivery, Flow, Transfer
from creditflow.model.amqp.link import LinkEnd, LinkFlow
from creditflow.model.amqp.policies import (
    RABBITMQ4_DEFAULTS,
    CreditWindow,
    QueuePolicy,
    RabbitLinkCredit,
    RabbitSessionWindow,
    RelayPolicy,
    SenderCredit,
    WindowCapacity,
    WindowFixed,
    WindowNever,
    WindowRing,
)
from creditflow.model.amqp.queue import Consumer, Enqueuer, Overflow, QueueMsgs
from creditflow.model.amqp.serial import SerialError, add, compare, diff
from creditflow.model.amqp.session import SessionEnd, SessionFlow

ROOT = Path(__file__).resolve().parents[1]
TOP = 2**32 - 1


# -- AMQ-SERIAL -----------------------------------------------------------------------------


def test_serial_add_wraps_at_2_32():
    """AMQ-SERIAL: add is mod 2^32 and only for 0 ≤ n < 2^31."""
    assert add(TOP, 1) == 0
    assert add(TOP - 3, 5) == 1
    assert add(0, 2**31 - 1) == 2**31 - 1
    with pytest.raises(SerialError):
        add(0, 2**31)
    with pytest.raises(SerialError):
        add(5, -1)


def test_serial_compare_and_diff_across_the_wrap():
    """AMQ-SERIAL: RFC 1982 order and the signed distance, across 2^32 − 1 → 0."""
    assert compare(0, TOP) == "greater"
    assert compare(TOP, 0) == "less"
    assert compare(7, 7) == "equal"
    assert compare(2**31 - 1, 0) == "greater"
    assert diff(2, TOP) == 3
    assert diff(TOP, 2) == -3
    with pytest.raises(SerialError):
        compare(0, 2**31)
    with pytest.raises(SerialError):
        diff(2**31, 0)


@given(st.integers(0, TOP), st.integers(0, 2**31 - 1))
def test_serial_add_diff_inverse(s: int, n: int) -> None:
    """AMQ-SERIAL: diff(add(s, n), s) = n and compare agrees with its sign."""
    assert diff(add(s, n), s) == n
    assert compare(add(s, n), s) == ("equal" if n == 0 else "greater")


# -- AMQ-LINK-* ----------------------------------------------------------------------------


def test_link_credit_snd_is_absolute_and_floored_across_the_wrap():
    """AMQ-LINK-CREDIT-SND: credit(snd) = dc(rcv) + credit(rcv) − dc(snd), floor 0."""
    assert link.link_credit_snd(TOP - 1, 5, 1) == 2  # 3 in flight across the wrap
    assert link.link_credit_snd(TOP, 1, 2) == 0  # the receiver lowered its credit
    assert link.link_credit_snd(10, 4, 10) == 4


def test_sender_on_flow_serial_versus_ignore_in_flight():
    """AMQ-LINK-CREDIT-SND, AMQ-POL-SENDER-CREDIT: the serial sender subtracts the
    deliveries in flight; the broken one takes the FLOW's credit as is."""
    snd = LinkEnd(TOP, 0)
    flow = LinkFlow(TOP - 2, 3, drain=True)  # 2 transfers in flight
    assert link.sender_on_flow(snd, flow) == LinkEnd(TOP, 1, True, False)
    assert link.sender_on_flow(snd, flow, SenderCredit("ignore_in_flight")).credit == 3


def test_transfer_counts_on_both_ends():
    """AMQ-LINK-TRANSFER, AMQ-LINK-STATE: delivery-count + 1 (wrapping), credit − 1."""
    assert link.transferred(LinkEnd(TOP, 2)) == LinkEnd(0, 1)
    assert link.transferred(LinkEnd(5, 0)).credit == -1


def test_drain_consumes_credit_and_answers():
    """AMQ-LINK-DRAIN: the sender advances its count by its credit and answers with
    credit 0; the receiver takes the count and ends the drain at credit 0."""
    snd, flow = link.drain_done(LinkEnd(TOP, 3, drain=True))
    assert snd == LinkEnd(2, 0, False, False) and flow == LinkFlow(2, 0, drain=True)
    rcv = link.receiver_on_flow(LinkEnd(TOP, 3, drain=True), flow)
    assert rcv == LinkEnd(2, 0, False, False)
    # a grant sent meanwhile (limit TOP + 5) is not drained by this answer: another round
    rcv2 = link.receiver_on_flow(LinkEnd(TOP, 5, drain=True), flow)
    assert rcv2.credit == 2 and rcv2.drain


def test_echo_is_answered_with_the_senders_state():
    """AMQ-LINK-FLOW: a FLOW with echo gets the sender's own link state back."""
    s = endpoints.Sender(LinkEnd(3, 0), SessionEnd(0, 8, 0, 8), 2, 0)
    s2, answers = endpoints.sender_on_flow(s, Flow(None, LinkFlow(3, 4, echo=True)), SenderCredit())
    assert answers == (Flow(None, LinkFlow(3, 4, False, False, 2)),)
    assert s2.link.credit == 4


# -- AMQ-SESSION-* and the window policies ---------------------------------------------------


def test_session_send_receive_and_flow_across_the_wrap():
    """AMQ-SESSION-STATE, AMQ-SESSION-SEND, AMQ-SESSION-RECV, AMQ-SESSION-FLOW."""
    s = SessionEnd(0, 4, TOP, 1)
    assert session.can_send(s)
    s = session.sent(s)
    assert s.next_outgoing_id == 0 and s.remote_incoming_window == 0 and not session.can_send(s)
    # the peer saw transfer TOP, advertises 3 more: ids 0, 1, 2
    assert session.on_flow(s, SessionFlow(0, 3)).remote_incoming_window == 3
    # a FLOW crossed by transfers can compute a negative window: floored at 0
    assert session.on_flow(s, SessionFlow(TOP - 2, 1)).remote_incoming_window == 0
    r, _ = session.received(WindowNever(4), SessionEnd(TOP, 4, 0, 0), (), 0)
    assert (r.next_incoming_id, r.incoming_window) == (0, 3)


def test_window_fixed_and_rabbitmq_refill_at_half():
    """AMQ-POL-WINDOW-FIXED, AMQ-RMQ-SESSION-WINDOW: renewed to the window at the threshold."""
    s = SessionEnd(0, 3, 0, 0)
    s, flow = session.received(WindowFixed(3, 1), s, (), 0)
    assert (s.incoming_window, flow) == (2, False)
    s, flow = session.received(WindowFixed(3, 1), s, (), 0)
    assert (s.incoming_window, flow) == (3, True)
    r = SessionEnd(0, 201, 0, 0)
    r, flow = session.received(RabbitSessionWindow(400), r, (), 0)
    assert (r.incoming_window, flow) == (400, True)  # 200 ≤ 400 div 2
    r = SessionEnd(0, 202, 0, 0)
    assert session.received(RabbitSessionWindow(400), r, (), 0) == (
        r._replace(next_incoming_id=1, incoming_window=201),
        False,
    )


def test_window_never_ring_and_capacity():
    """AMQ-POL-WINDOW-NEVER, AMQ-POL-WINDOW-RING, AMQ-POL-WINDOW-CAPACITY, AMQ-POL."""
    s, flow = session.received(WindowNever(1), SessionEnd(0, 1, 0, 0), (), 0)
    assert (s.incoming_window, flow) == (0, False)
    ring = WindowRing(3)
    s = SessionEnd(TOP, 3, 0, 0)
    s, _ = session.received(ring, s, (TOP,), 1)
    s, _ = session.received(ring, s, (TOP, 0), 2)
    assert s.incoming_window == 1
    # settling id 0 frees nothing while TOP is held; settling TOP frees both
    assert session.settled(ring, s, (TOP,), 1) == (s, False)
    s2, flow = session.settled(ring, s, (0,), 1)
    assert (s2.incoming_window, flow) == (2, True)
    cap = WindowCapacity(capacity=5, frame=2)
    assert session.initial_window(cap) == 2
    s, _ = session.received(cap, SessionEnd(0, 2, 0, 0), (0,), 1)
    assert s.incoming_window == 1
    assert session.initial_window(WindowCapacity(1, 2)) == 0


def test_begin_attach_initial_state():
    """AMQ-BEGIN-ATTACH: each end's remote window is the peer's initial window; the first
    grant of a window policy is on the wire; counts start at ``initial``."""
    t = load_amqp_preset("ring-one-held")
    s = system.initial_state(t)
    assert isinstance(s, system.LinkState)
    assert s.sender.session.remote_incoming_window == 2  # the ring's slots
    assert s.receiver.session.remote_incoming_window == 8
    assert s.back == (Flow(SessionFlow(t.initial, 2), LinkFlow(t.initial, 3)),)
    assert s.sender.link == LinkEnd(t.initial, 0)


# -- AMQ-POL-CREDIT-* -----------------------------------------------------------------------


def _receiver(cfg: endpoints.ReceiverConfig) -> endpoints.Receiver:
    r, _ = endpoints.initial_receiver(cfg, 0, 8)
    return r


def test_credit_window_renews_at_threshold_absolute_or_delta():
    """AMQ-POL-CREDIT-WINDOW: renew to W at credit ≤ T; the delta encoding sends only the
    increment."""
    for encoding, sent in (("absolute", 3), ("delta", 2)):
        cfg = endpoints.ReceiverConfig(
            CreditWindow(3, 1, encoding=encoding), WindowFixed(8, 4), 0, (), 0
        )
        r = _receiver(cfg)
        r, flows = endpoints.receiver_on_frame(cfg, r, Transfer(0))
        assert flows == ()
        r, flows = endpoints.receiver_on_frame(cfg, r, Transfer(1))
        assert r.link.credit == 3
        assert flows[0].link == LinkFlow(2, sent)


def test_credit_window_since_grant_is_reset_by_a_hand_grant():
    """AMQ-POL-CREDIT-WINDOW (count since_grant), AMQ-POL-CREDIT-MANUAL: a hand grant
    is absolute and resets the count."""
    cfg = endpoints.ReceiverConfig(
        CreditWindow(4, 2, count="since_grant"), WindowFixed(8, 4), 0, (1,), 0
    )
    r = _receiver(cfg)
    assert endpoints.receiver_may_grant(cfg, r)
    r, flow = endpoints.receiver_grant(cfg, r)
    assert (
        flow.link == LinkFlow(0, 1)
        and r.since_grant == 0
        and not endpoints.receiver_may_grant(cfg, r)
    )
    r, flows = endpoints.receiver_on_frame(cfg, r, Transfer(0))
    assert (r.link.credit, flows) == (0, ())  # 1 arrival since the grant < 4 − 2


def test_application_holds_its_first_deliveries():
    """AMQ-APP: the first ``holds`` deliveries are never settled; the others oldest first."""
    cfg = endpoints.ReceiverConfig(CreditWindow(3, 0), WindowFixed(8, 4), 1, (), 0)
    r = _receiver(cfg)
    for seq in range(3):
        r, _ = endpoints.receiver_on_frame(cfg, r, Transfer(seq))
    r, seq, _ = endpoints.receiver_settle(cfg, r)
    assert seq == 1
    r, seq, _ = endpoints.receiver_settle(cfg, r)
    assert seq == 2 and not endpoints.receiver_may_settle(r)


# -- RabbitMQ 4 ----------------------------------------------------------------------------


def test_rabbitmq4_defaults():
    """AMQ-RMQ-DEFAULTS: the numbers of rabbit_amqp_session and rabbit_fifo_client."""
    assert RABBITMQ4_DEFAULTS == {
        "max_incoming_window": 400,
        "max_link_credit": 170,
        "max_queue_credit": 256,
        "quorum_commands_soft_limit": 32,
    }
    assert RabbitLinkCredit().max_link_credit == 170 and RelayPolicy().max_queue_credit == 256
    assert QueuePolicy().soft_limit == 32 and QueuePolicy().low_limit == 0.8


def test_rabbitmq4_inbound_link_credit_grant_condition():
    """AMQ-RMQ-LINK-CREDIT: grant when credit ≤ max div 2 and unconfirmed < max."""
    b = system.Broker(LinkEnd(0, 85), SessionEnd(0, 400, 0, 400), tuple(range(169)), 0)
    assert system.broker_may_grant(b, 170)
    assert not system.broker_may_grant(b._replace(unconfirmed=tuple(range(170))), 170)
    assert not system.broker_may_grant(b._replace(link=LinkEnd(0, 86)), 170)


def test_relay_caps_stashes_tops_up_and_drains_in_rounds():
    """AMQ-RMQ-RELAY: cap at max_queue_credit, one request in flight, the latest client
    FLOW stashed, top-up when the queue's credit ran out, drain in rounds."""
    pol = RelayPolicy(2)
    r = relay.initial_relay(TOP)
    r, reqs = relay.on_client_flow(r, LinkFlow(TOP, 5), pol)
    assert reqs == (CreditRequest(TOP, 2, False),) and r.client_credit == 5 and r.in_flight
    r, reqs = relay.on_client_flow(r, LinkFlow(TOP, 6), pol)
    assert reqs == () and r.stashed == LinkFlow(TOP, 6)
    # the reply pops the stash: credit from the client's latest FLOW
    r, reqs, flows = relay.on_credit_reply(r, CreditReply(TOP, 2, 9, False), pol)
    assert reqs == (CreditRequest(TOP, 2, False),) and r.client_credit == 6 and r.stashed is None
    r, _, _ = relay.on_credit_reply(r, CreditReply(TOP, 2, 9, False), pol)
    assert not r.in_flight
    r, reqs = relay.on_delivery_sent(r, pol)
    r, reqs = relay.on_delivery_sent(r, pol)
    assert r.client_dc == 1 and r.client_credit == 4 and reqs == (CreditRequest(1, 2, False),)
    # drain: the queue did not advance (it had messages) -> next round; then it advanced
    r = r._replace(in_flight=True, queue_drain=True)
    r, reqs, flows = relay.on_credit_reply(r, CreditReply(1, 0, 5, True), pol)
    assert reqs == (CreditRequest(1, 2, True),) and flows == ()
    r, reqs, flows = relay.on_credit_reply(r, CreditReply(3, 0, 0, True), pol)
    assert reqs == () and flows == (LinkFlow(5, 0, True, False, 0),) and r.client_credit == 0


# -- AMQ-QQ-* -------------------------------------------------------------------------------


def test_credited_consumer_checkout_drain_and_reply_order():
    """AMQ-QQ, AMQ-QQ-CREDITED, AMQ-QQ-CHECKOUT: deliveries first, then the reply; drain
    advances the count by the credit left."""
    c = Consumer(TOP, 0, False, ())
    c, q, out = queue.on_credit(c, QueueMsgs(1, 7), CreditRequest(TOP, 3, True))
    assert out == (Delivery(7), CreditReply(2, 0, 0, True))
    assert c == Consumer(2, 0, True, (7,)) and q == QueueMsgs(0, 8)
    c, q, out = queue.on_credit(
        Consumer(0, 0, False, ()), QueueMsgs(5, 0), CreditRequest(0, 2, False)
    )
    assert out[-1] == CreditReply(2, 0, 3, False)


def test_simple_prefetch_and_returns_with_delivery_limit():
    """AMQ-QQ-PREFETCH, AMQ-QQ-SETTLE: a settlement gives one credit back up to the
    prefetch; a return over the delivery limit drops the message."""
    pol = QueuePolicy(consumer_mode="simple_prefetch", prefetch=2)
    c, q, out = queue.checkout(Consumer(0, 2, False, ()), QueueMsgs(3, 0))
    assert len(out) == 2 and c.credit == 0
    c, q, out = queue.settle(c, q, 0, pol)
    assert out == (Delivery(2),) and c.checked_out == (1, 2) and c.credit == 0
    c2, q2, dropped = queue.returned(c, q, 1, returns=0, delivery_limit=1)
    assert not dropped and q2.ready == 1
    c3, q3, dropped = queue.returned(c, q, 1, returns=1, delivery_limit=1)
    assert dropped and q3.ready == 0 and c3.checked_out == (2,)


def test_reject_publish_blocks_above_and_goes_below_eighty_percent():
    """AMQ-QQ-OVERFLOW: over the limit -> reject_publish once; crossing to ≤ trunc(0.8 L)
    -> go; a removed limit -> go (or nothing without the clause)."""
    pol = QueuePolicy(max_length=5)
    o = Overflow(5, False)
    o, msgs = queue.evaluate_limit(o, 5, 6, pol)
    assert msgs == ("reject_publish",) and o.enqueuer_blocked
    assert queue.evaluate_limit(o, 6, 7, pol) == (o, ())
    assert queue.evaluate_limit(o, 6, 5, pol) == (o, ())  # 5 > trunc(4.0)
    o2, msgs = queue.evaluate_limit(o, 5, 4, pol)
    assert msgs == ("go",) and not o2.enqueuer_blocked
    assert queue.remove_limit(o, pol) == (Overflow(None, False), ("go",))
    broken = QueuePolicy(max_length=5, go_on_limit_removed=False)
    assert queue.remove_limit(o, broken) == (Overflow(None, True), ())
    assert not queue.is_below_low(0, None)


def test_enqueuer_soft_limit_blocks_and_unblocks():
    """AMQ-QQ-SOFT-LIMIT: slow once pending ≥ soft limit at an enqueue; cleared when an
    applied notification brings pending below it."""
    pol = QueuePolicy(soft_limit=2)
    e = Enqueuer((), False, "go")
    for seq in range(3):
        e = queue.enqueue(e, seq, pol)
    assert e.slow and e.blocks == 1 and e.pending == (0, 1, 2)
    e, seq = queue.applied(e, pol)
    assert seq == 0 and e.slow  # 2 pending, not below 2
    e, _ = queue.applied(e, pol)
    assert not e.slow


# -- AMQ-TOPOLOGY, AMQ-PRESETS, AMQ-TS --------------------------------------------------------


def test_presets_are_shipped_with_rabbitmq4_numbers():
    """AMQ-PRESETS: both presets load with RabbitMQ 4's defaults."""
    assert {"rabbitmq4-publish", "rabbitmq4-consume"} <= set(amqp_preset_names())
    pub = load_amqp_preset("rabbitmq4-publish")
    assert pub.shape == "publish" and pub.broker_credit == RabbitLinkCredit(170)
    assert (
        pub.broker_window == RabbitSessionWindow(400)
        and pub.queue is not None
        and pub.queue.soft_limit == 32
    )
    con = load_amqp_preset("rabbitmq4-consume")
    assert con.shape == "consume" and con.relay == RelayPolicy(256)
    assert con.broker_window == RabbitSessionWindow(400)


def _doc(name: str) -> dict:
    return json.loads((ROOT / "spec/graphs/amqp" / f"{name}.json").read_text())


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (lambda d: d["graph"].pop("family"), "graph.family"),
        (lambda d: d["nodes"][3].update(holds=-1), "nodes (receiver).holds"),
        (lambda d: d["nodes"][3].update(colour="red"), "unknown attribute 'colour'"),
        (
            lambda d: d["nodes"][2].update(window={"policy": "ring"}),
            "nodes (receiver-session).window.slots",
        ),
        (lambda d: d["nodes"][3]["credit"].update(threshold=3), "threshold < window"),
        (lambda d: d["edges"].pop(), "one chain"),
        (lambda d: d["nodes"][0].update(role="receiver"), "expected 'sender'"),
        (lambda d: d["nodes"][3]["credit"].update(encoding="relative"), "encoding"),
    ],
)
def test_bad_topologies_are_refused_naming_the_place(mutate, problem, tmp_path):
    """AMQ-TOPOLOGY: one line naming the file and the place."""
    doc = _doc("ring-one-held")
    mutate(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(AmqpTopologyError) as exc:
        load_amqp_topology(path)
    message = str(exc.value)
    assert "\n" not in message and str(path) in message and problem in message
    with pytest.raises(TopologyError):
        topology_from_dict(doc)


def test_unparsable_and_duplicate_keys_are_one_line(tmp_path):
    """AMQ-TOPOLOGY through the input layer: not JSON, duplicate keys."""
    bad = tmp_path / "t.json"
    bad.write_text('{"graph": {"family": "amqp", "family": "amqp"}}')
    with pytest.raises(AmqpTopologyError, match="t.json"):
        load_amqp_topology(bad)
    bad.write_text("{")
    with pytest.raises(AmqpTopologyError, match="not valid JSON"):
        load_amqp_topology(bad)


def test_transition_system_is_deterministic_and_hashable():
    """AMQ-TS: successors in a fixed order; states hashable tuples; a disabled action
    raises and changes nothing."""
    t = load_amqp_preset("rabbitmq4-consume")
    s = system.initial_state(t)
    assert isinstance(s, tuple) and hash(s) == hash(system.initial_state(t))
    first = system.successors(t, s)
    assert first == system.successors(t, s)
    assert system.enabled(t, s) == ["take_back", "drain"]
    with pytest.raises(ValueError, match="not enabled"):
        system.step(t, s, "send")
    assert system.step(t, s, "take_back") == first[0][1]


# -- AMQ-READING: the four readings, each pinned by the smallest topology that tells -------
# -- the two readings apart (the model switched to the other reading changes the answer) ---


def _reading_link(credit: dict, window: dict | None = None, **receiver: object) -> dict:
    """A ``link`` topology for AMQ-READING: sessions fixed 8 at 4 (the receiver's
    ``window`` if given), initial 0; ``receiver`` sets ``publishes``, ``holds``, ``drains``."""
    fixed = {"policy": "fixed", "window": 8, "threshold": 4}
    publishes = receiver.pop("publishes", 1)
    return {
        "graph": {"family": "amqp", "name": "reading", "initial": 0},
        "nodes": [
            {"id": "s", "kind": "endpoint", "role": "sender", "publishes": publishes},
            {"id": "ss", "kind": "session", "window": fixed},
            {"id": "rs", "kind": "session", "window": window or fixed},
            {"id": "r", "kind": "endpoint", "role": "receiver", "credit": credit, **receiver},
        ],
        "edges": [
            {"source": "s", "target": "ss"},
            {"source": "ss", "target": "rs"},
            {"source": "rs", "target": "r"},
        ],
    }


def _search(d: dict) -> tuple[bool, int, str | None, tuple[str, ...]]:
    """complete, states, the property violated, the shortest witness (AMQ-TS by BFS)."""
    from creditflow.conformance.families.amqp.checking import (
        search,
    )  # deferred: the family sits above model

    r = search(topology_from_dict(d))
    v = r.violation
    return r.complete, r.states, v and v.prop, tuple(v.steps) if v else ()


def _window(w: int, t: int, **extra: str) -> dict:
    return {"policy": "window", "window": w, "threshold": t, **extra}


def test_reading_settle_count_since_grant_counts_settlements(monkeypatch):
    """AMQ-READING-SETTLE-COUNT: window 2 at 0, since_grant, renewed on settle, one held,
    3 messages: one settlement since the grant, two needed — a stall after 6 steps;
    counting arrivals (the other reading) it holds."""
    d = _reading_link(_window(2, 0, count="since_grant", renew_on="settle"), publishes=3, holds=1)
    assert _search(d) == (
        False,
        8,
        "PROP-AMQ-NO-STALL",
        ("take_back", "send", "send", "take_fwd", "take_fwd", "settle"),
    )
    cfg = topology_from_dict(d).receiver
    r = _receiver(cfg)
    r, _ = endpoints.receiver_on_frame(cfg, r, Transfer(0))
    assert r.since_grant == 0  # an arrival is not counted
    monkeypatch.setattr(endpoints, "counts_settlements", lambda cfg: False)
    assert _search(d)[:3] == (True, 12, None)


def test_reading_drain_credit_a_drain_needs_credit(monkeypatch):
    """AMQ-READING-DRAIN-CREDIT: window 1 at 0 renewed on settle, one drain, 2 messages:
    holds; a drain allowed at credit 0 (the other reading) stalls after 6 steps."""
    d = _reading_link(_window(1, 0, renew_on="settle"), publishes=2, drains=1)
    assert _search(d)[:3] == (True, 56, None)
    monkeypatch.setattr(
        endpoints,
        "receiver_may_drain",
        lambda cfg, r: r.drains_used < cfg.drains and not r.link.drain,
    )
    assert _search(d) == (
        False,
        28,
        "PROP-AMQ-NO-STALL",
        ("take_back", "send", "take_fwd", "drain", "take_back", "settle"),
    )


def _grants_while_drained(d: dict) -> int:
    """Steps other than ``resume`` and a hand grant that send link credit from a receiver
    whose drain is over, or ends in that step, and which has not resumed
    (AMQ-READING-DRAIN-RESUME)."""
    t = topology_from_dict(d)
    start = system.initial_state(t)
    seen, todo, found = {start}, [start], 0
    while todo:
        s = todo.pop()
        for action, nxt in system.successors(t, s):
            assert isinstance(s, system.LinkState) and isinstance(nxt, system.LinkState)
            # the receiver's FLOWs are appended to ``back``; take_back only removes one
            sent = () if action == "take_back" else nxt.back[len(s.back) :]
            over = s.receiver.drained or (s.receiver.link.drain and not nxt.receiver.link.drain)
            if over and action not in ("resume", "grant"):
                found += any(isinstance(f, Flow) and f.link is not None for f in sent)
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return found


def test_reading_drain_resume_only_resume_renews_after_a_drain(monkeypatch):
    """AMQ-READING-DRAIN-RESUME: window 1 at 0 renewed on arrival, one drain, 1 message:
    no link credit leaves between the end of the drain and ``resume`` (47 states); the
    other reading renews at the very arrival that ends the drain (39 states, and
    ``resume`` is never taken there)."""
    d = _reading_link(_window(1, 0), publishes=1, drains=1)
    assert _search(d)[:3] == (True, 47, None)
    assert _grants_while_drained(d) == 0
    monkeypatch.setattr(endpoints, "renewal_open", lambda r, point: not r.link.drain)
    assert _search(d)[:3] == (True, 39, None)
    assert _grants_while_drained(d) > 0
    cfg = topology_from_dict(d).receiver
    r = _receiver(cfg)._replace(link=LinkEnd(0, 1, drain=True))
    r, flows = endpoints.receiver_on_frame(cfg, r, Transfer(0))
    assert r.link.credit == 1 and not r.drained and flows[0].link == LinkFlow(1, 1)


def test_reading_one_flow_when_window_and_credit_renew_together(monkeypatch):
    """AMQ-READING-ONE-FLOW: window 1 at 0, receiver session fixed 1 at 0, one held, 1
    message: one arrival renews both, one FLOW carries both (5 states); two FLOWs (the
    other reading, RabbitMQ 4's session) give 6 states and the same verdicts on every
    shipped stall shape."""
    d = _reading_link(_window(1, 0), {"policy": "fixed", "window": 1, "threshold": 0}, holds=1)
    cfg = topology_from_dict(d).receiver
    r, flows = endpoints.receiver_on_frame(cfg, _receiver(cfg), Transfer(0))
    assert len(flows) == 1 and flows[0].session == SessionFlow(1, 1)
    assert flows[0].link == LinkFlow(1, 1)
    assert _search(d)[:3] == (True, 5, None)
    stall_shapes = [n for n in amqp_preset_names() if not n.startswith("rabbitmq4-")]
    one = {
        n: _search(json.loads((ROOT / f"spec/graphs/amqp/{n}.json").read_text()))
        for n in stall_shapes
    }

    def two(r: endpoints.Receiver, lf: LinkFlow | None, renewed: bool) -> tuple[Flow, ...]:
        fields = session.flow_fields(r.session)
        if lf is not None and renewed:
            return (Flow(fields, lf), Flow(fields, None))
        return (Flow(fields, lf),) if lf is not None or renewed else ()

    monkeypatch.setattr(endpoints, "renewal_flows", two)
    assert _search(d)[:3] == (True, 6, None)
    for n in stall_shapes:
        other = _search(json.loads((ROOT / f"spec/graphs/amqp/{n}.json").read_text()))
        assert other[2:] == one[n][2:], n
