"""FAM-CHECKING for AMQP 1.0 (AMQ-TS, PROP-AMQ-*): the topologies' transition system as
the one explorer searches it.

:class:`AmqpReadable` is the model of ``model/amqp/system.py`` as a
:class:`~creditflow.model.system.TransitionSystem` (actions numbered by
:data:`ACTIONS`, the state properties of ``model/amqp/properties.py`` as its
``violations``, "messages left" as its pending work). :func:`amqp_system` gives the
fast path the explorer runs (EXP-INTERN): the same states packed into one integer
each, successors memoised by what each group of rules reads (:data:`GROUPS`), and for
the consume shape the state properties computed from per-field summaries
(:func:`consume_violations`). ``tests/test_amqp_checking.py`` ties the two together on
every preset and on random topologies (same states, numbering, verdicts, shortest runs).

PROP-AMQ-NO-STALL is the explorer's terminal deadlock (a state with no action enabled and
messages left, EXP-DEADLOCK) reported under its AMQP id. :func:`search` is EXP-FIRST: the
first violating state in breadth-first order, with a shortest run, as the AMQP check has
always reported it; :func:`check_amqp` adds the directed runs (AMQ-DIRECTED-RUN)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from creditflow.conformance.explore.explorer import (
    NO_DEADLOCK,
    Progress,
    explore,
    explore_first,
    with_deadline,
)
from creditflow.conformance.explore.interned import (
    Group,
    InternedSystem,
    WidthExceeded,
    widened,
)
from creditflow.conformance.explore.results import RunViolation, SupplyCheck, SupplySearch
from creditflow.conformance.families.amqp.directed import MAX_RUN_STEPS, directed_runs
from creditflow.model.amqp import properties, system
from creditflow.model.amqp.frames import CreditReply, CreditRequest, Delivery, Flow, Transfer
from creditflow.model.amqp.policies import CreditWindow
from creditflow.model.amqp.system import ConsumeState, LinkState, PublishState, State
from creditflow.model.amqp.topology import Topology
from creditflow.model.system import TransitionSystem

#: PROP-AMQ-NO-STALL: the AMQP name of the explorer's terminal deadlock
STALL = "PROP-AMQ-NO-STALL"

#: AMQ-TS: every action name, numbered by its index here
ACTIONS: tuple[str, ...] = (
    "send",
    "drain_done",
    "take_fwd",
    "take_back",
    "settle",
    "grant",
    "drain",
    "resume",
    "apply",
    "consume",
    "remove_limit",
    "status",
    "queue",
    "leader_change",
    "relay",
)
CODE: dict[str, int] = {a: i for i, a in enumerate(ACTIONS)}

#: the AMQP results under the explorer's generic names (OUT-TYPED-RESULT)
AmqpViolation = RunViolation
AmqpSearchResult = SupplySearch
AmqpCheckResult = SupplyCheck


class AmqpReadable:
    """AMQ-TS as a :class:`TransitionSystem`: the readable model's states and rules,
    actions numbered by :data:`ACTIONS`, PROP-AMQ-* (but NO-STALL, the explorer's
    deadlock) as the state properties."""

    process_names: tuple[str, ...] = ()
    property_ids: tuple[str, ...] = tuple(p for p in properties.ALL if p != STALL)
    action_codes: tuple[int, ...] = tuple(range(len(ACTIONS)))

    def __init__(self, topology: Topology) -> None:
        self.topology = topology

    def initial(self) -> State:
        return system.initial_state(self.topology)

    def successors(self, state: State) -> list[tuple[int, State]]:
        return [(CODE[a], nxt) for a, nxt in system.successors(self.topology, state)]

    def describe(self, action: int) -> str:
        return ACTIONS[action]

    def violations(self, state: State) -> tuple[str, ...]:
        return properties.state_violations(self.topology, state)

    def blocked_mask(self, state: State) -> int:
        return 0  # AMQP's deadlock is the terminal one (PROP-AMQ-NO-STALL)

    def pending_work(self, state: State) -> bool:
        return not properties.complete(state)

    def render(self, state: State) -> Mapping[str, Any]:
        return state._asdict()

    def action_record(self, action: int) -> tuple[str, Mapping[str, Any]]:
        return ACTIONS[action], {}


def _groups(fields: Sequence[str], spec: Sequence[tuple[str, str, str, str]]) -> list[Group]:
    """:class:`Group` s from ``(actions, reads, pops, appends)``, names space-separated."""
    at = {f: i for i, f in enumerate(fields)}

    def idx(names: str) -> tuple[int, ...]:
        return tuple(at[n] for n in names.split())

    return [
        Group(frozenset(CODE[a] for a in acts.split()), idx(reads), idx(pops), idx(appends))
        for acts, reads, pops, appends in spec
    ]


#: EXP-INTERN per shape: the readable state type, its wires, the bits of each field and
#: the action groups in the order ``model/amqp/system.py`` lists the successors
#: (actions, plain fields read, wires popped, wires appended to)
SHAPES: dict[str, tuple[Any, tuple[str, ...], dict[str, int], list[Group]]] = {
    "link": (
        LinkState,
        ("fwd", "back"),
        {"sender": 14, "fwd": 20, "receiver": 18, "back": 20},
        _groups(
            LinkState._fields,
            [
                ("send drain_done", "sender", "", "fwd"),
                ("take_fwd", "receiver", "fwd", "back"),
                ("take_back", "sender", "back", "fwd"),
                ("settle grant drain resume", "receiver", "", "back"),
            ],
        ),
    ),
    "publish": (
        PublishState,
        ("fwd", "back", "status"),
        {
            "sender": 14,
            "fwd": 18,
            "back": 18,
            "broker": 16,
            "enqueuer": 14,
            "ready": 10,
            "consumed": 10,
            "overflow": 4,
            "status": 10,
        },
        _groups(
            PublishState._fields,
            [
                ("send", "sender", "", "fwd"),
                ("take_fwd", "broker enqueuer", "fwd", "back"),
                ("take_back", "sender", "back", "fwd"),
                ("apply", "enqueuer ready overflow broker", "", "status back"),
                ("consume", "ready consumed overflow", "", "status"),
                ("remove_limit", "overflow", "", "status"),
                ("status", "enqueuer", "status", ""),
            ],
        ),
    ),
    "consume": (
        ConsumeState,
        ("s2q", "pending", "fwd", "back"),
        {
            "msgs": 8,
            "consumer": 12,
            "s2q": 18,
            "pending": 14,
            "relay": 14,
            "session": 10,
            "fwd": 18,
            "receiver": 16,
            "back": 20,
            "applied": 8,
            "leader_changes": 4,
        },
        _groups(
            ConsumeState._fields,
            [
                ("queue", "consumer msgs applied", "s2q", "pending"),
                ("leader_change", "leader_changes applied", "", "s2q"),
                ("relay send", "relay session applied", "pending", "s2q fwd"),
                ("take_fwd", "receiver", "fwd", "back"),
                ("take_back", "session relay", "back", "s2q"),
                ("settle grant drain resume", "receiver", "", "back"),
            ],
        ),
    ),
}


# -- PROP-AMQ-* of the consume shape from per-field summaries (EXP-INTERN) ------------


def _wire_summary(wire: tuple[Any, ...]) -> tuple[Any, ...]:
    """A wire as the properties read it: fields ≥ 0 (PROP-AMQ-NONNEG), a link frame in
    flight (AGREE, DRAIN), transfers, deliveries, credit replies, a credit request,
    dispositions and settles, a drain answer with credit ≠ 0 (DRAIN)."""
    ok = True
    link = False
    transfers = deliveries = replies = requests = settles = 0
    drain_bad = False
    for f in wire:
        if isinstance(f, Flow):
            if f.session is not None and f.session.incoming_window < 0:
                ok = False
            if f.link is not None:
                link = True
                if f.link.credit < 0:
                    ok = False
                if f.link.drain and f.link.credit != 0:
                    drain_bad = True
        elif isinstance(f, Transfer):
            link = True
            transfers += 1
        elif isinstance(f, CreditRequest):
            requests += 1
            ok = ok and f.credit >= 0
        elif isinstance(f, CreditReply):
            replies += 1
            ok = ok and f.credit >= 0
        elif isinstance(f, Delivery):
            deliveries += 1
        if f.tag in ("disposition", "settle"):
            settles += 1
    return (ok, link, transfers, deliveries, replies, requests, settles, drain_bad)


def consume_summaries(t: Topology) -> dict[int, Callable[[Any], Any]]:
    """Per field of :class:`ConsumeState`, the summary :func:`consume_violations` reads."""
    f = ConsumeState._fields
    return {
        f.index("msgs"): lambda m: m.ready,
        f.index("consumer"): lambda c: (c.delivery_count, c.credit, len(c.checked_out)),
        f.index("s2q"): _wire_summary,
        f.index("pending"): _wire_summary,
        f.index("relay"): lambda r: r,
        f.index("session"): lambda s: min(s.incoming_window, s.remote_incoming_window),
        f.index("fwd"): _wire_summary,
        f.index("receiver"): lambda r: (
            r.link,
            min(r.session.incoming_window, r.session.remote_incoming_window),
            len(r.unsettled),
            r.settled,
            r.drained,
        ),
        f.index("back"): _wire_summary,
        f.index("applied"): lambda a: None,
        f.index("leader_changes"): lambda n: None,
    }


def consume_violations(t: Topology) -> Callable[[Sequence[Any]], tuple[str, ...]]:
    """PROP-AMQ-CREDIT, NONNEG, AGREE, DRAIN, BOUNDS, CONSERVATION and RESEND of a
    consume state from its fields' summaries: ``properties.state_violations`` restated
    on counts (the tie: ``tests/test_amqp_checking.py``, on every state searched)."""
    assert t.relay is not None and t.queue is not None
    c = t.receiver.credit
    bound: int | None = None
    if isinstance(c, CreditWindow) and c.renew_on == "settle" and not t.receiver.grants:
        bound = c.window + (c.threshold if c.count == "outstanding" else 0)
    elif c is None:
        bound = sum(t.receiver.grants)
    max_queue_credit = t.relay.max_queue_credit
    prefetch = t.queue.prefetch if t.queue.consumer_mode == "simple_prefetch" else None
    supply = t.supply

    def violations(s: Sequence[Any]) -> tuple[str, ...]:
        ready, consumer, s2q, pending, r, ses_min, fwd, rcv, back, _, _ = s
        dc, credit, checked_out = consumer
        link, rcv_win, unsettled, settled, drained = rcv
        bad: list[str] = []
        if r.forced:
            bad.append("PROP-AMQ-CREDIT")
        if min(ses_min, rcv_win, r.client_credit, r.queue_credit, credit) < 0 or not (
            s2q[0] and pending[0] and fwd[0] and back[0]
        ):
            bad.append("PROP-AMQ-NONNEG")
        in_flight = fwd[1] or back[1]
        client_ok = (
            in_flight
            or r.stashed is not None
            or (r.client_dc == link.delivery_count and r.client_credit == max(0, link.credit))
        )
        queue_ok = (
            r.in_flight
            or s2q[5] > 0
            or pending[3] + pending[4] > 0
            or (r.queue_dc == dc and r.queue_credit == credit)
        )
        if not (client_ok and queue_ok):
            bad.append("PROP-AMQ-AGREE")
        drain_ok = not fwd[7]
        if drain_ok and not (r.stashed is not None or in_flight):
            sender_draining = r.in_flight or pending[3] + pending[4] > 0
            if link.drain and not sender_draining:
                drain_ok = False
            elif drained:
                drain_ok = (
                    max(0, link.credit) == 0
                    and r.client_credit == 0
                    and link.delivery_count == r.client_dc
                )
        if not drain_ok:
            bad.append("PROP-AMQ-DRAIN")
        if (
            (bound is not None and unsettled > bound)
            or r.queue_credit > max_queue_credit
            or (prefetch is not None and checked_out > prefetch)
        ):
            bad.append("PROP-AMQ-BOUNDS")
        held = pending[3] + fwd[2] + unsettled
        if ready + held + settled != supply or checked_out != held + back[6] + s2q[6]:
            bad.append("PROP-AMQ-CONSERVATION")
        if pending[3] > max_queue_credit:
            bad.append("PROP-AMQ-RESEND")
        return tuple(bad)

    return violations


def amqp_system(t: Topology, widths: Sequence[int] | None = None) -> InternedSystem:
    """EXP-INTERN: ``t``'s transition system packed (the explorer's fast path), with
    the consume shape's properties from summaries."""
    readable = AmqpReadable(t)
    kind, wires, bits, groups = SHAPES[t.shape]
    names = kind._fields
    fast = consume_violations(t) if t.shape == "consume" else None
    summaries = consume_summaries(t) if t.shape == "consume" else None
    return InternedSystem(
        readable,
        names,
        frozenset(names.index(w) for w in wires),
        tuple(widths) if widths is not None else tuple(bits[n] for n in names),
        groups,
        kind._make,
        fast,
        summaries,
    )


