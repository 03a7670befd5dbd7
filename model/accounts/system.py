"""Accounts with their properties, as a :class:`~creditflow.model.system.TransitionSystem`.

A checked state is ``(model state, violated step properties)``: the step properties
(AC-SUSPEND-IFF, AC-BORROW-BEFORE-REPAY, AC-CHARGE) are predicates of transitions, so
a transition that violates one leads to a state carrying its bit, where the explorer
sees it like a state property. Without violations the bits are 0 and the state space
is the model's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from creditflow.model.accounts.graph import ActorGraph
from creditflow.model.accounts.properties import (
    DEBT_SUM,
    OVERSHOOT,
    OVERSHOOT_NAIVE,
    STEP_PROPERTIES,
    WAIT_OVER_LIMIT,
    AccountsProperties,
)
from creditflow.model.accounts.rules import (
    PHASE_NAMES,
    WAITING,
    AccountsModel,
    AccountsState,
    ActorState,
)
from creditflow.model.system import StepChecked

CheckedState = tuple[AccountsState, int]


class CheckedAccounts(StepChecked):
    """The AC transition system of an actor graph plus its AC properties."""

    def __init__(
        self,
        graph: ActorGraph,
        naive_bound: bool = False,
        model: AccountsModel | None = None,
        symmetry: bool = False,
    ) -> None:
        self.graph = graph
        self.model = model if model is not None else AccountsModel(graph)
        self.properties = AccountsProperties(self.model, naive=naive_bound)
        #: EXP-SYMMETRY-TWINS: with the symmetry the explorer canonicalizes by, only one
        #: of interchangeable actors in equal sub-states acts (None: every actor acts)
        self.symmetry = actor_symmetry(self.model) if symmetry else None
        self.process_names = graph.actor_names
        self.step_property_ids = STEP_PROPERTIES
        self.property_ids = (*self.properties.state_ids, *STEP_PROPERTIES)

    def successors(self, state: CheckedState) -> Sequence[tuple[int, CheckedState]]:
        """Every enabled (action, next state) pair; with :attr:`symmetry`, the actions
        of an actor whose twin (interchangeable, EXP-SYMMETRY, and in an equal
        sub-state) comes earlier are left out: the swap of the two fixes the state and
        maps one's successor onto the other's, so both have the same canonical form
        (EXP-SYMMETRY-TWINS). An expansion then costs the distinct sub-states, not the
        group's size."""
        if self.symmetry is None:
            return super().successors(state)
        s, bits = state
        twins = self.symmetry.later_twins(s)
        out = []
        for action in self.model.enabled(s):
            if twins and self.model.acting_actor(action) in twins:
                continue
            outcome = self.model.apply(s, action)
            bad = bits
            for pid in self.properties.step_violations(s, action, outcome):
                bad |= 1 << self.step_property_ids.index(pid)
            out.append((action, (outcome.state, bad)))
        return out

    def describe(self, action: int) -> str:
        return str(self.model.decode(action))

    def explain(self, state: CheckedState, property_id: str) -> str:
        s = state[0]
        m = self.model
        if property_id == DEBT_SUM:
            sums = self.properties.loan_sums(s)
            return "; ".join(
                f"{name}: debt {d} but live loans {t}"
                for name, d, t in zip(m.account_names, s.debt, sums, strict=True)
                if d != t
            )
        if property_id in (OVERSHOOT, OVERSHOOT_NAIVE):
            naive = property_id == OVERSHOOT_NAIVE
            return "; ".join(
                f"{b.account}: debt {d} > {'naive ' if naive else ''}bound "
                f"{b.naive if naive else b.bound}"
                for d, b in zip(s.debt, self.properties.bounds, strict=True)
                if d > (b.naive if naive else b.bound)
            )
        if property_id == WAIT_OVER_LIMIT:
            return ", ".join(
                f"{m.actor_names[m.reader_actor[r]]} waits with debt "
                f"{s.debt[m.reader_account[r]]} <= limit {m.limit}"
                for r, rs in enumerate(s.readers)
                if rs.phase == WAITING
            )
        return property_id

    def render(self, state: CheckedState) -> Mapping[str, Any]:
        """Named variables (the ITF ``vars``) of an accounts state."""
        s = state[0]
        m = self.model
        acc = m.account_names
        return {
            "debt": dict(zip(acc, s.debt, strict=True)),
            "permit": dict(zip(acc, s.permit, strict=True)),
            "waiters": {
                a: tuple(m.actor_names[m.reader_actor[r]] for r in w)
                for a, w in zip(acc, s.waiters, strict=True)
            },
            "reads_left": {
                m.actor_names[m.reader_actor[r]]: rs.left for r, rs in enumerate(s.readers)
            },
            "reader_phase": {
                m.actor_names[m.reader_actor[r]]: PHASE_NAMES[rs.phase]
                for r, rs in enumerate(s.readers)
            },
            "mailbox": {
                m.actor_names[x]: tuple((acc[loan.account], loan.cost) for loan in st.mailbox)
                for x, st in enumerate(s.actors)
            },
            "held": {
                m.actor_names[x]: (acc[st.held.account], st.held.cost)
                for x, st in enumerate(s.actors)
                if st.held.account >= 0
            },
            "alive": {m.actor_names[x]: st.alive for x, st in enumerate(s.actors)},
        }

    def action_record(self, action: int) -> tuple[str, Mapping[str, Any]]:
        step = self.model.decode(action)
        return step.kind, {"actor": step.actor}


