"""A credit network compiled to straight-line Python for the explorer's hot loop.

:class:`~creditflow.conformance.explore.network_system.CheckedNetwork` is the readable model. This
module generates, per graph, the source of four functions with every index and
constant inlined — ``successors``, ``first_safe``, ``violations`` and
``blocked_mask`` — and compiles it. They must agree exactly with the readable model
(same actions, same order, same states, same violated properties, same blocked
processes); ``tests/test_compiled_network.py`` checks that on every reachable state of
random graphs, and the checks on arbitrary states.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from creditflow.conformance.explore.encoding import (
    ACTION_SHIFT,
    BUMP,
    BUMPS,
    CREDIT_FROM,
    CREDIT_TO,
    DATA,
    DEFERRED,
    EDGE_FIELDS,
    READ,
    TAKE,
    CreditNetwork,
    State,
)
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.properties import (
    CONSERVATION,
    DEFERRED_IMPLIES_BLOCKED,
    IN_FLIGHT_BOUND,
    MAILBOX_BOUND,
    NOTHING_LOST,
)
from creditflow.conformance.explore.vectorized import VectorNetwork
from creditflow.model.network.graph import FlowGraph


def _blocked_expr(slots: tuple[int, ...], var: str = "s") -> str:
    if not slots:
        return "False"
    return "(" + " or ".join(f"{var}[{i}] <= 0" for i in slots) + ")"


class _Source:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _forward(src: _Source, depth: int, checked: CheckedNetwork, node: int) -> None:
    net = checked.network
    for e in net.out_edges[node]:
        base = EDGE_FIELDS * e
        src.emit(depth, f"l[{base + CREDIT_FROM}] -= {net.debits[e]}")
        src.emit(depth, f"l[{base + DATA}] += 1")
    slot = net.delivered_slot.get(node)
    if slot is not None:
        src.emit(depth, f"l[{slot}] += 1")


def _action_blocks(checked: CheckedNetwork) -> list[tuple[int, str, list[str]]]:
    """For each action in the model's enabled order: (code, guard, body lines)."""
    net = checked.network
    blocks = []

    def can_work(node: int) -> str:
        return f"not b{node}" if net.checks[node] else "True"

    for node in net.source_nodes:
        if net.stalled[node]:
            continue
        src = _Source()
        slot = net.remaining_slot[node]
        src.emit(0, f"l[{slot}] -= 1")
        _forward(src, 0, checked, node)
        guard = f"s[{slot}] > 0 and {can_work(node)}"
        blocks.append((READ << ACTION_SHIFT | node, guard, src.lines))
    for e, (_, receiver) in enumerate(net.edge_ends):
        if net.stalled[receiver]:
            continue
        base = EDGE_FIELDS * e
        src = _Source()
        src.emit(0, f"l[{base + DATA}] -= 1")
        for _ in range(net.debits[e]):
            src.emit(0, f"c = l[{base + CREDIT_TO}]")
            src.emit(0, "if c == 1:")
            src.emit(1, f"l[{base + CREDIT_TO}] = {net.more_after[e]}")
            src.emit(1, f"l[{base + DEFERRED} if b{receiver} else {base + BUMPS}] += 1")
            src.emit(0, "else:")
            src.emit(1, f"l[{base + CREDIT_TO}] = c - 1")
        _forward(src, 0, checked, receiver)
        guard = f"s[{base + DATA}] > 0 and {can_work(receiver)}"
        blocks.append((TAKE << ACTION_SHIFT | e, guard, src.lines))
    for e, (sender, _) in enumerate(net.edge_ends):
        if net.stalled[sender]:
            continue
        base = EDGE_FIELDS * e
        m = net.more_after[e]
        src = _Source()
        src.emit(0, f"l[{base + BUMPS}] -= 1")
        src.emit(0, f"c = l[{base + CREDIT_FROM}]")
        src.emit(0, f"l[{base + CREDIT_FROM}] = c + {m}")
        flush = []
        for g in net.in_edges[sender]:
            gb = EDGE_FIELDS * g
            flush.append(f"l[{gb + BUMPS}] += l[{gb + DEFERRED}]")
            flush.append(f"l[{gb + DEFERRED}] = 0")
        if flush:
            still = _blocked_expr(net.blocking_slots[sender], "l")
            src.emit(0, f"if c <= 0 < c + {m} and not {still}:")
            for line in flush:
                src.emit(1, line)
        guard = f"s[{base + BUMPS}] > 0"
        blocks.append((BUMP << ACTION_SHIFT | e, guard, src.lines))
    return blocks


def _prelude(src: _Source, checked: CheckedNetwork) -> None:
    net = checked.network
    for node in range(net.n_nodes):
        src.emit(1, f"b{node} = {_blocked_expr(net.blocking_slots[node])}")


