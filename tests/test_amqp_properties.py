"""PROP-AMQ-*: each property holds on the correct model for the small instances
enumerated here, and each is caught, with a shortest witness, when one rule of the
model is broken (the mutation is applied in the test with monkeypatch). The stall
shapes of spec/graphs/amqp/ are found at their sizes with the shortest witness, and
each holds once its policy is the correct one."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import pytest

from creditflow.conformance.families.amqp.checking import AmqpSearchResult, search
from creditflow.conformance.inputs.amqp_topologies import load_amqp_preset, topology_from_dict
from creditflow.model.amqp import endpoints, link, properties, queue, relay, session, system
from creditflow.model.amqp.link import LinkEnd, LinkFlow
from creditflow.model.amqp.topology import Topology

ROOT = Path(__file__).resolve().parents[1]
SHAPES = ROOT / "spec" / "graphs" / "amqp"


def doc(name: str) -> dict:
    return json.loads((SHAPES / f"{name}.json").read_text())


def topo(d: dict) -> Topology:
    return topology_from_dict(d)


def link_doc(credit, window, publishes=3, holds=0, grants=(), drains=0, initial=2**32 - 2) -> dict:
    """A link-shape topology (AMQ-TOPOLOGY) with the given receiver policies."""
    d = doc("ring-one-held")
    d["graph"]["initial"] = initial
    d["nodes"][0]["publishes"] = publishes
    d["nodes"][2]["window"] = window
    d["nodes"][3].update(credit=credit, holds=holds, grants=list(grants), drains=drains)
    return d


def publish_doc(
    publishes=4, miw=2, mlc=2, soft=1, limit=None, removable=False, consumer=False
) -> dict:
    d = doc("rabbitmq4-publish")
    n = d["nodes"]
    n[0]["publishes"] = publishes
    n[2]["window"]["max_incoming_window"] = miw
    n[2]["credit"]["max_link_credit"] = mlc
    n[3].update(soft_limit=soft, max_length=limit, limit_removable=removable)
    if consumer:
        n[3]["consumer"] = {"mode": "credited"}
    return d


def consume_doc(ready=3, mqc=1, window=(2, 1), holds=0, drains=1, renew_on="arrival") -> dict:
    d = doc("rabbitmq4-consume")
    n = d["nodes"]
    n[0]["ready"] = ready
    n[1]["max_queue_credit"] = mqc
    n[2]["window"]["max_incoming_window"] = 2
    n[4].update(
        holds=holds,
        drains=drains,
        credit={
            "policy": "window",
            "window": window[0],
            "threshold": window[1],
            "renew_on": renew_on,
        },
    )
    return d


def holds(result: AmqpSearchResult) -> bool:
    return result.complete and result.violation is None


def violated(result: AmqpSearchResult) -> str | None:
    return None if result.violation is None else result.violation.prop


# -- the correct model holds on small instances ------------------------------------------------


def test_presets_hold_for_their_supply():
    """AMQ-PRESETS with RabbitMQ 4's numbers: no PROP-AMQ-* violated, the whole space
    searched (for the supply in the file, not for every supply)."""
    for name in ("rabbitmq4-publish", "rabbitmq4-consume"):
        assert holds(search(load_amqp_preset(name))), name


@pytest.mark.parametrize(
    ("miw", "mlc", "soft", "limit", "consumer"),
    [
        (1, 1, 1, None, False),
        (2, 2, 1, None, False),
        (3, 2, 2, None, True),
        (2, 3, 1, 2, True),
        (2, 2, 1, 1, True),
    ],
)
def test_rabbitmq4_publish_holds_at_small_sizes(miw, mlc, soft, limit, consumer):
    """PROP-AMQ-* on the publish shape with RabbitMQ 4's rules at small parameters
    (AMQ-RMQ-SESSION-WINDOW, AMQ-RMQ-LINK-CREDIT, AMQ-QQ-OVERFLOW, AMQ-QQ-SOFT-LIMIT)."""
    d = publish_doc(
        publishes=4,
        miw=miw,
        mlc=mlc,
        soft=soft,
        limit=limit,
        removable=limit is not None,
        consumer=consumer,
    )
    assert holds(search(topo(d)))


@pytest.mark.parametrize(
    ("mqc", "window", "hold", "renew_on"),
    [
        (1, (2, 1), 0, "arrival"),
        (2, (3, 1), 1, "arrival"),
        (2, (3, 1), 1, "settle"),
        (1, (3, 2), 2, "settle"),
    ],
)
def test_rabbitmq4_consume_holds_at_small_sizes(mqc, window, hold, renew_on):
    """PROP-AMQ-* on the consume shape (AMQ-RMQ-RELAY, AMQ-QQ-CREDITED) with a receiver
    that holds fewer deliveries than its credit window and drains once."""
    assert holds(search(topo(consume_doc(3, mqc, window, hold, 1, renew_on))))


def test_link_policies_hold_when_k_is_below_the_window():
    """PROP-AMQ-NO-STALL: a receiver holding k deliveries, k below its credit window and
    below its session buffer, keeps receiving under the correct policies (fixed window,
    ring with nothing held, capacity of 3 frames), over
    every combination enumerated here, with a drain and across the serial wrap."""
    credits = [
        {"policy": "window", "window": 3, "threshold": 1},
        {"policy": "window", "window": 3, "threshold": 1, "renew_on": "settle"},
    ]
    windows = [
        {"policy": "fixed", "window": 2, "threshold": 0},
        {"policy": "capacity", "capacity": 7, "frame": 2},
    ]
    for credit, window, k, drains in itertools.product(credits, windows, (0, 1, 2), (0, 1)):
        result = search(topo(link_doc(credit, window, publishes=4, holds=k, drains=drains)))
        assert holds(result), (
            credit,
            window,
            k,
            drains,
            result.violation and result.violation.steps,
        )
    assert holds(search(topo(link_doc(credits[0], {"policy": "ring", "slots": 2}, holds=0))))


# -- each property catches a broken rule -------------------------------------------------------

OK_LINK = link_doc(
    {"policy": "window", "window": 3, "threshold": 1},
    {"policy": "fixed", "window": 8, "threshold": 4},
    drains=1,
)


def test_credit_property_catches_a_sender_ignoring_credit(monkeypatch):
    """PROP-AMQ-CREDIT: a sender that sends without credit is caught at once."""
    assert holds(search(topo(OK_LINK)))
    monkeypatch.setattr(endpoints, "sender_may_send", lambda s: s.supply > 0)
    result = search(topo(OK_LINK))
    assert violated(result) == "PROP-AMQ-CREDIT" and result.violation.steps == ("send",)


def test_nonneg_catches_a_credit_formula_without_its_floor(monkeypatch):
    """PROP-AMQ-NONNEG: the receiver lowers its credit by hand while transfers are in
    flight; without the floor of AMQ-LINK-CREDIT-SND the sender's credit goes negative."""
    d = link_doc(None, {"policy": "fixed", "window": 8, "threshold": 4}, grants=(3, 1))
    assert violated(search(topo(d))) != "PROP-AMQ-NONNEG"
    real = link.link_credit_snd
    monkeypatch.setattr(
        link,
        "link_credit_snd",
        lambda a, b, c: real(a, b, c) if real(a, b, c) > 0 else b - (c - a) % 2**32,
    )
    result = search(topo(d))
    assert violated(result) == "PROP-AMQ-NONNEG"
    assert result.violation.steps == ("grant", "take_back", "send", "send", "grant", "take_back")


