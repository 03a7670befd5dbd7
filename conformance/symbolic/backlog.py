"""The stalled-queue backlog ``I + M*floor(I/M)`` proved for every credit spec
(Z3-BACKLOG).

For a chain ``reader -> channel -> queue`` where the reader checks its blocked state,
the channel does not, and the queue is stalled (the ``stalled-queue`` preset,
spec/sources.md 1.6), with one spec ``{I, M}`` on both hops and any supply ``P``:

* ``I >= 1, M >= 1``: the queue's mailbox never exceeds ``I + M*q`` with
  ``q = floor(I/M)``, and every terminal state of a run with ``P >= I + M*q`` has
  exactly that many messages queued and the reader blocked;
* ``I >= 1, M <= 0`` (no grants): the same with ``I``;
* ``I <= 0`` (never blocks): every terminal state has read the whole supply into the
  queue: no bound.

The case ``M >= 1`` needs two facts the state does not spell out, kept as a *ghost*:
``G``, the grants the channel has issued to the reader, with ``M*G + (M -
credit_to) = messages the channel took``, and ``deferred = max(0, G - q)``: the
channel is blocked exactly from its ``I``-th message on, so the grants at acks
``M, 2M, ..`` up to ``I`` go out and every later one is deferred forever.
Every obligation is one Z3 query over symbolic ``I``, ``M``, ``P`` and state.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from creditflow.conformance.explore.encoding import (
    ACTION_SHIFT,
    BUMPS,
    CREDIT_TO,
    DEFERRED,
    EDGE_FIELDS,
    TAKE,
)
from creditflow.conformance.symbolic.encoding import Credits, NetworkEncoding
from creditflow.conformance.symbolic.invariants import (
    DEFAULT_TIMEOUT_MS,
    FAILED,
    PROVED,
    Obligation,
    check_valid,
    houdini,
)
from creditflow.model.network.graph import FlowGraph


@dataclass
class BacklogTheorem:
    """Z3-BACKLOG: the statements and the obligations that prove them."""

    applicable: bool
    reason: str = ""
    statements: list[str] = field(default_factory=list)
    obligations: list[Obligation] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def proved(self) -> bool:
        return self.applicable and all(o.status == PROVED for o in self.obligations)


def stalled_chain(graph: FlowGraph) -> tuple[str, str, str] | None:
    """``(reader, channel, queue)`` if ``graph`` is a checking source feeding a
    non-checking relay feeding a stalled sink, one send per message; else ``None``."""
    if len(graph.nodes) != 3 or len(graph.edges) != 2:
        return None
    first, second = graph.edges
    if first.receiver != second.sender:
        first, second = second, first
    if first.receiver != second.sender or first.sends_per_message != 1:
        return None
    if second.sends_per_message != 1:
        return None
    reader, channel, queue = (
        graph.node(n) for n in (first.sender, first.receiver, second.receiver)
    )
    if not (reader.source and reader.checks_blocked and not reader.stalled):
        return None
    if channel.source or channel.checks_blocked or channel.stalled or not queue.stalled:
        return None
    if queue.source:
        return None
    return reader.name, channel.name, queue.name


def prove_stalled_backlog(graph: FlowGraph, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> BacklogTheorem:
    """Z3-BACKLOG for ``graph`` (see the module docstring) with one symbolic spec on both
    hops and a symbolic supply."""
    started = time.perf_counter()
    names = stalled_chain(graph)
    if names is None:
        return BacklogTheorem(
            False,
            "not a checking source -> relay -> stalled sink chain",
            seconds=time.perf_counter() - started,
        )
    reader, channel, queue = names
    enc = NetworkEncoding(graph, Credits.GLOBAL, symbolic_supply=True)
    inv = houdini(enc, enc.lemmas(), timeout_ms=timeout_ms)
    i, m = enc.params["I"], enc.params["M"]
    supply = enc.params[f"P[{reader}]"]
    net = enc.net
    rc = net.edge_index[(reader, channel)]
    x = enc.x
    r = net.node_index[reader]
    q_node = net.node_index[queue]
    remaining = x[net.remaining_slot[r]]
    mailbox = enc.mailbox(q_node)
    base = z3.And(enc.param_constraints, inv.formula)
    obligations: list[Obligation] = []

    def check(name: str, hyp: z3.BoolRef, goal: z3.BoolRef, step: bool = False) -> None:
        """One obligation. A hypothesis no state satisfies would prove anything, so that
        of a statement must be satisfiable (non-vacuity); a step's may not be (the
        action is then never enabled in that case)."""
        t = time.perf_counter()
        verdict, _ = check_valid(hyp, goal, timeout_ms)
        if verdict == PROVED and not step:
            vacuous, _ = check_valid(hyp, z3.BoolVal(False), timeout_ms)
            if vacuous != FAILED:
                verdict = "vacuous" if vacuous == PROVED else vacuous
        obligations.append(Obligation(name, verdict, time.perf_counter() - t))

    # I >= 1, M >= 1: the ghost G and q = floor(I/M)
    q, g = z3.Ints("q G")
    floor = z3.And(q >= 0, m * q <= i, i < m * (q + 1))
    taken = mailbox  # the queue never takes: the channel forwarded every message it took

    def ghost(state: tuple, grants: z3.ArithRef) -> z3.BoolRef:
        ct = state[EDGE_FIELDS * rc + CREDIT_TO]
        deferred = state[EDGE_FIELDS * rc + DEFERRED]
        took = enc.at(taken, state)
        return z3.And(
            grants >= 0,
            m * grants + (m - ct) == took,
            deferred == z3.If(grants > q, grants - q, 0),
        )

    case1 = z3.And(base, i >= 1, m >= 1, floor)
    check(
        "backlog: the initial state satisfies the ghost facts",
        z3.And(enc.param_constraints, i >= 1, m >= 1, floor),
        ghost(enc.initial(), z3.IntVal(0)),
    )
    take_rc = TAKE << ACTION_SHIFT | rc
    for a in enc.actions:
        if z3.is_false(enc.guards[a]):
            continue
        nxt = enc.nexts[a]
        if a == take_rc:
            b_d = x[EDGE_FIELDS * rc + BUMPS] + x[EDGE_FIELDS * rc + DEFERRED]
            b_d_next = nxt[EDGE_FIELDS * rc + BUMPS] + nxt[EDGE_FIELDS * rc + DEFERRED]
            g_next = g + (b_d_next - b_d)
        else:
            g_next = g
        check(
            f"backlog: {enc.describe(a)} keeps the ghost facts",
            z3.And(case1, ghost(enc.x, g), enc.guards[a]),
            ghost(nxt, g_next),
            step=True,
        )
    bound = i + m * q
    check(
        "backlog: mailbox <= I + M*floor(I/M) in every state",
        z3.And(case1, ghost(enc.x, g)),
        mailbox <= bound,
    )
    check(
        "backlog: a terminal state with supply >= I + M*floor(I/M) has exactly that "
        "backlog and the reader blocked",
        z3.And(case1, ghost(enc.x, g), enc.terminal, supply >= bound),
        z3.And(mailbox == bound, enc.blocked[r]),
    )
    # I >= 1, M <= 0: no grants at all; ghost-free facts: every ack is counted down from
    # M (never reset) and the reader's credit is I minus what it read

    def no_grants(state: tuple) -> z3.BoolRef:
        return z3.And(
            m - state[EDGE_FIELDS * rc + CREDIT_TO] == enc.at(mailbox, state),
            state[EDGE_FIELDS * rc] == i - (supply - state[net.remaining_slot[r]]),
        )

    case2 = z3.And(base, i >= 1, m <= 0)
    check(
        "backlog (M <= 0): the initial state satisfies the counting facts",
        z3.And(enc.param_constraints, i >= 1, m <= 0),
        no_grants(enc.initial()),
    )
    for a in enc.actions:
        if z3.is_false(enc.guards[a]):
            continue
        check(
            f"backlog (M <= 0): {enc.describe(a)} keeps the counting facts",
            z3.And(case2, no_grants(enc.x), enc.guards[a]),
            no_grants(enc.nexts[a]),
            step=True,
        )
    check(
        "backlog (M <= 0): mailbox <= I in every state",
        z3.And(case2, no_grants(enc.x)),
        mailbox <= i,
    )
    check(
        "backlog (M <= 0): a terminal state with supply >= I has backlog I, reader blocked",
        z3.And(case2, no_grants(enc.x), enc.terminal, supply >= i),
        z3.And(mailbox == i, enc.blocked[r]),
    )
    # I <= 0: nobody ever blocks
    check(
        "backlog (I <= 0): a terminal state has the whole supply queued",
        z3.And(base, i <= 0, enc.terminal),
        z3.And(remaining == 0, mailbox == supply),
    )
    statements = [
        f"for all I >= 1, M >= 1 and every supply P: {queue}'s mailbox <= I + M*floor(I/M) "
        f"in every reachable state; if P >= I + M*floor(I/M), every terminal state has "
        f"exactly I + M*floor(I/M) messages queued and {reader} blocked",
        "for all I >= 1, M <= 0: the same with I (no grant is ever sent)",
        "for all I <= 0: every terminal state has all P messages queued (no back-pressure)",
    ]
    return BacklogTheorem(
        True, statements=statements, obligations=obligations, seconds=time.perf_counter() - started
    )