_WRITE = re.compile(r"^(\s*)l\[([^\]]+)\] (\+=|-=|=) (.+)$")


def moves_of_body(body: list[str], slots: frozenset[int]) -> dict[int, int]:
    """The change an action's generated body makes to each message slot (FIFOs and
    supplies), read off the body itself. Message slots may only be changed by
    unconditional ``+=``/``-=`` of a constant, so the change is the same in every state
    the action fires in (checked here; anything else is an internal error)."""
    change: dict[int, int] = {}
    for line in body:
        match = _WRITE.match(line)
        if match is None:
            continue
        indent, target, op, value = match.groups()
        written = {int(t) for t in re.findall(r"\b\d+\b", target)}
        if not written & slots:
            continue
        if indent or op == "=" or not target.isdigit() or not value.isdigit():
            raise RuntimeError(f"internal error: a message slot changes conditionally: {line!r}")
        slot = int(target)
        change[slot] = change.get(slot, 0) + (int(value) if op == "+=" else -int(value))
    return change


def _moves_wrong(checked: CheckedNetwork, code: int, body: list[str]) -> bool:
    """PROP-NOTHING-LOST (step form) of one action: whether its steps do not move messages
    as :class:`MessageMoves` says (the expected changes come from the graph, not from the
    body). The body's change is state-independent (:func:`moves_of_body`), so this one
    comparison decides every step of the action exactly as a per-step check would."""
    moves = getattr(checked, "moves", None)
    if moves is None or not moves.slots:
        return False
    actual = moves_of_body(body, frozenset(moves.slots))
    expected = moves.change(code)
    return any(actual.get(slot, 0) != d for slot, d in zip(moves.slots, expected, strict=True))


def _emit_action(
    src: _Source, code: int, guard: str, body: list, finish: str, bad_moves: frozenset[int]
) -> None:
    """One action's guarded block: the successor state in ``l``, the step's
    PROP-NOTHING-LOST verdict (logged on every step of an action in ``bad_moves``), then
    ``finish`` (append it, or return it)."""
    src.emit(1, f"if {guard}:")
    src.emit(2, "l = list(s)")
    for line in body:
        src.emit(2, line)
    if code in bad_moves:
        src.emit(2, f"LOST.append({code})")
    src.emit(2, finish)


def _successors_source(checked: CheckedNetwork, blocks: list, bad_moves: frozenset[int]) -> str:
    src = _Source()
    src.emit(0, "def successors(s):")
    src.emit(1, "out = []")
    _prelude(src, checked)
    for code, guard, body in blocks:
        _emit_action(src, code, guard, body, f"out.append(({code}, tuple(l)))", bad_moves)
    src.emit(1, "return out")
    return src.text()


def _first_safe_source(checked: CheckedNetwork, blocks: list, bad_moves: frozenset[int]) -> str:
    src = _Source()
    src.emit(0, "def first_safe(s):")
    _prelude(src, checked)
    for code, guard, body in blocks:
        if code in checked.safe_actions:
            _emit_action(src, code, guard, body, f"return ({code}, tuple(l))", bad_moves)
    src.emit(1, "return None")
    return src.text()


def _in_edges_expr(net: CreditNetwork, node: int, field: int, joiner: str) -> str:
    """``field`` of every edge into ``node``, joined (``or``: any set; ``+``: the sum)."""
    return joiner.join(f"s[{EDGE_FIELDS * g + field}]" for g in net.in_edges[node])


def _times(factor: int, term: str) -> str:
    return term if factor == 1 else f"{factor} * {term}"


def _blocked_mask_source(checked: CheckedNetwork) -> str:
    """NET-BLOCKED for every node at once, as :meth:`CreditNetwork.blocked_mask`."""
    net = checked.network
    parts = [
        f"({1 << node} if {_blocked_expr(slots)} else 0)"
        for node, slots in enumerate(net.blocking_slots)
        if slots
    ]
    return "def blocked_mask(s):\n    return " + (" | ".join(parts) or "0") + "\n"


