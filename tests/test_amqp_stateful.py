"""A Hypothesis stateful machine over the AMQP transition system (AMQ-TS): random
correct topologies of the three shapes, random enabled actions in any interleaving,
every PROP-AMQ-* state property checked after every step, plus an oracle kept outside
the model: messages reach the receiving application once each and in order
(PROP-AMQ-CONSERVATION), and on the link shape the sender's delivery-count leads the
receiver's by exactly the transfers on the wire (AMQ-LINK-TRANSFER, AMQ-SERIAL)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from creditflow.conformance.inputs.amqp_topologies import topology_from_dict
from creditflow.model.amqp import properties, system
from creditflow.model.amqp.frames import Transfer
from creditflow.model.amqp.serial import diff
from creditflow.model.amqp.topology import Topology

SHAPES = Path(__file__).resolve().parents[1] / "spec" / "graphs" / "amqp"


def _doc(name: str) -> dict:
    return json.loads((SHAPES / f"{name}.json").read_text())


@st.composite
def topologies(draw) -> Topology:
    shape = draw(st.sampled_from(["link", "publish", "consume"]))
    initial = draw(st.sampled_from([0, 2**32 - 1, 2**32 - 3]))
    w = draw(st.integers(1, 4))
    credit = {
        "policy": "window",
        "window": w,
        "threshold": draw(st.integers(0, w - 1)),
        "renew_on": draw(st.sampled_from(["arrival", "settle"])),
    }
    if shape == "link":
        d = copy.deepcopy(_doc("ring-one-held"))
        d["nodes"][0]["publishes"] = draw(st.integers(1, 8))
        d["nodes"][2]["window"] = draw(
            st.sampled_from(
                [
                    {"policy": "fixed", "window": 2, "threshold": 0},
                    {"policy": "fixed", "window": 5, "threshold": 2},
                    {"policy": "capacity", "capacity": 9, "frame": 2},
                    {"policy": "ring", "slots": 3},
                ]
            )
        )
        held = 0 if d["nodes"][2]["window"]["policy"] == "ring" else draw(st.integers(0, w - 1))
        d["nodes"][3].update(credit=credit, holds=held, drains=draw(st.integers(0, 2)))
    elif shape == "publish":
        d = copy.deepcopy(_doc("rabbitmq4-publish"))
        d["nodes"][0]["publishes"] = draw(st.integers(1, 10))
        d["nodes"][2]["window"]["max_incoming_window"] = draw(st.integers(1, 5))
        d["nodes"][2]["credit"]["max_link_credit"] = draw(st.integers(1, 5))
        limit = draw(st.sampled_from([None, 1, 2, 4]))
        d["nodes"][3].update(
            soft_limit=draw(st.integers(1, 3)),
            max_length=limit,
            limit_removable=limit is not None and draw(st.booleans()),
            consumer={"mode": "credited"},
        )
    else:
        d = copy.deepcopy(_doc("rabbitmq4-consume"))
        d["nodes"][0]["ready"] = draw(st.integers(1, 8))
        d["nodes"][1]["max_queue_credit"] = draw(st.integers(1, 4))
        d["nodes"][2]["window"]["max_incoming_window"] = draw(st.integers(1, 4))
        d["nodes"][4].update(
            credit=credit, holds=draw(st.integers(0, w - 1)), drains=draw(st.integers(0, 2))
        )
    d["graph"]["initial"] = initial
    return topology_from_dict(d)


class AmqpMachine(RuleBasedStateMachine):
    """Random enabled actions over a random correct topology, checked after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.t: Topology | None = None
        self.state: system.State | None = None
        self.received: list[int] = []

    @initialize(t=topologies())
    def start(self, t: Topology) -> None:
        self.t = t
        self.state = system.initial_state(t)

    @rule(pick=st.integers(0, 20))
    def act(self, pick: int) -> None:
        assert self.t is not None and self.state is not None
        succ = system.successors(self.t, self.state)
        if not succ:
            assert not properties.stalled(self.t, self.state), "PROP-AMQ-NO-STALL"
            return
        action, nxt = succ[pick % len(succ)]
        if action == "take_fwd" and not isinstance(self.state, system.PublishState):
            head = self.state.fwd[0]
            if isinstance(head, Transfer):
                self.received.append(head.seq)
        assert system.step(self.t, self.state, action) == nxt  # AMQ-TS: deterministic
        self.state = nxt

    @invariant()
    def properties_hold(self) -> None:
        if self.t is not None and self.state is not None:
            assert properties.state_violations(self.t, self.state) == ()

    @invariant()
    def delivered_once_in_order(self) -> None:
        assert self.received == sorted(set(self.received))

    @invariant()
    def counts_lead_by_the_wire(self) -> None:
        s = self.state
        if isinstance(s, system.LinkState):
            on_wire = sum(1 for f in s.fwd if isinstance(f, Transfer))
            lead = diff(s.sender.link.delivery_count, s.receiver.link.delivery_count)
            # a drain answer on the wire also advances the sender's count
            assert lead >= on_wire


TestAmqpMachine = AmqpMachine.TestCase
TestAmqpMachine.settings = settings(max_examples=80, stateful_step_count=40, deadline=None)