def test_agree_catches_a_relay_that_forgets_a_delivery(monkeypatch):
    """PROP-AMQ-AGREE: a relay that does not count a delivery toward the client's
    credit disagrees with the client once nothing is in flight."""
    d = consume_doc(2, 1, (3, 0), 0, 0)
    assert holds(search(topo(d)))
    real = relay.on_delivery_sent

    def forgetful(r, pol):
        r2, reqs = real(r, pol)
        return r2._replace(client_credit=r.client_credit), reqs

    monkeypatch.setattr(relay, "on_delivery_sent", forgetful)
    assert violated(search(topo(d))) == "PROP-AMQ-AGREE"


def test_drain_catches_a_sender_that_does_not_consume_its_credit(monkeypatch):
    """PROP-AMQ-DRAIN: a drain answer that keeps the count (credit not consumed)."""
    d = link_doc(
        {"policy": "window", "window": 3, "threshold": 1},
        {"policy": "fixed", "window": 8, "threshold": 4},
        publishes=1,
        drains=1,
    )
    assert holds(search(topo(d)))
    monkeypatch.setattr(
        link,
        "drain_done",
        lambda e: (e._replace(credit=0, drain=False), LinkFlow(e.delivery_count, 0, True)),
    )
    result = search(topo(d))
    assert result.violation is not None and "PROP-AMQ-DRAIN" in result.violation.props


def test_no_stall_catches_a_fixed_window_that_is_not_renewed(monkeypatch):
    """PROP-AMQ-NO-STALL: the fixed session window without its renewal."""
    d = link_doc(
        {"policy": "window", "window": 3, "threshold": 1},
        {"policy": "fixed", "window": 2, "threshold": 0},
    )
    assert holds(search(topo(d)))
    real = session.received

    def never(policy, s, ids, buffered):
        s2, _ = real(policy, s, ids, buffered)
        return s2._replace(incoming_window=s.incoming_window - 1), False

    monkeypatch.setattr(session, "received", never)
    result = search(topo(d))
    assert violated(result) == "PROP-AMQ-NO-STALL"
    assert result.violation.states[-1].receiver.arrivals == 2


def test_publisher_go_catches_a_queue_that_never_sends_go(monkeypatch):
    """PROP-AMQ-PUBLISHER-GO: a queue that blocks but never lets the enqueuer go."""
    d = publish_doc(publishes=4, limit=1, consumer=True)
    assert holds(search(topo(d)))
    real = queue.evaluate_limit
    monkeypatch.setattr(
        queue,
        "evaluate_limit",
        lambda o, b, r, p: (lambda res: (res[0], tuple(m for m in res[1] if m != "go")))(
            real(o, b, r, p)
        ),
    )
    assert violated(search(topo(d))) == "PROP-AMQ-PUBLISHER-GO"