def search(
    t: Topology,
    max_states: int = 200_000,
    progress: Progress | None = None,
    packed: bool = True,
    deadline: float | None = None,
) -> SupplySearch:
    """EXP-FIRST on ``t`` (AMQ-TS, PROP-AMQ-*): breadth first, every state property at
    every state, PROP-AMQ-NO-STALL at every terminal state; stops at the first
    violation, which then has a shortest run. At most ``max_states`` states are stored.
    ``packed``: the EXP-INTERN fast path (else the readable states themselves);
    ``deadline``: FAM-DEADLINE (``DeadlinePassed`` past it)."""
    widths: Sequence[int] | None = None
    while True:
        ts: TransitionSystem[Any] = amqp_system(t, widths) if packed else AmqpReadable(t)
        try:
            found = explore_first(ts, max_states=max_states, progress=progress, deadline=deadline)
            break
        except WidthExceeded:
            assert isinstance(ts, InternedSystem)
            widths = widened([f.width for f in ts.fields])
    violation = None
    if found.index is not None:
        actions, states = found.path()
        decode: Callable[[Any], Any] = (
            ts.decode if isinstance(ts, InternedSystem) else (lambda s: s)
        )
        props = tuple(STALL if p == NO_DEADLOCK else p for p in found.property_ids)
        violation = RunViolation(
            props[0],
            tuple(ACTIONS[a] for a in actions),
            tuple(decode(s) for s in states),
            props,
        )
    return SupplySearch(t.name, found.n_states, found.complete, violation, found.seconds)


