"""Paging inside the publishing chain ``reader -> channel -> queue -> msg_store``
(PG-NET), as a :class:`~creditflow.model.system.TransitionSystem`.

The reader and the channel run ``credit_flow`` (:mod:`creditflow.model.credit.flow`)
toward the next hop as in NET (``spec/network.md``); the queue is the paging model of
:mod:`creditflow.model.paging.operations` whose msg_store writes spend msg_store credit
(CF-SEND with
``msg_store_credit_disc_bound``). While the queue is blocked by msg_store credit it still
takes deliveries but defers the grants it owes the channel (CF-DEFER); the channel, blocked
in turn, defers the reader's; the reader, which checks, stops reading. A slow msg_store
therefore throttles paging and, through deferred grants, the publisher (PG-NET-CHAIN).

    >>> from creditflow.conformance.explore.explorer import explore
    >>> result = explore(PagingNetwork(CHAIN_BOUNDS))
    >>> result.complete, sorted(result.findings)
    (True, [])
    >>> chain_witness(PagingNetwork(CHAIN_BOUNDS), result) is not None
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from creditflow.model.credit import flow as cf
from creditflow.model.credit.flow import ProcessCredit
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.properties import CONSERVATION, edge_conserved
from creditflow.model.paging import operations as paging
from creditflow.model.paging.operations import Batch
from creditflow.model.paging.profile import DEFAULT_PROFILE, PagingProfile
from creditflow.model.paging.properties import ALL_PROPERTIES, check
from creditflow.model.paging.state import (
    STORE_NAMES,
    Config,
    PagingState,
    Report,
    Step,
    initial_state,
)

READER, CHANNEL, QUEUE = "reader", "channel", "queue"
(
    READ,
    CHANNEL_TAKE,
    QUEUE_TAKE,
    STORE_TAKE,
    QUEUE_BUMP,
    SELF_BUMP,
    CHANNEL_BUMP,
    READER_BUMP,
    CONSUME,
) = range(9)
ACTION_NAMES = (
    "read",
    "take(channel<-reader)",
    "take(queue<-channel)",
    "store_take",
    "bump_credit(queue<-store)",
    "bump_reduce_memory_use",
    "bump_credit(channel<-queue)",
    "bump_credit(reader<-channel)",
    "basic_get(no ack)",
)
SHIFT = 20


class NetworkBounds(NamedTuple):
    """The chain's workload and settings (PG-NET)."""

    #: the messages the reader publishes, in order: (body size, persistent)
    workload: tuple[tuple[int, bool], ...]
    #: the credit spec of reader -> channel and channel -> queue (CF-SPEC)
    credit: CreditSpec = CreditSpec(2, 1)
    profile: PagingProfile = DEFAULT_PROFILE
    durable: bool = True
    #: the queue's RAM duration from the start (0: page everything; None: infinity)
    duration: float | None = 0
    #: a suspended msg_store never processes a write (NET-STALLED)
    store_stalled: bool = False
    #: a consumer that may ``basic.get`` without ack
    consumer: bool = False


#: The chain with everything tight: credit {2,1} on every hop, msg_store {2,1}, the queue
#: reducing on every publish (gc threshold 0) with target 0, five large transient messages.
CHAIN_BOUNDS = NetworkBounds(
    workload=((5000, False),) * 5,
    profile=DEFAULT_PROFILE.with_settings(
        store_credit=CreditSpec(2, 1),
        segment_entries=2,
        io_batch_size=1,
        gc_threshold=0,
        read_batch=2,
    ),
)


class ChainState(NamedTuple):
    """PG-NET state: the reader's and channel's credit dictionaries, the FIFOs between
    them (data as counts, grants as amounts, oldest first) and the queue."""

    reader: ProcessCredit
    left: int
    to_channel: int
    channel: ProcessCredit
    to_queue: int
    grants_to_reader: tuple[int, ...]
    grants_to_channel: tuple[int, ...]
    queue: PagingState
    last: tuple[Report, ...] = ()