class ActorSymmetry:
    """EXP-SYMMETRY for actor graphs: actors that are not readers and have the same
    attributes, the same senders and the same receivers (with the same event counts) are
    interchangeable; a state is canonicalized by sorting their sub-states. Readers are
    never moved, so blocked masks need no translation (every permutation id is 0)."""

    def __init__(self, model: AccountsModel) -> None:
        g = model.graph
        signature: dict[tuple, list[int]] = {}
        readers = set(model.reader_actor)
        sends_in: dict[str, list[tuple[str, int]]] = {}
        sends_out: dict[str, list[tuple[str, int]]] = {}
        for send in g.sends:  # one pass over the sends (IN-WORK), not one per actor
            sends_in.setdefault(send.receiver, []).append((send.sender, send.events))
            sends_out.setdefault(send.sender, []).append((send.receiver, send.events))
        for x, spec in enumerate(g.actors):
            if x in readers:
                continue
            ins = tuple(sorted(sends_in.get(spec.name, ())))
            outs = tuple(sorted(sends_out.get(spec.name, ())))
            key = (spec.stalled, spec.may_crash, spec.timer, ins, outs)
            signature.setdefault(key, []).append(x)
        self.groups = tuple(tuple(xs) for xs in signature.values() if len(xs) > 1)
        order = 1
        for xs in self.groups:
            for k in range(2, len(xs) + 1):
                order *= k
        self.order = order
        self.node_frames = [tuple(range(len(g.actors)))]

    def canonicalize(self, state: CheckedState) -> tuple[CheckedState, int]:
        s, bits = state
        actors = list(s.actors)
        for xs in self.groups:
            for x, st in zip(xs, sorted(actors[x] for x in xs), strict=True):
                actors[x] = st
        return (s._replace(actors=tuple(actors)), bits), 0

    def to_original_frame(self, mask: int, perm_id: int) -> int:
        return mask

    def later_twins(self, state: AccountsState) -> frozenset[int]:
        """EXP-SYMMETRY-TWINS: the actors of a group whose sub-state equals that of an
        earlier actor of the same group in ``state``."""
        later: set[int] = set()
        for xs in self.groups:
            seen: set[ActorState] = set()
            for x in xs:
                st = state.actors[x]
                if st in seen:
                    later.add(x)
                else:
                    seen.add(st)
        return frozenset(later)


def actor_symmetry(model: AccountsModel) -> ActorSymmetry | None:
    """The symmetry of ``model``'s graph, or ``None`` if no two actors are alike."""
    sym = ActorSymmetry(model)
    return sym if sym.groups else None
