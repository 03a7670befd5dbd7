"""RabbitMQ memory and disk alarms and the blocking of publishing connections (AL-*).

Read next to ``spec/alarms.md``. Two profiles:

* ``3.10.8`` (spec/sources.md §3): the memory monitor's watermark check, the cluster-wide
  alarm set of ``rabbit_alarm``, and each reader's throttle (``blocked_by``,
  ``should_block``, ``connection.blocked`` sent once per episode): a reader blocks only
  when it post-processes a content frame while an alarm is on, and then reads nothing
  more until every source has cleared.
* ``2008`` (seed 001): the server sends ``channel.flow{active=false}`` to every channel
  on a memory alarm and ``channel.flow{active=true}`` when it clears; it never stops
  reading; a complying client stops publishing.

A state is an :class:`AlarmState` of named tuples; every step is a pure function
returning an :class:`Outcome` with the notifications sent to clients, in order.
Delivery of alarm changes to every reader is immediate (AL-CLUSTER).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

PROFILE_3_10 = "3.10.8"
PROFILE_2008 = "2008"
PROFILES = (PROFILE_3_10, PROFILE_2008)

MEMORY, DISK = 1, 2  #: alarm sources, as bits of ``blocked_by``
SOURCE_NAMES = {MEMORY: "memory", DISK: "disk"}
RUNNING, BLOCKED = 0, 1
NO_NOTICE, GOT_BLOCKED, GOT_UNBLOCKED = 0, 1, 2

#: Action kinds; an action is ``kind << ACTION_SHIFT | index`` (a node or a connection;
#: SET_WATERMARK: ``node * len(watermarks) + k`` for the k-th value of
#: ``AlarmConfig.watermarks`` — never the value itself, so any value is one action, AL-ACTIONS).
(
    MEM_UP,
    MEM_DOWN,
    TICK,
    SET_WATERMARK,
    DISK_SET,
    DISK_CLEAR,
    NODE_DOWN,
    PUBLISH,
    READ_FRAME,
    DELIVER,
    CONSUME,
) = range(11)
ACTION_SHIFT = 20
#: AL-ACTIONS: the most indices of one action kind (connections; nodes × watermark values).
MAX_ACTION_INDEX = 1 << ACTION_SHIFT
ACTION_NAMES = (
    "mem_up",
    "mem_down",
    "tick",
    "set_watermark",
    "disk_set",
    "disk_clear",
    "node_down",
    "publish",
    "read_frame",
    "deliver",
    "consume",
)
ENVIRONMENT = frozenset({MEM_UP, MEM_DOWN, TICK, SET_WATERMARK, DISK_SET, DISK_CLEAR, NODE_DOWN})
CLIENT = frozenset({PUBLISH, CONSUME})
BROKER = frozenset({READ_FRAME, DELIVER})


@dataclass(frozen=True)
class ConnectionSpec:
    """An AMQP connection to node ``node``: its client publishes ``publishes`` messages
    (0: a consumer-only connection) and/or consumes from the queue; ``capability``: it
    advertises ``connection.blocked``; ``empty_body``: its publishes have no body frame;
    ``complies`` (2008): it stops publishing while told ``channel.flow{active=false}``."""

    name: str
    node: int = 0
    publishes: int = 0
    consumes: bool = False
    capability: bool = True
    empty_body: bool = False
    complies: bool = True
    starts_later: bool = False  #: a consumer that sends basic.consume only when told

    @property
    def frames_per_publish(self) -> int:
        return 1 if self.empty_body else 2


@dataclass(frozen=True)
class AlarmConfig:
    """Nodes, their memory (``used`` starts at ``initial_used``, moves within
    ``0..max_used``), the watermark ``limit``, the values ``set_watermark`` may set, and
    what the environment may do (disk alarms, nodes going down)."""

    connections: tuple[ConnectionSpec, ...]
    nodes: tuple[str, ...] = ("rabbit@n1",)
    limit: int = 1
    max_used: int = 2
    initial_used: int = 0
    watermarks: tuple[int, ...] = ()
    disk: bool = False
    node_down: bool = False
    profile: str = PROFILE_3_10
    name: str = "alarms"
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.profile!r} (one of {', '.join(PROFILES)})")
        for c in self.connections:
            if not 0 <= c.node < len(self.nodes):
                raise ValueError(f"connection {c.name!r}: no node {c.node}")
        # AL-ACTIONS: every action's index fits below ACTION_SHIFT, so no action can
        # stand for another.
        if len(set(self.watermarks)) != len(self.watermarks) or any(
            not isinstance(v, int) or v < 0 for v in self.watermarks
        ):
            raise ValueError("watermarks must be distinct integers >= 0")
        if max(len(self.connections), len(self.nodes) * max(1, len(self.watermarks))) > (
            MAX_ACTION_INDEX
        ):
            raise ValueError(
                f"more than {MAX_ACTION_INDEX} connections or node × watermark pairs (AL-ACTIONS)"
            )


class ConnState(NamedTuple):
    to_publish: int
    written: int  #: frames the client has written to the socket
    read: int  #: frames the reader has read
    state: int  #: RUNNING or BLOCKED (the reader's connection_state)
    blocked_by: int  #: alarm sources the reader knows of (bits)
    should_block: bool
    sent: bool  #: connection.blocked sent this episode
    last_notice: int  #: the last connection.blocked/unblocked the client received
    flow_active: bool  #: 2008: the last channel.flow sent (True = may publish)
    consumed: int
    consuming: bool  #: the client has started consuming (basic.consume)


class AlarmState(NamedTuple):
    used: tuple[int, ...]
    limit: tuple[int, ...]
    up: tuple[bool, ...]
    #: bit ``2 * node + (source - 1)``: the cluster-wide alarm set of rabbit_alarm
    alarms: int
    queue: int
    conns: tuple[ConnState, ...]


class Notice(NamedTuple):
    """A method frame the broker sent a client: ``connection.blocked`` (with its reason),
    ``connection.unblocked``, ``channel.flow`` (``active`` in ``reason``)."""

    method: str
    connection: str
    reason: str = ""


@dataclass(frozen=True)
class Outcome:
    state: AlarmState
    notices: tuple[Notice, ...]


def alarm_bit(node: int, source: int) -> int:
    return 1 << (2 * node + (source - 1))


def watermark_alarm(used: int, limit: int) -> bool:
    """AL-WATERMARK: the memory alarm is on iff ``used > limit`` — strict, no hysteresis."""
    return used > limit


def reported_state(c: ConnState) -> str:
    """AL-REPORTED-STATE: ``rabbitmqctl list_connections state`` (no credit flow):
    ``blocked`` while the reader is blocked, ``blocking`` while an alarm is on but no
    content frame has been seen, else ``running``."""
    if c.state == BLOCKED:
        return "blocked"
    if c.blocked_by:
        return "blocking"
    return "running"


class AlarmModel:
    """The AL transition system of an :class:`AlarmConfig`."""

    def __init__(self, config: AlarmConfig) -> None:
        self.config = config
        self.specs = config.connections
        self.n_nodes = len(config.nodes)
        self.classic = config.profile == PROFILE_3_10

    def initial(self) -> AlarmState:
        """AL-INIT and AL-REGISTER: every node at ``initial_used`` with its alarm decided by
        AL-WATERMARK; each reader registers and starts with the current alarm set."""
        c = self.config
        alarms = 0
        for n in range(self.n_nodes):
            if watermark_alarm(c.initial_used, c.limit):
                alarms |= alarm_bit(n, MEMORY)
        state = AlarmState(
            used=(c.initial_used,) * self.n_nodes,
            limit=(c.limit,) * self.n_nodes,
            up=(True,) * self.n_nodes,
            alarms=alarms,
            queue=0,
            conns=tuple(
                ConnState(
                    s.publishes,
                    0,
                    0,
                    RUNNING,
                    0,
                    False,
                    False,
                    NO_NOTICE,
                    True,
                    0,
                    s.consumes and not s.starts_later,
                )
                for s in self.specs
            ),
        )
        conns = [
            cs._replace(
                blocked_by=self.cluster_sources(state),
                flow_active=not (alarms & alarm_bit(s.node, MEMORY)),
            )
            for cs, s in zip(state.conns, self.specs, strict=True)
        ]
        return state._replace(conns=tuple(conns))

    def cluster_sources(self, state: AlarmState) -> int:
        """AL-CLUSTER: the sources alarmed on any node (what ``register`` returns)."""
        sources = 0
        for n in range(self.n_nodes):
            for s in (MEMORY, DISK):
                if state.alarms & alarm_bit(n, s):
                    sources |= s
        return sources

    # -- enabledness ------------------------------

    def enabled(self, state: AlarmState) -> Iterator[int]:
        c = self.config
        for n in range(self.n_nodes):
            if not state.up[n]:
                continue
            if state.used[n] < c.max_used:
                yield MEM_UP << ACTION_SHIFT | n
            if state.used[n] > 0:
                yield MEM_DOWN << ACTION_SHIFT | n
            alarmed = bool(state.alarms & alarm_bit(n, MEMORY))
            if watermark_alarm(state.used[n], state.limit[n]) != alarmed:
                yield TICK << ACTION_SHIFT | n
            for k, v in enumerate(c.watermarks):
                if v != state.limit[n]:
                    yield SET_WATERMARK << ACTION_SHIFT | (n * len(c.watermarks) + k)
            if c.disk and self.classic:
                disk = bool(state.alarms & alarm_bit(n, DISK))
                yield (DISK_CLEAR if disk else DISK_SET) << ACTION_SHIFT | n
            if c.node_down and self.n_nodes > 1 and sum(state.up) > 1:
                yield NODE_DOWN << ACTION_SHIFT | n
        for i, (cs, spec) in enumerate(zip(state.conns, self.specs, strict=True)):
            if not state.up[spec.node]:
                continue
            if cs.to_publish > 0 and (self.classic or cs.flow_active or not spec.complies):
                yield PUBLISH << ACTION_SHIFT | i
            if cs.read < cs.written and cs.state == RUNNING:
                yield READ_FRAME << ACTION_SHIFT | i
            if cs.consuming and state.queue > 0:
                yield DELIVER << ACTION_SHIFT | i
            if spec.consumes and not cs.consuming:
                yield CONSUME << ACTION_SHIFT | i

    def is_enabled(self, state: AlarmState, action: int) -> bool:
        """Whether ``action`` is among :meth:`enabled` — the same guards, judged for the
        one action (the cost of one guard, not of listing every action)."""
        kind, index = action >> ACTION_SHIFT, action & (MAX_ACTION_INDEX - 1)
        c = self.config
        if kind in ENVIRONMENT:
            if kind == SET_WATERMARK:
                if not c.watermarks:
                    return False
                n, value = self.watermark_target(index)
            else:
                n, value = index, 0
            if not (0 <= n < self.n_nodes and state.up[n]):
                return False
            alarms = state.alarms
            if kind == MEM_UP:
                return state.used[n] < c.max_used
            if kind == MEM_DOWN:
                return state.used[n] > 0
            if kind == TICK:
                on = bool(alarms & alarm_bit(n, MEMORY))
                return watermark_alarm(state.used[n], state.limit[n]) != on
            if kind == SET_WATERMARK:
                return value != state.limit[n]
            if kind in (DISK_SET, DISK_CLEAR):
                disk = bool(alarms & alarm_bit(n, DISK))
                return c.disk and self.classic and disk == (kind == DISK_CLEAR)
            return c.node_down and self.n_nodes > 1 and sum(state.up) > 1
        if not 0 <= index < len(self.specs) or kind > CONSUME:
            return False
        cs, spec = state.conns[index], self.specs[index]
        if not state.up[spec.node]:
            return False
        if kind == PUBLISH:
            return cs.to_publish > 0 and (self.classic or cs.flow_active or not spec.complies)
        if kind == READ_FRAME:
            return cs.read < cs.written and cs.state == RUNNING
        if kind == DELIVER:
            return cs.consuming and state.queue > 0
        return spec.consumes and not cs.consuming

    def apply(self, state: AlarmState, action: int) -> Outcome:
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        step = (
            self.mem_up,
            self.mem_down,
            self.tick,
            self.set_watermark,
            self.disk_set,
            self.disk_clear,
            self.node_down,
            self.publish,
            self.read_frame,
            self.deliver,
            self.consume,
        )[kind]
        outcome = step(state, index)
        return Outcome(self.received(outcome.state, outcome.notices), outcome.notices)

    def received(self, state: AlarmState, notices: tuple[Notice, ...]) -> AlarmState:
        """The clients' side: each connection remembers the last connection.blocked or
        connection.unblocked frame it received (what AL-BLOCKED-ONCE and AL-UNBLOCKED
        judge)."""
        if not notices:
            return state
        conns = list(state.conns)
        names = [s.name for s in self.specs]
        for n in notices:
            i = names.index(n.connection)
            if n.method == "connection.blocked":
                conns[i] = conns[i]._replace(last_notice=GOT_BLOCKED)
            elif n.method == "connection.unblocked":
                conns[i] = conns[i]._replace(last_notice=GOT_UNBLOCKED)
        return state._replace(conns=tuple(conns))

    def successors(self, state: AlarmState) -> list[tuple[int, AlarmState]]:
        return [(a, self.apply(state, a).state) for a in self.enabled(state)]

    def describe(self, action: int) -> str:
        kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
        if kind == SET_WATERMARK:
            n, value = self.watermark_target(index)
            return f"set_watermark({self.config.nodes[n]}, {value})"
        if kind in (PUBLISH, READ_FRAME, DELIVER, CONSUME):
            return f"{ACTION_NAMES[kind]}({self.specs[index].name})"
        return f"{ACTION_NAMES[kind]}({self.config.nodes[index]})"

    def watermark_target(self, index: int) -> tuple[int, int]:
        """AL-ACTIONS: the node and the value of a ``set_watermark`` action's index."""
        n, k = divmod(index, len(self.config.watermarks))
        return n, self.config.watermarks[k]

    def encode(self, kind: str, target: str, value: int | None = None) -> int:
        """AL-ACTIONS: the action ``kind(target[, value])``; ``ValueError`` for a target
        or a watermark value the configuration does not have."""
        k = ACTION_NAMES.index(kind)
        if k in (PUBLISH, READ_FRAME, DELIVER, CONSUME):
            index = [s.name for s in self.specs].index(target)
        else:
            index = self.config.nodes.index(target)
        if k == SET_WATERMARK:
            values = self.config.watermarks
            index = index * len(values) + values.index(value)
        return k << ACTION_SHIFT | index

    # -- the reader's throttle (3.10.8) ----------------------------------------------------------

    def _maybe_block(self, i: int, cs: ConnState, out: list[Notice]) -> ConnState:
        """AL-BLOCK-ON-PUBLISH / AL-BLOCKED-ONCE: ``maybe_block``; the frame only to clients
        with the capability (AL-CAPABILITY)."""
        if cs.should_block and cs.blocked_by:
            cs = cs._replace(state=BLOCKED)
            if not cs.sent:
                if self.specs[i].capability:
                    out.append(
                        Notice("connection.blocked", self.specs[i].name, self.reason(cs.blocked_by))
                    )
                cs = cs._replace(sent=True)
        return cs

    def _maybe_unblock(self, i: int, cs: ConnState, out: list[Notice]) -> ConnState:
        """AL-UNBLOCKED: ``maybe_unblock``."""
        if not (cs.should_block and cs.blocked_by):
            cs = cs._replace(state=RUNNING, should_block=False)
            if cs.sent and not cs.blocked_by:
                if self.specs[i].capability:
                    out.append(Notice("connection.unblocked", self.specs[i].name))
                cs = cs._replace(sent=False)
        return cs

    def _control_throttle(self, i: int, cs: ConnState, out: list[Notice]) -> ConnState:
        if cs.state == RUNNING:
            return self._maybe_block(i, cs, out)
        return self._maybe_block(i, self._maybe_unblock(i, cs, out), out)

    @staticmethod
    def reason(sources: int) -> str:
        return "low on " + " & ".join(SOURCE_NAMES[s] for s in (MEMORY, DISK) if sources & s)

    def _alarm_changed(
        self, state: AlarmState, node: int, source: int, on: bool, out: list[Notice]
    ) -> AlarmState:
        """AL-CLUSTER: set or clear ``(node, source)``; duplicates are ignored; every
        reader is told whether *any* node still has ``source`` (``conserve_resources``);
        2008 profile: AL-CHANNEL-FLOW instead."""
        bit = alarm_bit(node, source)
        if bool(state.alarms & bit) == on:
            return state
        alarms = state.alarms | bit if on else state.alarms & ~bit
        state = state._replace(alarms=alarms)
        conns = list(state.conns)
        if self.classic:
            still = any(alarms & alarm_bit(n, source) for n in range(self.n_nodes))
            for i, cs in enumerate(conns):
                if not state.up[self.specs[i].node]:
                    continue
                blocked_by = cs.blocked_by | source if still else cs.blocked_by & ~source
                if blocked_by != cs.blocked_by:
                    conns[i] = self._control_throttle(i, cs._replace(blocked_by=blocked_by), out)
        elif source == MEMORY:
            for i, cs in enumerate(conns):
                if self.specs[i].node == node and cs.flow_active == on:
                    conns[i] = cs._replace(flow_active=not on)
                    out.append(
                        Notice(
                            "channel.flow",
                            self.specs[i].name,
                            "active=false" if on else "active=true",
                        )
                    )
        return state._replace(conns=tuple(conns))

    # -- environment steps ------------------------------

    def mem_up(self, state: AlarmState, n: int) -> Outcome:
        """AL-MEMORY: the node's memory use grows by one unit (no check yet)."""
        used = list(state.used)
        used[n] += 1
        return Outcome(state._replace(used=tuple(used)), ())

    def mem_down(self, state: AlarmState, n: int) -> Outcome:
        """AL-MEMORY: the node's memory use shrinks by one unit (no check yet)."""
        used = list(state.used)
        used[n] -= 1
        return Outcome(state._replace(used=tuple(used)), ())

    def mem_to(self, state: AlarmState, n: int, used: int) -> Outcome:
        """AL-MEMORY: the node's memory use moves to ``used`` between two checks — the
        same state as that many ``mem_up``/``mem_down`` steps, in one step (no check yet)."""
        if used < 0:
            raise ValueError(f"memory use {used} < 0")
        use = list(state.used)
        use[n] = used
        return Outcome(state._replace(used=tuple(use)), ())

    def tick(self, state: AlarmState, n: int) -> Outcome:
        """AL-WATERMARK: the periodic check sets or clears the node's memory alarm
        (enabled only when it changes something)."""
        out: list[Notice] = []
        on = watermark_alarm(state.used[n], state.limit[n])
        return Outcome(self._alarm_changed(state, n, MEMORY, on, out), tuple(out))

    def set_watermark(self, state: AlarmState, index: int) -> Outcome:
        """AL-WATERMARK: ``set_vm_memory_high_watermark`` changes the limit and checks at
        once."""
        n, value = self.watermark_target(index)
        limit = list(state.limit)
        limit[n] = value
        state = state._replace(limit=tuple(limit))
        out: list[Notice] = []
        on = watermark_alarm(state.used[n], value)
        return Outcome(self._alarm_changed(state, n, MEMORY, on, out), tuple(out))

    def disk_set(self, state: AlarmState, n: int) -> Outcome:
        """AL-CLUSTER: the node's disk alarm is set."""
        out: list[Notice] = []
        return Outcome(self._alarm_changed(state, n, DISK, True, out), tuple(out))

    def disk_clear(self, state: AlarmState, n: int) -> Outcome:
        """AL-CLUSTER: the node's disk alarm clears."""
        out: list[Notice] = []
        return Outcome(self._alarm_changed(state, n, DISK, False, out), tuple(out))

    def node_down(self, state: AlarmState, n: int) -> Outcome:
        """AL-NODE-DOWN: a node goes down: the others clear its alarms; its own
        connections are gone (they no longer act)."""
        up = list(state.up)
        up[n] = False
        state = state._replace(up=tuple(up))
        out: list[Notice] = []
        for source in (MEMORY, DISK):
            state = self._alarm_changed(state, n, source, False, out)
        return Outcome(state, tuple(out))

    # -- client and broker steps ------------------------------

    def publish(self, state: AlarmState, i: int) -> Outcome:
        """AL-PUBLISH: the client writes one publish (method+header, and a body frame
        unless empty) to its socket; it cannot tell whether the broker reads it."""
        cs = state.conns[i]
        fpp = self.specs[i].frames_per_publish
        conns = list(state.conns)
        conns[i] = cs._replace(to_publish=cs.to_publish - 1, written=cs.written + fpp)
        return Outcome(state._replace(conns=tuple(conns)), ())

    def read_frame(self, state: AlarmState, i: int) -> Outcome:
        """AL-READ-FRAME and AL-BLOCK-ON-PUBLISH: a running reader reads the next content
        frame (never a blocked one: AL-NO-READ); a completed publish goes to the queue
        (with an empty body at its header, so one gets through per episode:
        AL-ONE-PUBLISH); post-processing the frame calls ``publish_received``: with an
        alarm on, ``should_block`` and ``maybe_block``."""
        cs = state.conns[i]
        spec = self.specs[i]
        cs = cs._replace(read=cs.read + 1)
        queue = state.queue
        if cs.read % spec.frames_per_publish == 0:
            queue += 1  # the publish is complete
        out: list[Notice] = []
        if self.classic and cs.blocked_by:
            cs = self._maybe_block(i, cs._replace(should_block=True), out)
        conns = list(state.conns)
        conns[i] = cs
        return Outcome(state._replace(queue=queue, conns=tuple(conns)), tuple(out))

    def deliver(self, state: AlarmState, i: int) -> Outcome:
        """AL-CONSUMERS: the queue delivers one message to a consuming connection,
        whatever the alarms."""
        conns = list(state.conns)
        conns[i] = conns[i]._replace(consumed=conns[i].consumed + 1)
        return Outcome(state._replace(queue=state.queue - 1, conns=tuple(conns)), ())

    def consume(self, state: AlarmState, i: int) -> Outcome:
        """AL-CONSUMERS: the client starts consuming (``basic.consume`` is no content
        frame, so it is read whatever the alarms)."""
        conns = list(state.conns)
        conns[i] = conns[i]._replace(consuming=True)
        return Outcome(state._replace(conns=tuple(conns)), ())

    # -- views ------------------------------

    def blocked_mask(self, state: AlarmState) -> int:
        """Bit ``i`` set iff connection ``i``'s reader is blocked (on a node that is up)."""
        return sum(
            1 << i
            for i, (cs, spec) in enumerate(zip(state.conns, self.specs, strict=True))
            if cs.state == BLOCKED and state.up[spec.node]
        )

    def pending_work(self, state: AlarmState) -> bool:
        for cs, spec in zip(state.conns, self.specs, strict=True):
            if state.up[spec.node] and (cs.to_publish > 0 or cs.read < cs.written):
                return True
        return (
            state.queue > 0
            and any(s.consumes and state.up[s.node] for s in self.specs)
            or any(
                s.consumes and not cs.consuming and state.up[s.node]
                for cs, s in zip(state.conns, self.specs, strict=True)
            )
        )

    def broker_enabled(self, state: AlarmState) -> Iterator[int]:
        """The enabled broker-internal actions (READ_FRAME, DELIVER), in the order
        :meth:`enabled` lists them."""
        for i, (cs, spec) in enumerate(zip(state.conns, self.specs, strict=True)):
            if not state.up[spec.node]:
                continue
            if cs.read < cs.written and cs.state == RUNNING:
                yield READ_FRAME << ACTION_SHIFT | i
            if cs.consuming and state.queue > 0:
                yield DELIVER << ACTION_SHIFT | i

    @staticmethod
    def broker_work(state: AlarmState) -> int:
        """AL-SETTLE: a bound on the broker-internal steps left: each frame read takes
        two units and queues at most one message, each delivery takes one."""
        return 2 * sum(cs.written - cs.read for cs in state.conns) + state.queue

    def settle(self, state: AlarmState) -> tuple[AlarmState, list[Notice]]:
        """AL-SETTLE: run broker-internal steps (reading frames, delivering) until none
        is enabled: what a real broker does on its own between two client or operator
        actions. It ends within :meth:`broker_work` steps, however much was published."""
        notices: list[Notice] = []
        for _ in range(self.broker_work(state) + 1):
            action = next(self.broker_enabled(state), None)
            if action is None:
                return state, notices
            outcome = self.apply(state, action)
            state = outcome.state
            notices.extend(outcome.notices)
        raise AssertionError("AL-SETTLE: broker steps outlasted their bound")
