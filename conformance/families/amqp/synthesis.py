"""``creditflow synth`` for AMQP topologies (AMQ-SYNTH): the smallest value of one
setting of the receiving end for which the AMQP check finds nothing.

One setting is minimised, every other setting kept as in the topology: the receiving
end's credit window (AMQ-POL-CREDIT-WINDOW ``window``, or AMQ-RMQ-LINK-CREDIT
``max_link_credit`` on the publish shape), its renewal threshold, or the receiving
session's window (AMQ-POL-WINDOW-*, AMQ-RMQ-SESSION-WINDOW). Values are tried upward,
each by :func:`~creditflow.conformance.families.amqp.checking.check_amqp` (the check of
``creditflow check``) on the supply; the answer is the first value whose check is
complete with nothing violated, and every smaller value tried has a witness (the one
just below is the answer's "one step beyond"). The claim is the checks' claim: for the
supply explored; "every supply" is not established by this route (SCOPE-EXIT).
The engine's deadline (``--timeout``, FAM-DEADLINE) bounds the whole search: past it no
further value is tried and the answer is ``unknown`` (exit 4), never a value.
Typed, frozen results; no rendering."""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from creditflow.conformance import exit_codes
from creditflow.conformance.explore.explorer import DeadlinePassed
from creditflow.conformance.explore.results import SupplyCheck
from creditflow.conformance.families.amqp.checking import check_amqp
from creditflow.conformance.inputs.amqp_topologies import TopologyError, topology_from_dict
from creditflow.model.amqp.topology import Topology

SynthSetting = Literal["credit_window", "renew_threshold", "session_window"]
SYNTH_SETTINGS: tuple[SynthSetting, ...] = ("credit_window", "renew_threshold", "session_window")
#: AMQ-SYNTH: the window policies' size attribute
_WINDOW_SIZE = {
    "fixed": "window",
    "never": "window",
    "ring": "slots",
    "rabbitmq4": "max_incoming_window",
    "capacity": "capacity",
}


class AmqpSynthError(ValueError):
    """A setting the topology does not have (one line: the node and why)."""


@dataclass(frozen=True)
class Target:
    """What AMQ-SYNTH minimises: ``node``'s ``attribute`` (``credit`` or ``window``)
    policy's ``key``."""

    node: str
    attribute: str
    policy: str
    key: str

    def words(self) -> str:
        return f"{self.node} {self.attribute} policy {self.policy}.{self.key}"


def target(doc: dict[str, Any], shape: str, setting: SynthSetting) -> Target:
    """AMQ-SYNTH: the node and policy attribute a setting names in this topology (the
    receiving end: the receiver endpoint, or on the publish shape the broker session)."""
    nodes = doc["nodes"]
    sessions = [n for n in nodes if n.get("kind") == "session"]
    receiver = next((n for n in nodes if n.get("role") == "receiver"), None)
    if setting == "session_window":
        session = sessions[-1]
        policy = session.get("window") or {}
        name = str(policy.get("policy"))
        if name not in _WINDOW_SIZE:
            raise AmqpSynthError(f"{session['id']}.window: no window policy to minimise")
        return Target(str(session["id"]), "window", name, _WINDOW_SIZE[name])
    owner = sessions[-1] if shape == "publish" or receiver is None else receiver
    policy = owner.get("credit") or {}
    name = str(policy.get("policy"))
    if setting == "credit_window" and name == "rabbitmq4":
        return Target(str(owner["id"]), "credit", name, "max_link_credit")
    if name != "window":
        raise AmqpSynthError(
            f"{owner['id']}.credit: {setting} needs a credit policy 'window' "
            f"(AMQ-POL-CREDIT-WINDOW), found {name!r}"
        )
    return Target(
        str(owner["id"]), "credit", name, "window" if setting == "credit_window" else "threshold"
    )


def with_value(doc: dict[str, Any], at: Target, value: int) -> dict[str, Any]:
    """A copy of ``doc`` with ``at`` set to ``value``; a window's threshold is kept, but
    at most ``value - 1`` (AMQ-POL-CREDIT-WINDOW, AMQ-POL-WINDOW-FIXED)."""
    out = copy.deepcopy(doc)
    node = next(n for n in out["nodes"] if n.get("id") == at.node)
    policy = dict(node[at.attribute])
    policy[at.key] = value
    if at.key in ("window", "capacity") and "threshold" in policy:
        policy["threshold"] = min(policy["threshold"], value - 1)
    if at.policy == "capacity":
        policy[at.key] = value * int(policy.get("frame", 1))  # a window of `value` frames
    node[at.attribute] = policy
    return out


@dataclass(frozen=True)
class AmqpSynthTry:
    """One value tried and the check's result on it."""

    value: int
    result: SupplyCheck


