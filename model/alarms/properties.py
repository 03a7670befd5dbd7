"""What must hold of alarms (AL-*), as state and step predicates over the alarm model."""

from __future__ import annotations

from creditflow.model.alarms.rules import (
    ACTION_SHIFT,
    BLOCKED,
    GOT_BLOCKED,
    MEMORY,
    NODE_DOWN,
    PUBLISH,
    SET_WATERMARK,
    TICK,
    AlarmModel,
    AlarmState,
    Outcome,
    alarm_bit,
    watermark_alarm,
)

CLUSTER = "AL-CLUSTER"
BLOCK_ON_PUBLISH = "AL-BLOCK-ON-PUBLISH"
CONSUMERS = "AL-CONSUMERS"
UNBLOCKED = "AL-UNBLOCKED"
NOTHING_LOST = "AL-NOTHING-LOST"
CHANNEL_FLOW = "AL-CHANNEL-FLOW"
WATERMARK = "AL-WATERMARK"
BLOCKED_ONCE = "AL-BLOCKED-ONCE"

STATE_PROPERTIES = (CLUSTER, BLOCK_ON_PUBLISH, CONSUMERS, UNBLOCKED, NOTHING_LOST, CHANNEL_FLOW)
STEP_PROPERTIES = (WATERMARK, BLOCKED_ONCE)


class AlarmProperties:
    def __init__(self, model: AlarmModel) -> None:
        self.model = model

    def violations(self, state: AlarmState) -> tuple[str, ...]:
        m = self.model
        bad: list[str] = []
        live = [
            (i, cs, spec)
            for i, (cs, spec) in enumerate(zip(state.conns, m.specs, strict=True))
            if state.up[spec.node]
        ]
        if m.classic:
            sources = m.cluster_sources(state)
            # AL-CLUSTER: every reader knows exactly the sources alarmed on any node
            if any(cs.blocked_by != sources for _, cs, _ in live):
                bad.append(CLUSTER)
            # AL-BLOCK-ON-PUBLISH: blocked only after a content frame under an alarm
            if any(
                cs.state == BLOCKED and not (cs.should_block and cs.blocked_by) for _, cs, _ in live
            ):
                bad.append(BLOCK_ON_PUBLISH)
            # AL-UNBLOCKED: connection.blocked stands only while some source is alarmed,
            # and the throttle remembers it was sent
            if any(
                (cs.sent and not cs.blocked_by)
                or (spec.capability and (cs.last_notice == GOT_BLOCKED) != cs.sent)
                or (not spec.capability and cs.last_notice != 0)
                for _, cs, spec in live
            ):
                bad.append(UNBLOCKED)
        else:
            # AL-CHANNEL-FLOW: each connection was last told active iff its node has no
            # memory alarm; the reader never blocks
            if any(
                cs.flow_active == bool(state.alarms & alarm_bit(spec.node, MEMORY))
                or cs.state == BLOCKED
                for _, cs, spec in live
            ):
                bad.append(CHANNEL_FLOW)
        # AL-CONSUMERS: a connection that publishes nothing is never blocked
        if any(spec.publishes == 0 and cs.state == BLOCKED for _, cs, spec in live):
            bad.append(CONSUMERS)
        # AL-NOTHING-LOST: every completed publish is queued or consumed; nothing read
        # that was not written
        completed = sum(
            cs.read // spec.frames_per_publish
            for cs, spec in zip(state.conns, m.specs, strict=True)
        )
        consumed = sum(cs.consumed for cs in state.conns)
        if completed != state.queue + consumed or any(
            cs.read > cs.written
            or cs.written != (spec.publishes - cs.to_publish) * spec.frames_per_publish
            for cs, spec in zip(state.conns, m.specs, strict=True)
        ):
            bad.append(NOTHING_LOST)
        return tuple(bad)

    def step_violations(self, state: AlarmState, action: int, outcome: Outcome) -> tuple[str, ...]:
        m = self.model
        bad: list[str] = []
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        after = outcome.state
        for n in range(m.n_nodes):
            before_on = bool(state.alarms & alarm_bit(n, MEMORY))
            after_on = bool(after.alarms & alarm_bit(n, MEMORY))
            checked = (kind == TICK and index == n) or (
                kind == SET_WATERMARK and m.watermark_target(index)[0] == n
            )
            if checked:
                # AL-WATERMARK: at a check the alarm is exactly used > limit
                if after_on != watermark_alarm(after.used[n], after.limit[n]):
                    bad.append(WATERMARK)
            elif after_on != before_on and not (kind == NODE_DOWN and index == n):
                bad.append(WATERMARK)  # changed without a check
        # AL-BLOCKED-ONCE: no second connection.blocked in one episode
        for notice in outcome.notices:
            if notice.method != "connection.blocked":
                continue
            i = [s.name for s in m.specs].index(notice.connection)
            if state.conns[i].last_notice == GOT_BLOCKED:
                bad.append(BLOCKED_ONCE)
        if kind == PUBLISH and not m.classic:
            spec = m.specs[index]
            if spec.complies and not state.conns[index].flow_active:
                bad.append(CHANNEL_FLOW)
        return tuple(dict.fromkeys(bad))
