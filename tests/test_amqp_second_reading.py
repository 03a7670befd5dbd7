"""creditflow against a second reading of spec/amqp.md (issue 38; AMQ-TS, AMQ-READING).

``tests/amqp_second_reading.py`` implements the ``link`` shape from the spec alone, with
its own search. On seeded random small link topologies (credit policies × session
window policies × drains × hand grants × supplies, across the serial wrap) both must
agree on the reachable states (as the spec names their components), on every property
violated somewhere and the length of its shortest witness, and on creditflow's own
verdict (``search``: its first violation is one of the shortest ones)."""

from __future__ import annotations

import random
from collections import deque

from creditflow.conformance.families.amqp.checking import search
from creditflow.conformance.inputs.amqp_topologies import topology_from_dict
from creditflow.model.amqp import properties, system
from creditflow.model.amqp.frames import Flow, Transfer
from creditflow.model.amqp.policies import CreditWindow
from creditflow.model.amqp.topology import Topology
from tests.amqp_second_reading import STALL, Answer, explore

SEED = 38
CASES = 400
WRAPS = (0, 2**32 - 1, 2**32 - 2, 2**32 - 3)


def random_document(rng: random.Random) -> dict:
    """A small ``link`` topology (AMQ-TOPOLOGY)."""
    if rng.random() < 0.8:
        w = rng.randint(1, 3)
        credit: dict | None = {
            "policy": "window",
            "window": w,
            "threshold": rng.randint(0, w - 1),
            "count": rng.choice(["credit", "since_grant", "outstanding"]),
            "encoding": rng.choice(["absolute", "delta"]),
            "renew_on": rng.choice(["arrival", "settle"]),
        }
        grants = [rng.randint(0, 3) for _ in range(rng.choice([0, 0, 1]))]
    else:
        credit = None
        grants = [rng.randint(0, 3) for _ in range(rng.randint(1, 2))]
    kind = rng.choice(["fixed", "never", "ring", "capacity", "rabbitmq4"])
    if kind == "fixed":
        w = rng.randint(1, 3)
        window: dict = {"policy": "fixed", "window": w, "threshold": rng.randint(0, w - 1)}
    elif kind == "never":
        window = {"policy": "never", "window": rng.randint(1, 4)}
    elif kind == "ring":
        window = {"policy": "ring", "slots": rng.randint(1, 3)}
    elif kind == "capacity":
        window = {"policy": "capacity", "capacity": rng.randint(0, 4), "frame": rng.randint(1, 2)}
    else:
        window = {"policy": "rabbitmq4", "max_incoming_window": rng.randint(1, 4)}
    sender: dict = {"id": "s", "kind": "endpoint", "role": "sender"}
    sender["publishes"] = rng.randint(1, 3)
    if rng.random() < 0.2:
        sender["sender_credit"] = {"formula": "ignore_in_flight"}
    sw = rng.choice([(8, 4), (2, 0), (1, 0)])
    receiver = {
        "id": "r",
        "kind": "endpoint",
        "role": "receiver",
        "holds": rng.randint(0, 1),
        "credit": credit,
        "grants": grants,
        "drains": rng.choice([0, 0, 1, 2]),
    }
    return {
        "graph": {"family": "amqp", "name": "second-reading", "initial": rng.choice(WRAPS)},
        "nodes": [
            sender,
            {
                "id": "ss",
                "kind": "session",
                "window": {"policy": "fixed", "window": sw[0], "threshold": sw[1]},
            },
            {"id": "rs", "kind": "session", "window": window},
            receiver,
        ],
        "edges": [
            {"source": "s", "target": "ss"},
            {"source": "ss", "target": "rs"},
            {"source": "rs", "target": "r"},
        ],
    }


def _frame(f: Transfer | Flow | object, toward_receiver: bool) -> tuple:
    if isinstance(f, Transfer):
        return ("T", f.seq)
    assert isinstance(f, Flow)
    if toward_receiver:
        assert f.link is not None and f.session is None
        return ("F", f.link.delivery_count, f.link.credit, f.link.drain)
    assert f.session is not None
    link = None if f.link is None else (f.link.delivery_count, f.link.credit, f.link.drain)
    return ("F", f.session.next_incoming_id, f.session.incoming_window, link)