def search_every_state(
    t: Topology,
    max_states: int = 200_000,
    progress: Progress | None = None,
    deadline: float | None = None,
) -> SupplySearch:
    """``--full-search``: every reachable state within ``max_states`` (EXP-BFS, no stop
    at the first violation), so every PROP-AMQ-* is decided; the violation reported is
    the shortest one (ties: the order of PROP-AMQ-*), ``violated`` all those seen."""
    ts = amqp_system(t)
    result = explore(
        ts,
        max_states=max_states,
        reduce=False,
        stop_at_deadlock=False,
        progress=with_deadline(progress, deadline),
    )
    order = {p: i for i, p in enumerate(properties.ALL)}

    def amqp_id(pid: str) -> str:
        return STALL if pid == NO_DEADLOCK else pid

    violated = tuple(sorted((amqp_id(p) for p in result.findings), key=order.__getitem__))
    violation = None
    if result.findings:
        f = min(result.findings.values(), key=lambda f: (f.length, order[amqp_id(f.property_id)]))
        states = tuple(ts.decode(cast(int, s)) for _, s in f.path)
        last = ts.violations(cast(int, f.path[-1][1])) or (STALL,)
        violation = RunViolation(
            amqp_id(f.property_id),
            tuple(ACTIONS[a] for a, _ in f.path[1:] if a is not None),
            states,
            tuple(last),
        )
    return SupplySearch(
        t.name, result.n_states, result.complete, violation, result.seconds, violated
    )


