"""The steps of a trace as data, for reading (TRACE-STEPS).

:func:`network_witness` turns a credit-network ITF document (TRACE-NETWORK-VARS) into a
:class:`Witness`: each step's action and what it caused (blocked, unblocked, grants
sent, deferred or released), found by comparing consecutive states; repeated steps
and repeated blocks of up to :data:`MAX_PERIOD` steps gathered into :class:`StepRun`;
who is blocked forever at the violating state and who is blocked in the last one.
:func:`generic_steps` does the same for any other of our ITF traces (action and
picks). No text here: the command line words it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from creditflow.conformance.inputs.graphs import graph_from_node_link
from creditflow.conformance.inputs.itf import TraceFormatError, decoded_states, pick_value
from creditflow.model.network.graph import GraphError

#: TRACE-STEPS: the longest block of steps recognised as repeating.
MAX_PERIOD = 4

EffectKind = Literal["blocked", "unblocked", "grants", "defers", "releases"]


@dataclass(frozen=True)
class Effect:
    """What a step caused besides its action: ``process`` became ``blocked`` on
    ``peer`` or ``unblocked`` from it; or ``process`` ``grants`` / ``defers`` /
    ``releases`` (deferred) credit ``amount`` to ``peer``."""

    kind: EffectKind
    process: str
    peer: str
    amount: int = 0


@dataclass(frozen=True)
class Step:
    """Step ``number`` (1 = the first after the initial state): ``node`` reads
    (``publish``: which of its supply), takes a message from ``peer``, or handles a
    grant of ``grant`` from ``peer``; with its :class:`Effect` s."""

    number: int
    action: str
    node: str
    peer: str | None = None
    publish: int | None = None
    grant: int | None = None
    effects: tuple[Effect, ...] = ()

    @property
    def pattern(self) -> Hashable:
        """What makes two steps "the same step" for TRACE-STEPS (all but the number
        and the publish's position)."""
        return (self.action, self.node, self.peer, self.grant, self.effects)


@dataclass(frozen=True)
class StepRun:
    """Consecutive steps that repeat a block of ``period`` steps ``repeat`` times."""

    steps: tuple[Step, ...]
    period: int

    @property
    def repeat(self) -> int:
        return len(self.steps) // self.period

    @property
    def first(self) -> int:
        return self.steps[0].number

    @property
    def last(self) -> int:
        return self.steps[-1].number

    @property
    def block(self) -> tuple[Step, ...]:
        return self.steps[: self.period]

    def publishes(self, position: int) -> tuple[int, int] | None:
        """The first and last publish read by the block's step at ``position``."""
        numbers = [s.publish for s in self.steps[position :: self.period] if s.publish]
        return (numbers[0], numbers[-1]) if numbers else None


@dataclass(frozen=True)
class Witness:
    """A credit-network trace for reading (TRACE-STEPS): the runs of steps (split where
    the violation happens and where the lasso's loop starts), the property violated at
    step ``length`` and who is blocked forever there, where the loop goes back to, and
    every process blocked in the last state with its blockers."""

    graph: str
    property_id: str | None
    kind: str | None
    length: int | None
    runs: tuple[StepRun, ...]
    blocked_forever: tuple[str, ...]
    loop_start: int | None
    final_blocked: tuple[tuple[str, tuple[str, ...]], ...]
    steps: int
    detail: str = ""


def compress(steps: Sequence[Step]) -> list[StepRun]:
    """TRACE-STEPS: greedy run-length compression: at each step the block of at most
    :data:`MAX_PERIOD` steps repeated most often (covering the most steps) becomes one
    run; a step repeated on its own is a run of period 1."""
    runs: list[StepRun] = []
    keys = [s.pattern for s in steps]
    i = 0
    while i < len(steps):
        best_period, best_cover = 1, 1
        for period in range(1, MAX_PERIOD + 1):
            if i + 2 * period > len(steps):
                break
            block = keys[i : i + period]
            reps = 1
            while keys[i + reps * period : i + (reps + 1) * period] == block:
                reps += 1
            if reps >= 2 and reps * period > best_cover:
                best_period, best_cover = period, reps * period
        runs.append(StepRun(tuple(steps[i : i + best_cover]), best_period))
        i += best_cover
    return runs


def _pairs(state: Mapping[str, Any], var: str) -> Mapping[tuple[str, str], int]:
    value = state.get(var, {})
    return value if isinstance(value, Mapping) else {}


def _effects(
    before: Mapping[str, Any], after: Mapping[str, Any], more_after: Mapping[tuple[str, str], int]
) -> tuple[Effect, ...]:
    blocked: list[Effect] = []
    unblocked: list[Effect] = []
    was, now = before.get("blocked", {}), after.get("blocked", {})
    for process in now:
        for peer in sorted(set(now[process]) - set(was.get(process, ()))):
            blocked.append(Effect("blocked", str(process), str(peer)))
        for peer in sorted(set(was.get(process, ())) - set(now[process])):
            unblocked.append(Effect("unblocked", str(process), str(peer)))
    credit: list[Effect] = []
    bumps_before, bumps_after = _pairs(before, "bumps_in_flight"), _pairs(after, "bumps_in_flight")
    held_before, held_after = _pairs(before, "deferred"), _pairs(after, "deferred")
    for pair in bumps_after:
        sender, receiver = pair
        m = more_after.get(pair, 0)
        sent = bumps_after[pair] - bumps_before.get(pair, 0)
        held = held_after.get(pair, 0) - held_before.get(pair, 0)
        if held > 0:
            credit.append(Effect("defers", str(receiver), str(sender), held * m))
        if held < 0 and sent > 0:
            credit.append(Effect("releases", str(receiver), str(sender), -held * m))
            sent += held
        if sent > 0:
            credit.append(Effect("grants", str(receiver), str(sender), sent * m))
    # in the order they happen: an unblock (NET-BUMP) before the deferred grants it
    # releases; a take's grant (CF-ACK) before the forward that may block (NET-TAKE)
    effects = unblocked + credit + blocked
    return tuple(effects)


def network_witness(doc: Mapping[str, Any], where: str = "trace") -> Witness:
    """TRACE-STEPS of a credit-network ITF document (one the model replays,
    TRACE-REPLAY; run that first). :class:`TraceFormatError` if the document is not a
    credit-network trace."""
    meta = doc.get("#meta", {}).get("creditflow", {})
    try:
        graph = graph_from_node_link(meta.get("graph"), name=str(doc["#meta"].get("source")))
    except GraphError as exc:
        raise TraceFormatError(f"{where}: embedded graph: {exc}") from None
    more_after = {(e.sender, e.receiver): e.credit.more_after for e in graph.edges}
    supply = {n.name: n.publishes for n in graph.sources}
    states = decoded_states(doc)
    steps: list[Step] = []
    for number in range(1, len(states)):
        before, after = states[number - 1], states[number]
        picks = after.get("mbt::nondetPicks")
        picks = picks if isinstance(picks, Mapping) else {}
        action = str(after.get("mbt::actionTaken"))
        node = str(pick_value(picks, "node") or "")
        peer = pick_value(picks, "peer")
        publish = None
        if action == "read":
            publish = supply.get(node, 0) - int(after.get("publishes_left", {}).get(node, 0))
        grant = more_after.get((node, str(peer))) if action == "bump" else None
        steps.append(
            Step(
                number,
                action,
                node,
                None if peer is None else str(peer),
                publish,
                grant,
                _effects(before, after, more_after),
            )
        )
    length = meta.get("length")
    loop = doc.get("loop")
    cuts = sorted({c for c in (length, loop) if isinstance(c, int) and 0 < c < len(steps)})
    runs: list[StepRun] = []
    start = 0
    for cut in [*cuts, len(steps)]:
        runs.extend(compress(steps[start:cut]))
        start = cut
    last = states[-1].get("blocked", {}) if states else {}
    return Witness(
        graph=graph.name,
        property_id=meta.get("property"),
        kind=meta.get("kind"),
        length=length if isinstance(length, int) else None,
        runs=tuple(runs),
        blocked_forever=tuple(meta.get("processes") or ()),
        loop_start=loop if isinstance(loop, int) else None,
        final_blocked=tuple(
            (str(p), tuple(sorted(str(b) for b in blockers)))
            for p, blockers in last.items()
            if blockers
        ),
        steps=len(steps),
        detail=str(meta.get("detail") or ""),
    )


#: TRACE-STEPS: the picks that name the acting process, by model
ACTOR_PICKS = ("node", "proc", "actor")


def generic_steps(doc: Mapping[str, Any]) -> list[StepRun]:
    """TRACE-STEPS of any other ITF trace of ours (per-process, accounts, alarms): each
    step's action and its picks (``node``/``proc``/``actor`` as the actor, the rest as
    peer),
    repeated steps compressed."""
    steps: list[Step] = []
    for number, state in enumerate(decoded_states(doc)[1:], start=1):
        picks = state.get("mbt::nondetPicks")
        picks = picks if isinstance(picks, Mapping) else {}
        values = {k: pick_value(picks, k) for k in picks}
        # the acting process: ``node`` (network), ``proc`` (per-process), ``actor`` (accounts)
        who = next((k for k in ACTOR_PICKS if values.get(k)), None)
        actor = values[who] if who else ""
        rest = ", ".join(f"{k}={v}" for k, v in values.items() if k != who and v is not None)
        steps.append(
            Step(number, str(state.get("mbt::actionTaken", "?")), str(actor), rest or None)
        )
    return compress(steps)
