"""The ``accounts`` adapter family of the JSON Lines adapter protocol (AD-AC-*).

``spec/adapter-protocol-accounts.md`` is normative. This module holds the message
shapes (what the model predicts for each request), the in-process reference adapter,
and the subprocess driver that speaks the protocol to any implementation.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from creditflow.conformance.differential.adapter import AdapterFailure, printable
from creditflow.conformance.differential.transport import JsonLinesProcess
from creditflow.conformance.inputs.actor_graphs import actor_graph_to_node_link
from creditflow.model.accounts.graph import ActorGraph
from creditflow.model.accounts.rules import (
    ACTION_SHIFT,
    CRASH,
    FIRE,
    READ,
    REPAY,
    TURN,
    WAIT,
    AccountsModel,
    AccountsState,
    Observation,
)

FAMILY = "accounts"
#: AD-AC-STEP: the protocol's step ops and the model action kinds they stand for.
STEP_OPS = ("check", "turn", "repay", "fire", "crash")
OP_OF_KIND = {
    READ: "check",
    WAIT: "check",
    TURN: "turn",
    REPAY: "repay",
    FIRE: "fire",
    CRASH: "crash",
}
DEFAULT_TIMEOUT = 10.0


class AdapterError(RuntimeError):
    """The implementation crashed, hung, or broke the protocol (exit code 3). The
    message is one printable line (AD-TRANSPORT-STDERR: whatever the adapter wrote is
    escaped and bounded)."""

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


@dataclass(frozen=True)
class StepReply:
    """An implementation's answer to one step: its observations and its state."""

    observations: tuple[dict[str, Any], ...]
    state: dict[str, Any]


def request_for(model: AccountsModel, action: int) -> dict[str, Any]:
    """AD-AC-STEP: the request that asks an implementation to take model action
    ``action``."""
    kind = action >> ACTION_SHIFT
    step = model.decode(action)
    target = "reader" if kind in (READ, WAIT) else "actor"
    return {"op": OP_OF_KIND[kind], target: step.actor}


def observations_json(
    model: AccountsModel, state: AccountsState, action: int, observations: Sequence[Observation]
) -> tuple[dict[str, Any], ...]:
    """AD-AC-OBSERVATIONS: what an implementation must report for ``action`` taken in
    ``state`` given the model's observations."""
    kind, index = action >> ACTION_SHIFT, action & ((1 << ACTION_SHIFT) - 1)
    out: list[dict[str, Any]] = []
    if kind in (READ, WAIT):
        account = model.reader_account[index]
        result = "clear"
        if kind == WAIT:
            result = "permit" if any(o.kind == "permit" for o in observations) else "wait"
        out.append(
            {
                "event": "ensure_clear_funds",
                "reader": model.actor_names[model.reader_actor[index]],
                "account": model.account_names[account],
                "debt": state.debt[account],
                "result": result,
            }
        )
    elif kind == TURN:
        loan = state.actors[index].mailbox[0]
        out.append(
            {
                "event": "turn",
                "actor": model.actor_names[index],
                "account": model.account_names[loan.account],
                "cost": loan.cost,
            }
        )
    for o in observations:
        if o.kind in ("borrow", "repay"):
            out.append({"event": o.kind, "account": o.account, "amount": o.amount, "debt": o.debt})
        elif o.kind == "wake":
            out.append({"event": "wake", "reader": o.who, "account": o.account, "debt": o.debt})
        elif o.kind == "notify":
            out.append({"event": "notify", "account": o.account, "debt": o.debt})
    return tuple(out)


def state_json(model: AccountsModel, state: AccountsState) -> dict[str, Any]:
    """AD-AC-STATE: the state an implementation reports after every step."""
    acc = model.account_names
    return {
        "debt": dict(zip(acc, state.debt, strict=True)),
        "waiting": {
            a: [model.actor_names[model.reader_actor[r]] for r in w]
            for a, w in zip(acc, state.waiters, strict=True)
        },
        "mailbox": {
            model.actor_names[x]: [[acc[loan.account], loan.cost] for loan in st.mailbox]
            for x, st in enumerate(state.actors)
        },
        "held": {
            model.actor_names[x]: [acc[st.held.account], st.held.cost]
            for x, st in enumerate(state.actors)
            if st.held.account >= 0
        },
    }