#: The breadth-first budget tried before the directed runs (AMQ-DIRECTED-RUN).
QUICK_STATES = 10_000


def check_amqp(
    t: Topology,
    supply: int | None,
    every_supply: bool,
    max_states: int = 200_000,
    max_run_steps: int = MAX_RUN_STEPS,
    progress: Progress | None = None,
    full_search: bool = False,
    deadline: float | None = None,
) -> SupplyCheck:
    """Search ``t`` (with ``supply`` messages when given) for PROP-AMQ-* (AMQ-TS,
    AMQ-DIRECTED-RUN): breadth first within ``min(max_states, QUICK_STATES)`` states;
    when that decides nothing, the directed runs (a witness, not proved shortest); when
    they find nothing either, breadth first again within ``max_states``.
    ``full_search``: every state within ``max_states`` (:func:`search_every_state`), no
    directed run: every property decided, the witness a shortest one. ``deadline``
    (``time.monotonic()``): FAM-DEADLINE, ``DeadlinePassed`` once it passes."""
    if supply is not None:
        t = replace(t, supply=supply)
    if full_search:
        every = search_every_state(t, max_states, progress, deadline)
        return SupplyCheck(every, t.supply, every_supply, STALL)
    quick = search(t, min(max_states, QUICK_STATES), progress, deadline=deadline)
    if quick.complete or quick.violation is not None:
        return SupplyCheck(quick, t.supply, every_supply, STALL)
    runs = directed_runs(t, max_run_steps, deadline)
    w = runs.witness
    if w is not None:
        found = RunViolation(w.prop, w.steps, w.states, w.props)
        return SupplyCheck(
            replace(quick, violation=found), t.supply, every_supply, STALL, runs.steps_taken, False
        )
    full = (
        search(t, max_states, progress, deadline=deadline) if max_states > QUICK_STATES else quick
    )
    return SupplyCheck(full, t.supply, every_supply, STALL, runs.steps_taken)