def observe(t: Topology, s: system.LinkState) -> tuple:
    """A model state as the spec names its components (the second reading's tuple)."""
    snd, rcv = s.sender, s.receiver
    counted = (
        rcv.since_grant
        if isinstance(t.receiver.credit, CreditWindow) and t.receiver.credit.count == "since_grant"
        else 0
    )
    assert not snd.link.echo and not rcv.link.echo
    return (
        snd.link.delivery_count,
        snd.link.credit,
        snd.link.drain,
        snd.supply,
        snd.overrun,
        snd.session.next_outgoing_id,
        snd.session.remote_incoming_window,
        tuple(_frame(f, True) for f in s.fwd),
        rcv.link.delivery_count,
        rcv.link.credit,
        rcv.link.drain,
        rcv.unsettled,
        rcv.settled,
        rcv.session.next_incoming_id,
        rcv.session.incoming_window,
        rcv.grants_used,
        rcv.drains_used,
        rcv.drained,
        counted,
        tuple(_frame(f, False) for f in s.back),
    )


def creditflow_answer(t: Topology) -> Answer:
    """creditflow's side: a plain BFS over the model's successor function (AMQ-TS) with
    the model's property predicates (PROP-AMQ-*), the whole space, no stop."""
    start = system.initial_state(t)
    depth = {start: 0}
    todo = deque([start])
    shortest: dict[str, int] = {}
    while todo:
        s = todo.popleft()
        found = list(properties.state_violations(t, s))
        if properties.stalled(t, s):
            found.append(STALL)
        for p in found:
            shortest.setdefault(p, depth[s])
        for _, n in system.successors(t, s):
            if n not in depth:
                depth[n] = depth[s] + 1
                todo.append(n)
    seen = frozenset(observe(t, s) for s in depth if isinstance(s, system.LinkState))
    return Answer(seen, shortest)


def test_second_reading_agrees_with_creditflow_on_random_link_topologies():
    """AMQ-TS, AMQ-READING: same reachable states, same properties violated with the
    same shortest witness lengths, and creditflow's verdict one of those witnesses."""
    rng = random.Random(SEED)
    violating = 0
    for case in range(CASES):
        doc = random_document(rng)
        t = topology_from_dict(doc)
        ours, theirs = explore(doc), creditflow_answer(t)
        where = f"case {case}: {doc['nodes'][2]['window']} {doc['nodes'][3]}"
        assert len(ours.states) == len(theirs.states), where
        assert ours.states == theirs.states, where
        assert dict(ours.shortest) == dict(theirs.shortest), where
        verdict = search(t)
        if verdict.violation is None:
            assert verdict.complete and not ours.shortest, where
        else:
            violating += 1
            length = len(verdict.violation.steps)
            assert length == min(ours.shortest.values()), where
            assert ours.shortest[verdict.violation.prop] == length, where
    # the random topologies reach both verdicts (the comparison is not vacuous)
    assert 0 < violating < CASES


def test_second_reading_sees_each_decided_reading():
    """The second reading states the readings of AMQ-READING: the smallest topologies of
    tests/test_amqp_model.py give the same figures here."""
    base = random_document(random.Random(0))
    base["graph"]["initial"] = 0
    base["nodes"][0].pop("sender_credit", None)
    fixed = {"policy": "fixed", "window": 8, "threshold": 4}
    base["nodes"][1]["window"] = fixed

    def doc(credit: dict, window: dict = fixed, **receiver: int) -> dict:
        d = {**base, "nodes": [dict(n) for n in base["nodes"]]}
        d["nodes"][0]["publishes"] = receiver.pop("publishes", 1)
        d["nodes"][2]["window"] = window
        d["nodes"][3].update({"credit": credit, "grants": [], "holds": 0, "drains": 0, **receiver})
        return d

    settle_count = doc(
        {
            "policy": "window",
            "window": 2,
            "threshold": 0,
            "count": "since_grant",
            "renew_on": "settle",
        },
        publishes=3,
        holds=1,
    )
    assert explore(settle_count).shortest == {STALL: 6}
    drain = doc(
        {"policy": "window", "window": 1, "threshold": 0, "renew_on": "settle"},
        publishes=2,
        drains=1,
    )
    answer = explore(drain)
    assert len(answer.states) == 56 and not answer.shortest
    assert (
        len(explore(doc({"policy": "window", "window": 1, "threshold": 0}, drains=1)).states) == 47
    )
    one = doc(
        {"policy": "window", "window": 1, "threshold": 0},
        {"policy": "fixed", "window": 1, "threshold": 0},
        holds=1,
    )
    assert len(explore(one).states) == 5
