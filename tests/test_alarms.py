"""AL-*: the alarm model, its properties over explored state spaces, a Hypothesis machine,
and broken readers (the historical bugs) that the properties catch."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from creditflow.conformance.explore.explorer import NO_DEADLOCK, explore
from creditflow.model.alarms.properties import (
    BLOCK_ON_PUBLISH,
    BLOCKED_ONCE,
    CHANNEL_FLOW,
    CLUSTER,
    CONSUMERS,
    UNBLOCKED,
    WATERMARK,
    AlarmProperties,
)
from creditflow.model.alarms.rules import (
    ACTION_NAMES,
    ACTION_SHIFT,
    BLOCKED,
    DISK,
    MEMORY,
    PROFILE_2008,
    AlarmConfig,
    AlarmModel,
    ConnectionSpec,
    Notice,
    reported_state,
    watermark_alarm,
)
from creditflow.model.alarms.system import CheckedAlarms
from tests.model_steps import apply_steps
from tests.stateful_machines import machine_test_case

PUB = ConnectionSpec("pub", publishes=3)
CON = ConnectionSpec("con", consumes=True)


def explored(config, model=None):
    system = CheckedAlarms(config, model=model)
    result = explore(system, max_states=300_000)
    assert result.complete
    return system, result


#: Memory over the watermark on the one node, read by the next tick: the alarm is set.
MEMORY_ALARM = (("mem_up", "rabbit@n1"), ("mem_up", "rabbit@n1"), ("tick", "rabbit@n1"))


def run(model, state, *steps):
    """Apply named steps in order; the final state and every notice sent."""
    return apply_steps(model, state, steps, lambda outcome: outcome.notices)


def test_watermark_is_strict_without_hysteresis():
    """AL-WATERMARK: alarm iff used > limit, the same threshold both ways."""
    assert [watermark_alarm(u, 2) for u in (1, 2, 3, 2, 1)] == [False, False, True, False, False]


def test_initial_state():
    """AL-INIT, AL-REGISTER: nothing written, everyone running, no alarm unless the
    initial use is over the watermark."""
    s = AlarmModel(AlarmConfig((PUB, CON))).initial()
    assert s.alarms == 0 and s.queue == 0
    assert [reported_state(c) for c in s.conns] == ["running", "running"]
    assert all(c.written == c.read == 0 and not c.sent for c in s.conns)


def test_publisher_blocks_on_its_first_content_frame():
    """AL-BLOCK-ON-PUBLISH, AL-READ-FRAME, AL-REPORTED-STATE, AL-PUBLISH, AL-MEMORY,
    AL-BLOCKED-ONCE: after an alarm the publisher's reader is 'blocking' until it
    post-processes a header, then 'blocked' with one connection.blocked; it reads nothing
    more; the body waits."""
    model = AlarmModel(AlarmConfig((PUB, CON)))
    s, notices = run(model, model.initial(), *MEMORY_ALARM)
    assert notices == [] and [reported_state(c) for c in s.conns] == ["blocking", "blocking"]
    s, notices = run(model, s, ("publish", "pub"), ("publish", "pub"), ("read_frame", "pub"))
    assert notices == [Notice("connection.blocked", "pub", "low on memory")]
    assert s.conns[0].state == BLOCKED and s.queue == 0
    assert model.encode("read_frame", "pub") not in set(model.enabled(s))  # AL-NO-READ
    s, notices = run(model, s, ("mem_down", "rabbit@n1"), ("tick", "rabbit@n1"))
    assert notices == [Notice("connection.unblocked", "pub")]
    s, _ = run(model, s, ("read_frame", "pub"), ("read_frame", "pub"), ("read_frame", "pub"))
    assert s.queue == 2


def test_empty_body_lets_one_publish_through_per_episode():
    """AL-ONE-PUBLISH: with empty bodies the first publish after an alarm completes at its
    header, then the reader blocks."""
    pub = ConnectionSpec("pub", publishes=3, empty_body=True)
    model = AlarmModel(AlarmConfig((pub,), initial_used=2))
    s, _ = run(model, model.initial(), ("publish", "pub"), ("publish", "pub"))
    s, _ = model.settle(s)
    assert s.queue == 1 and s.conns[0].state == BLOCKED


def test_second_source_sends_no_second_blocked_and_unblock_waits_for_all():
    """AL-CLUSTER, AL-BLOCKED-ONCE, AL-UNBLOCKED: memory then disk: one connection.blocked
    (reason names what was on when it was sent); clearing memory unblocks nothing; clearing
    disk too sends connection.unblocked (AL2: set, not boolean)."""
    model = AlarmModel(AlarmConfig((PUB,), initial_used=2, disk=True))
    s, notices = run(
        model, model.initial(), ("publish", "pub"), ("read_frame", "pub"), ("disk_set", "rabbit@n1")
    )
    assert notices == [Notice("connection.blocked", "pub", "low on memory")]
    s, notices = run(
        model, s, ("mem_down", "rabbit@n1"), ("mem_down", "rabbit@n1"), ("tick", "rabbit@n1")
    )
    assert notices == [] and s.conns[0].state == BLOCKED and s.conns[0].blocked_by == DISK
    s, notices = run(model, s, ("disk_clear", "rabbit@n1"))
    assert notices == [Notice("connection.unblocked", "pub")]


def test_alarms_are_cluster_wide_and_die_with_their_node():
    """AL-CLUSTER, AL-NODE-DOWN, AL-REGISTER (AL1): an alarm on node b blocks a publisher on
    node a; clearing needs every node clear; a node going down clears its alarms."""
    pub = ConnectionSpec("pub", publishes=2)
    cfg = AlarmConfig((pub,), nodes=("a", "b"), node_down=True, disk=True)
    model = AlarmModel(cfg)
    s, _ = run(
        model,
        model.initial(),
        ("disk_set", "a"),
        ("disk_set", "b"),
        ("publish", "pub"),
        ("read_frame", "pub"),
    )
    assert s.conns[0].state == BLOCKED
    s, notices = run(model, s, ("disk_clear", "a"))
    assert notices == [] and s.conns[0].state == BLOCKED
    s, notices = run(model, s, ("node_down", "b"))
    assert notices == [Notice("connection.unblocked", "pub")]
    assert model.initial().conns[0].blocked_by == 0
    alarmed = AlarmModel(AlarmConfig((pub,), nodes=("a", "b"), initial_used=2)).initial()
    assert alarmed.conns[0].blocked_by == MEMORY  # register returns the current set


def test_no_capability_no_frames():
    """AL-CAPABILITY: a client that does not advertise connection.blocked is blocked all the
    same but gets no frame."""
    pub = ConnectionSpec("pub", publishes=2, capability=False)
    model = AlarmModel(AlarmConfig((pub,), initial_used=2))
    s, notices = run(model, model.initial(), ("publish", "pub"), ("read_frame", "pub"))
    assert s.conns[0].state == BLOCKED and notices == []


def test_2008_profile_sends_channel_flow_to_everyone_and_never_stops_reading():
    """AL-CHANNEL-FLOW: seed 001's server: channel.flow(false) to every connection,
    consumers included; the reader keeps reading; a complying client stops publishing."""
    rude = ConnectionSpec("rude", publishes=2, complies=False)
    model = AlarmModel(AlarmConfig((PUB, CON, rude), profile=PROFILE_2008))
    s, notices = run(model, model.initial(), *MEMORY_ALARM)
    assert notices == [Notice("channel.flow", n, "active=false") for n in ("pub", "con", "rude")]
    assert model.encode("publish", "pub") not in set(model.enabled(s))
    s, _ = run(model, s, ("publish", "rude"), ("read_frame", "rude"), ("read_frame", "rude"))
    assert s.queue == 1  # the broker cannot stop a client that does not comply


CONFIGS = {
    "one-node": AlarmConfig((PUB, CON), disk=True),
    "watermarks": AlarmConfig((PUB, CON), watermarks=(0, 2)),
    "two-nodes": AlarmConfig(
        (
            ConnectionSpec("pub", publishes=1),
            ConnectionSpec("p2", node=1, publishes=1, empty_body=True, capability=False),
        ),
        nodes=("a", "b"),
        disk=True,
        node_down=True,
    ),
    "2008": AlarmConfig(
        (PUB, CON, ConnectionSpec("rude", publishes=1, complies=False)), profile=PROFILE_2008
    ),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_explored_configurations_satisfy_every_property(name):
    """AL-CLUSTER, AL-BLOCK-ON-PUBLISH, AL-CONSUMERS, AL-UNBLOCKED, AL-NOTHING-LOST,
    AL-CHANNEL-FLOW, AL-WATERMARK, AL-BLOCKED-ONCE and PROP-NO-DEADLOCK (a blocked
    publisher can always be unblocked) on every reachable state."""
    _, result = explored(CONFIGS[name])
    assert result.findings == {}
    assert NO_DEADLOCK in result.property_ids


# -- broken readers ---------------------------------------------------------------------------


class BooleanBlockedBy(AlarmModel):
    """AL2 (MQTT/STOMP before PR #14795): one boolean instead of a set of sources."""

    def _alarm_changed(self, state, node, source, on, out):
        state = super()._alarm_changed(state, node, source, on, out)
        if on:
            return state
        conns = [
            self._control_throttle(i, c._replace(blocked_by=0), out) if c.blocked_by else c
            for i, c in enumerate(state.conns)
        ]
        return state._replace(conns=tuple(conns))


class ResendsBlocked(AlarmModel):
    """Forgets that connection.blocked was sent."""

    def _maybe_block(self, i, cs, out):
        return super()._maybe_block(i, cs._replace(sent=False), out)


class BlocksEveryone(AlarmModel):
    """Blocks readers as soon as an alarm is on, publishing or not (pre-2.0 style)."""

    def _control_throttle(self, i, cs, out):
        return super()._control_throttle(i, cs._replace(should_block=bool(cs.blocked_by)), out)


class BlocksPublishersAtOnce(AlarmModel):
    """Blocks a publishing connection when the alarm fires, before it sends anything."""

    def _control_throttle(self, i, cs, out):
        cs = super()._control_throttle(i, cs, out)
        if self.specs[i].publishes and cs.blocked_by:
            cs = cs._replace(state=BLOCKED)
        return cs


class Hysteresis(AlarmModel):
    """Clears the memory alarm only below limit - 1."""

    def tick(self, state, n):
        outcome = super().tick(state, n)
        if state.used[n] == state.limit[n]:
            return type(outcome)(state, ())
        return outcome


class ForgetsUnblocked(AlarmModel):
    def _maybe_unblock(self, i, cs, out):
        before = len(out)
        cs = super()._maybe_unblock(i, cs, out)
        del out[before:]
        return cs


class IgnoresFlow(AlarmModel):
    """2008: a 'complying' client that publishes anyway."""

    def enabled(self, state):
        yield from super().enabled(state)
        for i, cs in enumerate(state.conns):
            if cs.to_publish > 0 and not cs.flow_active:
                yield 7 << 20 | i


@pytest.mark.parametrize(
    "mutant,config,caught",
    [
        (BooleanBlockedBy, "one-node", {CLUSTER}),
        (ResendsBlocked, "one-node", {BLOCKED_ONCE}),
        (BlocksEveryone, "one-node", {CONSUMERS}),
        (BlocksPublishersAtOnce, "one-node", {BLOCK_ON_PUBLISH}),
        (Hysteresis, "watermarks", {WATERMARK}),
        (ForgetsUnblocked, "one-node", {UNBLOCKED}),
        (IgnoresFlow, "2008", {CHANNEL_FLOW}),
    ],
)
def test_each_property_catches_a_broken_reader(mutant, config, caught):
    """AL-CLUSTER, AL-BLOCKED-ONCE, AL-CONSUMERS, AL-BLOCK-ON-PUBLISH, AL-WATERMARK,
    AL-UNBLOCKED, AL-CHANNEL-FLOW each reject a reader broken in their way."""
    cfg = CONFIGS[config]
    _, result = explored(cfg, model=mutant(cfg))
    assert caught <= set(result.findings), set(result.findings)


# -- Hypothesis machine ----------------------------------------------------------------------


@st.composite
def alarm_configs(draw):
    n_nodes = draw(st.integers(1, 2))
    conns = []
    for i in range(draw(st.integers(1, 3))):
        publishes = draw(st.integers(0, 4))
        conns.append(
            ConnectionSpec(
                f"c{i}",
                node=draw(st.integers(0, n_nodes - 1)),
                publishes=publishes,
                consumes=publishes == 0 or draw(st.booleans()),
                capability=draw(st.booleans()) or draw(st.booleans()),
                empty_body=draw(st.booleans()),
                complies=draw(st.booleans()),
                starts_later=draw(st.booleans()),
            )
        )
    return AlarmConfig(
        tuple(conns),
        nodes=tuple(f"n{i}" for i in range(n_nodes)),
        limit=draw(st.integers(0, 2)),
        max_used=draw(st.integers(1, 3)),
        initial_used=draw(st.integers(0, 1)),
        watermarks=draw(st.sampled_from([(), (0, 3), (1, 64, 100)])),
        disk=draw(st.booleans()),
        node_down=draw(st.booleans()),
        profile=draw(st.sampled_from(["3.10.8", "3.10.8", PROFILE_2008])),
    )


class AlarmMachine(RuleBasedStateMachine):
    """Every AL state and step property along random runs of random configurations; the
    notices a client receives alternate blocked/unblocked, starting with blocked."""

    @initialize(config=alarm_configs())
    def build(self, config):
        self.model = AlarmModel(config)
        self.properties = AlarmProperties(self.model)
        self.state = self.model.initial()
        self.frames = {c.name: [] for c in config.connections}

    @precondition(lambda self: hasattr(self, "model") and any(self.model.enabled(self.state)))
    @rule(data=st.data())
    def step(self, data):
        action = data.draw(st.sampled_from(list(self.model.enabled(self.state))))
        outcome = self.model.apply(self.state, action)
        assert self.properties.step_violations(self.state, action, outcome) == ()
        for n in outcome.notices:
            self.frames[n.connection].append(n.method)
        self.state = outcome.state

    @precondition(lambda self: hasattr(self, "model"))
    @rule()
    def idle(self):
        """Nothing happens (keeps runs going where nothing is enabled)."""

    @precondition(lambda self: hasattr(self, "model"))
    @invariant()
    def one_action_guard_agrees_with_the_listing(self):
        """AL-ACTIONS: ``is_enabled`` judges every action (every kind, every index in
        range and one past it) exactly as ``enabled`` lists them."""
        listed = set(self.model.enabled(self.state))
        config = self.model.config
        indices = max(len(config.connections), len(config.nodes) * max(1, len(config.watermarks)))
        for kind in range(len(ACTION_NAMES)):
            for index in range(indices + 1):
                action = kind << ACTION_SHIFT | index
                assert self.model.is_enabled(self.state, action) == (action in listed), (
                    self.model.describe(action) if action in listed else action
                )

    @precondition(lambda self: hasattr(self, "model"))
    @invariant()
    def properties_hold(self):
        assert self.properties.violations(self.state) == ()
        for frames in self.frames.values():
            got = [f for f in frames if f.startswith("connection.")]
            assert got == ["connection.blocked", "connection.unblocked"] * (len(got) // 2) + (
                ["connection.blocked"] if len(got) % 2 else []
            )


TestAlarmMachine = machine_test_case(AlarmMachine, max_examples=150, steps=50)