@dataclass(frozen=True)
class AmqpChecking:
    """FAM-CHECKING for AMQP: the packed system (EXP-INTERN) of a topology with the
    command's supply; no symmetry is argued (``--no-symmetry`` has nothing to turn
    off and is refused: FAM-OPTIONS)."""

    def system(self, instance: Any, options: Mapping[str, Any]) -> TransitionSystem[Any]:
        t = instance.topology if hasattr(instance, "topology") else instance
        supply = options.get("publishes")
        if supply is not None:
            t = replace(t, supply=supply)
        return amqp_system(t)

    def symmetry(self, system: TransitionSystem[Any]) -> Any | None:
        return None

    def supply(self, instance: Any) -> int | None:
        t = instance.topology if hasattr(instance, "topology") else instance
        return int(t.supply)

    def check(self, instance: Any, options: Mapping[str, Any]) -> SupplyCheck:
        """``creditflow check``'s search of ``instance`` with the command's options."""
        t = instance.topology if hasattr(instance, "topology") else instance
        return check_amqp(
            t,
            options.get("publishes"),
            bool(options.get("every_supply")),
            int(options.get("max_states", 200_000)),
            progress=options.get("progress"),
            full_search=bool(options.get("full_search")),
        )


#: FAM-CHECKING: the AMQP family's checking part
CHECKING = AmqpChecking()