class PagingNetwork:
    """The ``reader -> channel -> queue -> msg_store`` chain with paging (PG-NET)."""

    process_names: Sequence[str] = (READER, CHANNEL, QUEUE, *STORE_NAMES)
    property_ids: Sequence[str] = (CONSERVATION, *ALL_PROPERTIES)

    def __init__(self, bounds: NetworkBounds) -> None:
        self.bounds = bounds
        self.config = Config(bounds.profile, bounds.durable)

    def initial(self) -> ChainState:
        queue = paging.set_ram_duration_target(
            self.config, initial_state(), self.bounds.duration
        ).state
        return ChainState(cf.INITIAL, len(self.bounds.workload), 0, cf.INITIAL, 0, (), (), queue)

    # -- actions ------------------------------------------------------------------------

    def enabled(self, s: ChainState) -> list[int]:
        acts = []
        if s.left and not s.reader.blocked:
            acts.append(READ << SHIFT)
        if s.to_channel:
            acts.append(CHANNEL_TAKE << SHIFT)
        if s.to_queue:
            acts.append(QUEUE_TAKE << SHIFT)
        q = s.queue
        if not self.bounds.store_stalled:
            acts += [STORE_TAKE << SHIFT | i for i, st in enumerate(q.stores) if st.pending]
        acts += [QUEUE_BUMP << SHIFT | i for i, st in enumerate(q.stores) if st.bumps]
        if q.self_bumps:
            acts.append(SELF_BUMP << SHIFT)
        if s.grants_to_channel:
            acts.append(CHANNEL_BUMP << SHIFT)
        if s.grants_to_reader:
            acts.append(READER_BUMP << SHIFT)
        if self.bounds.consumer and q.len:
            acts.append(CONSUME << SHIFT)
        return acts

    def step(self, s: ChainState, action: int) -> ChainState:
        kind, param = action >> SHIFT, action & ((1 << SHIFT) - 1)
        spec = self.bounds.credit
        cfg = self.config
        if kind == READ:
            return s._replace(
                reader=cf.send(s.reader, CHANNEL, spec),
                left=s.left - 1,
                to_channel=s.to_channel + 1,
                last=(),
            )
        if kind == CHANNEL_TAKE:
            # rabbit_channel acks the reader on receipt, then delivers (CF-ACK, CF-SEND)
            channel, grants = cf.ack(s.channel, READER, spec)
            channel = cf.send(channel, QUEUE, spec)
            return s._replace(
                channel=channel,
                to_channel=s.to_channel - 1,
                to_queue=s.to_queue + 1,
                grants_to_reader=s.grants_to_reader + _amounts(grants),
                last=(),
            )
        if kind == QUEUE_TAKE:
            # the queue acks the channel on receipt (its grant is deferred while the
            # queue is blocked by msg_store credit), then enqueues
            credit, grants = cf.ack(s.queue.credit, CHANNEL, spec)
            size, persistent = self.bounds.workload[s.queue.next_seq_id]
            done = paging.basic_publish(cfg, s.queue._replace(credit=credit), size, persistent)
            return self._with_queue(
                s._replace(
                    to_queue=s.to_queue - 1,
                    grants_to_channel=s.grants_to_channel + _amounts(grants),
                ),
                done,
            )
        if kind == STORE_TAKE:
            return self._with_queue(s, paging.store_take(cfg, s.queue, param, 1))
        if kind == QUEUE_BUMP:
            return self._with_queue(s, paging.handle_bump_credit(cfg, s.queue, param))
        if kind == SELF_BUMP:
            return self._with_queue(s, paging.handle_bump_reduce_memory_use(cfg, s.queue))
        if kind == CHANNEL_BUMP:
            channel, grants = cf.handle_bump(s.channel, QUEUE, s.grants_to_channel[0])
            return s._replace(
                channel=channel,
                grants_to_channel=s.grants_to_channel[1:],
                grants_to_reader=s.grants_to_reader + _amounts(grants),
                last=(),
            )
        if kind == READER_BUMP:
            reader, _ = cf.handle_bump(s.reader, CHANNEL, s.grants_to_reader[0])
            return s._replace(reader=reader, grants_to_reader=s.grants_to_reader[1:], last=())
        return self._with_queue(s, paging.basic_get(cfg, s.queue, False))

    def _with_queue(self, s: ChainState, done: Batch | Step) -> ChainState:
        reports = done.reports if isinstance(done, Batch) else (done.report,)
        grants = tuple(
            amount for report in reports for peer, amount in report.grants if peer == CHANNEL
        )
        queue = done.state
        if queue.disk_reads or queue.disk_writes:
            queue = queue._replace(disk_reads=0, disk_writes=0)
        return s._replace(queue=queue, grants_to_channel=s.grants_to_channel + grants, last=reports)

    def successors(self, s: ChainState) -> list[tuple[int, ChainState]]:
        return [(a, self.step(s, a)) for a in self.enabled(s)]

    def describe(self, action: int) -> str:
        kind, param = action >> SHIFT, action & ((1 << SHIFT) - 1)
        name = ACTION_NAMES[kind]
        if kind in (STORE_TAKE, QUEUE_BUMP):
            return f"{name}[{STORE_NAMES[param]}]"
        return name

    def action_record(self, action: int) -> tuple[str, Mapping[str, Any]]:
        return ACTION_NAMES[action >> SHIFT], {"param": action & ((1 << SHIFT) - 1)}

    # -- checking -----------------------------------------------------------------------

    def _hops_conserved(self, s: ChainState) -> str | None:
        spec = self.bounds.credit
        for name, sender, receiver, peer_s, peer_r, data, grants in (
            (
                "reader->channel",
                s.reader,
                s.channel,
                CHANNEL,
                READER,
                s.to_channel,
                s.grants_to_reader,
            ),
            (
                "channel->queue",
                s.channel,
                s.queue.credit,
                QUEUE,
                CHANNEL,
                s.to_queue,
                s.grants_to_channel,
            ),
        ):
            deferred = sum(1 for p, _ in receiver.deferred if p == peer_r)
            if not edge_conserved(
                sender.credit_from.get(peer_s, spec.initial),
                receiver.credit_to.get(peer_r, spec.more_after),
                data,
                len(grants),
                deferred,
                spec.initial,
                spec.more_after,
            ):
                return f"credit not conserved on {name}"
        return None

    def violations(self, s: ChainState) -> tuple[str, ...]:
        found = check(self.bounds.profile, s.queue, s.last)
        if self._hops_conserved(s) is not None:
            found[CONSERVATION] = ""
        return tuple(pid for pid in self.property_ids if pid in found)

    def explain(self, s: ChainState, property_id: str) -> str:
        if property_id == CONSERVATION:
            return self._hops_conserved(s) or ""
        return check(self.bounds.profile, s.queue, s.last).get(property_id, "")

    def blocked_mask(self, s: ChainState) -> int:
        return (
            bool(s.reader.blocked)
            | bool(s.channel.blocked) << 1
            | bool(s.queue.credit.blocked) << 2
        )

    def pending_work(self, s: ChainState) -> bool:
        return bool(
            s.left
            or s.to_channel
            or s.to_queue
            or s.grants_to_channel
            or s.grants_to_reader
            or s.queue.has_paging_work()
        )

    def render(self, s: ChainState) -> Mapping[str, Any]:
        q = s.queue

        def credit(ps: ProcessCredit) -> dict:
            return dict(ps.credit_from)

        return {
            "publishes_left": s.left,
            "reader_credit": credit(s.reader),
            "channel_credit": credit(s.channel),
            "queue_store_credit": tuple(q.store_credit(i) for i in range(len(STORE_NAMES))),
            "blocked": frozenset(
                n
                for n, ps in ((READER, s.reader), (CHANNEL, s.channel), (QUEUE, q.credit))
                if ps.blocked
            ),
            "deferred": {CHANNEL: len(s.channel.deferred), QUEUE: len(q.credit.deferred)},
            "in_flight": (s.to_channel, s.to_queue),
            "grants_in_flight": (s.grants_to_reader, s.grants_to_channel),
            "store_pending": tuple(st.pending for st in q.stores),
            "queue": (len(q.q1), len(q.q2), len(q.delta), len(q.q3), len(q.q4)),
            "ram_msg_count": q.ram_msg_count,
        }