def test_bounds_catches_a_broker_granting_regardless_of_unconfirmed(monkeypatch):
    """PROP-AMQ-BOUNDS: AMQ-RMQ-LINK-CREDIT without ``unconfirmed < max_link_credit``
    lets unconfirmed pass 2 · max_link_credit − 1."""
    d = publish_doc(publishes=5, miw=8, mlc=2)
    assert holds(search(topo(d)))
    monkeypatch.setattr(system, "broker_may_grant", lambda b, c: b.link.credit <= c // 2)
    assert violated(search(topo(d))) == "PROP-AMQ-BOUNDS"


def test_conservation_catches_an_enqueue_that_loses_the_message(monkeypatch):
    """PROP-AMQ-CONSERVATION: an enqueue that drops the command."""
    d = publish_doc()
    monkeypatch.setattr(queue, "enqueue", lambda e, seq, pol: e)
    result = search(topo(d))
    assert violated(result) == "PROP-AMQ-CONSERVATION"
    assert result.violation.steps == ("take_back", "send", "take_fwd")


def test_every_property_is_checked():
    """PROP-AMQ-*: the search checks the state properties and NO-STALL; the list is the spec's."""
    spec = (ROOT / "spec" / "amqp.md").read_text()
    ids = [line.split()[1] for line in spec.splitlines() if line.startswith("### PROP-AMQ-")]
    assert tuple(ids) == properties.ALL


# -- the stall shapes --------------------------------------------------------------------------

STALL_SHAPES = {
    # name: (property, shortest witness length, fix applied to the document)
    "session-window-never-renewed": (
        "PROP-AMQ-NO-STALL",
        8,
        lambda d: d["nodes"][2].update(window={"policy": "fixed", "window": 2, "threshold": 0}),
    ),
    "ring-one-held": ("PROP-AMQ-NO-STALL", 7, lambda d: d["nodes"][3].update(holds=0)),
    "credit-as-delta": (
        "PROP-AMQ-AGREE",
        6,
        lambda d: d["nodes"][3]["credit"].update(encoding="absolute"),
    ),
    "regrant-ignores-in-flight": (
        "PROP-AMQ-AGREE",
        8,
        lambda d: d["nodes"][0].pop("sender_credit"),
    ),
    "threshold-reset-by-grant": (
        "PROP-AMQ-NO-STALL",
        6,
        lambda d: d["nodes"][3]["credit"].update(count="credit"),
    ),
    "limit-removed-no-go": (
        "PROP-AMQ-PUBLISHER-GO",
        9,
        lambda d: d["nodes"][3].update(go_on_limit_removed=True),
    ),
}


@pytest.mark.parametrize("name", sorted(STALL_SHAPES))
def test_stall_shape_found_with_shortest_witness_and_fixed_holds(name):
    """Each shipped stall shape violates its property with a witness of the stated
    length (BFS: no shorter one exists), and the same topology with the correct policy
    holds (AMQ-POL-WINDOW-NEVER, AMQ-POL-WINDOW-RING, AMQ-POL-CREDIT-WINDOW,
    AMQ-POL-SENDER-CREDIT, AMQ-QQ-OVERFLOW)."""
    prop, length, fix = STALL_SHAPES[name]
    result = search(load_amqp_preset(name))
    assert violated(result) == prop and len(result.violation.steps) == length
    # replaying the witness reaches the violating state through enabled actions only
    t = load_amqp_preset(name)
    s = system.initial_state(t)
    for action in result.violation.steps:
        s = system.step(t, s, action)
    assert s == result.violation.states[-1]
    fixed = copy.deepcopy(doc(name))
    fix(fixed)
    assert holds(search(topo(fixed))), name


def test_ring_stall_is_reached_at_every_ring_size_with_one_held():
    """AMQ-POL-WINDOW-RING: with one delivery held, a ring of N slots stalls after N
    transfers, whatever N (small sizes enumerated), and the witness grows with N."""
    lengths = []
    for n in (1, 2, 3, 4):
        d = link_doc(
            {"policy": "window", "window": 8, "threshold": 4},
            {"policy": "ring", "slots": n},
            publishes=n + 1,
            holds=1,
        )
        result = search(topo(d))
        assert violated(result) == "PROP-AMQ-NO-STALL"
        s = result.violation.states[-1]
        assert isinstance(s, system.LinkState) and s.receiver.arrivals == n
        lengths.append(len(result.violation.steps))
    assert lengths == sorted(lengths) and len(set(lengths)) == 4


def test_delta_credit_also_stalls_or_overruns_beyond_agreement():
    """AMQ-POL-CREDIT-WINDOW encoding delta: beyond the disagreement BFS reports first,
    the sender ends up with less credit than the receiver believes it granted."""
    t = load_amqp_preset("credit-as-delta")
    s = search(t).violation.states[-1]
    assert isinstance(s, system.LinkState)
    assert s.sender.link.credit < s.receiver.link.credit
    assert s.sender.link == LinkEnd(s.receiver.link.delivery_count, s.sender.link.credit)