def resolve_action(model: AccountsModel, state: AccountsState, request: Mapping[str, Any]) -> int:
    """The model action a step request names in ``state`` (``check`` is READ or WAIT,
    whichever the model enables); raises ``ValueError`` naming the problem."""
    op = request.get("op")
    if op not in STEP_OPS:
        raise ValueError(f"unknown op {op!r}")
    key = "reader" if op == "check" else "actor"
    name = request.get(key)
    if name not in model.actor_index:
        raise ValueError(f"{op} needs a known {key}, got {name!r}")
    for action in model.enabled(state):
        if OP_OF_KIND[action >> ACTION_SHIFT] == op and model.decode(action).actor == name:
            return action
    raise ValueError(f"{op}({name}) is not enabled now")


class AccountsAdapter(Protocol):
    """What the conformance checker drives (AD-AC-OPS)."""

    def hello(self) -> dict[str, Any]: ...
    def reset(self, graph: ActorGraph) -> None: ...
    def step(self, request: Mapping[str, Any]) -> StepReply: ...
    def close(self) -> None: ...


class ReferenceAccountsAdapter:
    """The model itself, in-process: the ``reference`` adapter. ``model_class`` lets
    a faulty variant stand in (``adapters/reference/accounts_mutants.py``)."""

    name = "reference"

    def __init__(self, model_class: type[AccountsModel] = AccountsModel) -> None:
        self.model_class = model_class
        self.model: AccountsModel | None = None
        self.state: AccountsState | None = None

    def hello(self) -> dict[str, Any]:
        return {"ok": True, "name": f"creditflow-{self.name}", "families": [FAMILY]}

    def reset(self, graph: ActorGraph) -> None:
        self.model = self.model_class(graph)
        self.state = self.model.initial()

    def step(self, request: Mapping[str, Any]) -> StepReply:
        if self.model is None or self.state is None:
            raise AdapterError("step before reset")
        action = resolve_action(self.model, self.state, request)
        outcome = self.model.apply(self.state, action)
        observations = observations_json(self.model, self.state, action, outcome.observations)
        self.state = outcome.state
        return StepReply(observations, state_json(self.model, self.state))

    def close(self) -> None:
        pass


class _AccountsProcess(JsonLinesProcess):
    family = FAMILY


class SubprocessAccountsAdapter:
    """AD-AC-TRANSPORT: an implementation started as ``command``, spoken to in JSON Lines
    over its stdin/stdout by the transport every family shares
    (:class:`~creditflow.conformance.differential.transport.JsonLinesProcess`: hello and the
    unknown-op probe at start, one answer per request within ``timeout`` seconds, stderr
    quoted in failures). Failures are raised as :class:`AdapterError`."""

    def __init__(self, command: str | Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> None:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.name = " ".join(argv)
        try:
            self._process = _AccountsProcess(
                argv, name=self.name, timeout=timeout, start_timeout=timeout
            )
        except AdapterFailure as exc:
            raise AdapterError(str(exc)) from None
        self._hello = self._process.info

    def request(self, message: Mapping[str, Any]) -> dict[str, Any]:
        try:
            reply = self._process.request(dict(message))
        except AdapterFailure as exc:
            raise AdapterError(str(exc)) from None
        if reply.get("ok") is not True:
            raise AdapterError(
                f"adapter {self.name!r} refused {message['op']}: {reply.get('error', reply)}"
            )
        return reply

    def hello(self) -> dict[str, Any]:
        return self._hello

    def reset(self, graph: ActorGraph) -> None:

        self.request({"op": "reset", "graph": actor_graph_to_node_link(graph)})

    def step(self, request: Mapping[str, Any]) -> StepReply:
        reply = self.request(request)
        observations, state = reply.get("observations"), reply.get("state")
        if not isinstance(observations, list) or not isinstance(state, dict):
            raise AdapterError(
                f"adapter {self.name!r} answered {request['op']} without "
                "'observations' (a list) and 'state' (an object)"
            )
        return StepReply(tuple(observations), state)

    def close(self) -> None:
        self._process.close()