@dataclass(frozen=True)
class AmqpSynthResult:
    """AMQ-SYNTH's answer. ``status``: ``found`` (``value`` is the smallest value tried
    whose check is complete with nothing found, every smaller one has a witness),
    ``none`` (every value up to ``highest`` has a witness), ``unknown`` (a value's check
    decided nothing: smaller is not established)."""

    topology: str
    setting: SynthSetting
    target: Target
    supply: int
    every_supply: bool
    status: Literal["found", "none", "unknown"]
    value: int | None
    lowest: int
    highest: int
    tried: tuple[AmqpSynthTry, ...]
    document: dict[str, Any]
    """The topology document with the answer (or the last value tried) put in."""
    deadline_passed: bool = False
    """FAM-DEADLINE: the deadline passed before a value was decided (``unknown``)."""

    @property
    def beyond(self) -> AmqpSynthTry | None:
        """The value just below the answer, with its witness (``None`` without one)."""
        if self.status != "found" or len(self.tried) < 2:
            return None
        return self.tried[-2]

    @property
    def claim(self) -> str:
        """What the answer claims (SCOPE-TEXT): for the supply explored only."""
        what = f"smallest {self.target.words()} in {self.lowest}..{self.highest}"
        scope = f"for supply {self.supply}"
        tail = "; for every supply: not established" if self.every_supply else ""
        if self.status == "found":
            below = (
                f"; every smaller value has a witness ({self.lowest}..{self.value - 1})"
                if self.value is not None and self.value > self.lowest
                else ""
            )
            found = f"{what} with nothing found {scope} (every state explored)"
            return f"{found}: {self.value}{below}{tail}"
        if self.status == "none":
            span = f"{self.lowest}..{self.highest}"
            return f"no value of {self.target.words()} in {span} is free of a witness {scope}"
        if self.deadline_passed:
            done = f"{len(self.tried)} values tried"
            return f"{what}: not established (the deadline passed, {done}; FAM-DEADLINE)"
        last = self.tried[-1]
        return f"{what}: not established ({self.target.key} = {last.value}: {last.result.claim})"

    @property
    def exit_code(self) -> int:
        """SCOPE-EXIT: 0 only for an answer to the question asked (the supply given);
        10 when every value has a witness; 4 otherwise (every supply asked, or a value
        undecided)."""
        if self.status == "none":
            return exit_codes.DEADLOCK
        if self.status == "found" and not self.every_supply:
            return exit_codes.OK
        return exit_codes.INCOMPLETE


def synthesize_amqp(
    doc: dict[str, Any],
    name: str,
    setting: SynthSetting,
    supply: int | None,
    every_supply: bool,
    highest: int = 16,
    max_states: int = 200_000,
    deadline: float | None = None,
) -> AmqpSynthResult:
    """AMQ-SYNTH: try ``setting`` upward from its least value (1; a threshold from 0 up
    to its window − 1, or ``highest``) until a check is complete with nothing found.
    ``deadline`` (``time.monotonic()``, FAM-DEADLINE): each check stops there, and so
    does the search, ``unknown``."""
    base = topology_from_dict(doc, name)
    at = target(doc, base.shape, setting)
    lowest = 0 if at.key == "threshold" else 1
    if at.key == "threshold":
        node = next(n for n in doc["nodes"] if n.get("id") == at.node)
        highest = min(highest, int(node["credit"]["window"]) - 1)
    tried: list[AmqpSynthTry] = []
    current = doc
    status: Literal["found", "none", "unknown"] = "none"
    answer: int | None = None
    passed = False
    value = lowest
    while value <= highest:
        if deadline is not None and time.monotonic() >= deadline:
            status, passed = "unknown", True
            break
        current = with_value(doc, at, value)
        try:
            t: Topology = topology_from_dict(current, name)
        except TopologyError as exc:
            raise AmqpSynthError(f"{at.node}: {at.key} = {value}: {exc}") from None
        try:
            result = check_amqp(
                replace(t, name=name), supply, every_supply, max_states, deadline=deadline
            )
        except DeadlinePassed:
            status, passed = "unknown", True
            break
        tried.append(AmqpSynthTry(value, result))
        value += 1
        if result.search.violation is not None:
            continue
        if result.search.complete:
            status, answer = "found", result_value(tried)
        else:
            status = "unknown"
        break
    supply_checked = tried[-1].result.supply if tried else base.supply
    return AmqpSynthResult(
        name,
        setting,
        at,
        supply_checked,
        every_supply,
        status,
        answer,
        lowest,
        highest,
        tuple(tried),
        current,
        passed,
    )


def result_value(tried: list[AmqpSynthTry]) -> int:
    """The value of the last check tried."""
    return tried[-1].value


class AmqpSynthesis:
    """FAM-SYNTH for AMQP: AMQ-SYNTH's settings and :func:`synthesize_amqp`."""

    settings: tuple[SynthSetting, ...] = SYNTH_SETTINGS

    def synthesize(
        self, instance: Any, setting: str, options: Mapping[str, Any], deadline: float | None
    ) -> AmqpSynthResult:
        assert setting in SYNTH_SETTINGS
        publishes = options.get("publishes")
        return synthesize_amqp(
            instance.document,
            instance.topology.name,
            setting,
            publishes,
            publishes is None,
            int(options.get("max_credit") or 16),
            deadline=deadline,
        )


#: FAM-SYNTH: the AMQP family's synthesis
SYNTHESIS = AmqpSynthesis()