def _amounts(grants: tuple) -> tuple[int, ...]:
    return tuple(amount for _, amount in grants)


def is_chain_throttled(s: ChainState) -> bool:
    """PG-NET-CHAIN: the queue is blocked by msg_store credit and holds a grant it owes
    the channel; the channel is blocked and holds a grant it owes the reader; the reader
    is blocked and has publishes left."""
    queue_blocked = any(p in STORE_NAMES for p in s.queue.credit.blocked)
    return (
        queue_blocked
        and any(p == CHANNEL for p, _ in s.queue.credit.deferred)
        and bool(s.channel.blocked)
        and any(p == READER for p, _ in s.channel.deferred)
        and bool(s.reader.blocked)
        and s.left > 0
    )


def chain_witness(system: PagingNetwork, result: Any) -> list[tuple[int | None, ChainState]] | None:
    """The shortest explored run to a throttled chain (PG-NET-CHAIN), or ``None``.

    ``result`` is an :class:`~creditflow.conformance.explore.explorer.ExplorationResult` of
    ``system`` explored without reductions (breadth-first order gives shortest runs)."""
    graph = result.graph
    for i, state in enumerate(graph.states):
        if is_chain_throttled(state):
            run = []
            j = i
            while j >= 0:
                action = graph.action[j]
                run.append((None if action < 0 else action, graph.states[j]))
                j = graph.parent[j]
            return run[::-1]
    return None