def _violations_source(checked: CheckedNetwork) -> str:
    net = checked.network
    props = checked.properties
    src = _Source()
    src.emit(0, "def violations(s):")
    src.emit(1, "found = []")
    conserved, bounded = [], []
    for e, spec in enumerate(net.graph.edges):
        base = EDGE_FIELDS * e
        k, m, i = spec.sends_per_message, spec.credit.more_after, spec.credit.initial
        # PROP-CONSERVATION, constants folded: cf + k·data + (m − ct) + m·(bumps + def) = i
        conserved.append(
            f"s[{base + CREDIT_FROM}] + {_times(k, f's[{base + DATA}]')} - s[{base + CREDIT_TO}]"
            f" + {_times(m, f'(s[{base + BUMPS}] + s[{base + DEFERRED}])')} != {i - m}"
        )
        if net.checks[net.edge_ends[e][0]] and spec.credit.blocks:
            bounded.append(
                f"{k} * s[{base + DATA}] > {i + k - 1} or s[{base + CREDIT_FROM}] < {1 - k}"
            )
    if conserved:
        src.emit(1, f"if {' or '.join(conserved)}:")
        src.emit(2, f"found.append({CONSERVATION!r})")
    if bounded:
        src.emit(1, f"if {' or '.join(bounded)}:")
        src.emit(2, f"found.append({IN_FLIGHT_BOUND!r})")
    deferring = [
        f"(({_in_edges_expr(net, node, DEFERRED, ' or ')}) and not "
        f"{_blocked_expr(net.blocking_slots[node])})"
        for node in range(net.n_nodes)
        if net.in_edges[node]
    ]
    if deferring:
        src.emit(1, f"if {' or '.join(deferring)}:")
        src.emit(2, f"found.append({DEFERRED_IMPLIES_BLOCKED!r})")
    if props.mailbox_bound is not None:
        over = [
            f"{_in_edges_expr(net, node, DATA, ' + ')} > {props.mailbox_bound}"
            for node in range(net.n_nodes)
            if net.in_edges[node]
        ]
        if over:
            src.emit(1, f"if {' or '.join(over)}:")
            src.emit(2, f"found.append({MAILBOX_BOUND!r})")
    if props.lost_terms is not None:
        lost = []
        for delivered_slot, data_weights, source_weights in props.lost_terms:
            left = " + ".join([f"s[{delivered_slot}]", *(f"{w} * s[{i}]" for i, w in data_weights)])
            right = " + ".join(["0", *(f"{w} * ({t} - s[{i}])" for i, t, w in source_weights)])
            lost.append(f"({left}) != ({right})")
        if lost:
            src.emit(1, f"if {' or '.join(lost)}:")
            src.emit(2, f"found.append({NOTHING_LOST!r})")
    src.emit(1, "return tuple(found)")
    return src.text()


def compile_network(checked: CheckedNetwork) -> dict[str, Any]:
    """Generate and compile ``successors``, ``first_safe``, ``violations`` and
    ``blocked_mask``."""
    blocks = _action_blocks(checked)
    namespace: dict[str, Any] = {"LOST": []}
    # PROP-NOTHING-LOST (step form): decided once per action, from its body
    bad_moves = frozenset(code for code, _, body in blocks if _moves_wrong(checked, code, body))
    namespace["BAD_MOVES"] = bad_moves
    source = (
        _successors_source(checked, blocks, bad_moves)
        + _first_safe_source(checked, blocks, bad_moves)
        + _violations_source(checked)
        + _blocked_mask_source(checked)
    )
    exec(compile(source, f"<compiled network {checked.graph.name!r}>", "exec"), namespace)
    namespace["__source__"] = source
    return namespace


#: IN-WORK: the largest graph (nodes + edges) whose functions are compiled; a larger
#: one runs the readable (interpreted) functions, which agree with the compiled ones
#: exactly: generated expressions grow with the graph and CPython's compiler recurses
#: on them (a 10,000-node chain overflows its stack).
COMPILE_LIMIT = 600


class CompiledNetwork(CheckedNetwork):
    """:class:`CheckedNetwork` with the hot functions replaced by compiled ones (only up
    to :data:`COMPILE_LIMIT`, IN-WORK; ``compiled`` says whether they were)."""

    def __init__(
        self, graph: FlowGraph, mailbox_bound: int | None = None, count_consumed: bool = True
    ) -> None:
        super().__init__(graph, mailbox_bound, count_consumed)
        # EXP-FAULTS: a graph with faults runs the readable (interpreted) encoding, one
        # state at a time (neither compiled nor vectorized)
        self.compiled = (
            len(graph.nodes) + len(graph.edges) <= COMPILE_LIMIT and not self.network.crashable
        )
        if not self.compiled:
            self.source = ""
            self.lazy_enabled = self.network.enabled
            self.lazy_apply = self.network.apply
            return
        compiled = compile_network(self)
        self.source = compiled["__source__"]
        # the hot methods of CheckedNetwork, replaced by their compiled forms (same types)
        for method in ("successors", "violations", "blocked_mask"):
            setattr(self, method, compiled[method])
        self.first_safe: Callable[[State], tuple[int, State] | None] = compiled["first_safe"]
        if not count_consumed:
            # PROP-NOTHING-LOST (step form) is checked inside the compiled successors,
            # which log the codes of bad steps here for the explorer (EXP-FINITE)
            self.step_log: list[int] = compiled["LOST"]
            self.step_log_property = NOTHING_LOST
            #: the actions whose every step breaks it (what the log would say)
            self.bad_move_actions: frozenset[int] = compiled["BAD_MOVES"]
        #: EXP-VECTOR: the same rules over blocks of states, for the explorer
        self.vectorized = VectorNetwork(self)
