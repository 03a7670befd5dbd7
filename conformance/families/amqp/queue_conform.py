"""``conform --adapter rabbit-fifo``: RabbitMQ's quorum-queue state machine held against
the model's queue end (AD-AMQ-FIFO-CONFORM; ``model/amqp/queue.py``, AMQ-QQ-*).

One consumer ``c`` checks out (credited with credit 0, or ``simple_prefetch`` with a
prefetch); every op is applied to the adapter (``apply/3``) and to the model's queue
functions, and after each the queue's ``ready``, the consumer's credit,
delivery-count and checked-out count, and the deliveries the op caused are compared.
Runs come from a breadth-first search over short op sequences (the shortest failing
one by construction), then Hypothesis (shrunk by delta debugging)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from creditflow.conformance import exit_codes
from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.differential.op_search import explore, hypothesis_search
from creditflow.conformance.families.amqp.conform import AmqpPhase, result_document
from creditflow.conformance.families.amqp.protocol import AmqpAdapter
from creditflow.model.amqp import queue
from creditflow.model.amqp.frames import CreditRequest, Delivery
from creditflow.model.amqp.policies import QueuePolicy
from creditflow.model.amqp.queue import Consumer, QueueMsgs

CONSUMER = "c"
#: AD-AMQ-FIFO-CONFORM: what is compared after every op
COMPARED = ("ready", "credit", "delivery_count", "checked_out", "delivered")
QUEUE_PHASES = ("explorer-runs", "hypothesis-runs")


class QueueOp(NamedTuple):
    """One op of AD-AMQ-FIFO-CONFORM on the consumer ``c``."""

    op: str
    credit: int = 0

    def __str__(self) -> str:
        return f"{self.op} {self.credit}" if self.op in ("credit", "drain") else self.op


#: AD-AMQ-FIFO-CONFORM: ``enqueue`` a message; ``credit n`` / ``drain n`` the receiver's
#: grant (its delivery-count given, AMQ-QQ-CREDITED); ``settle`` / ``return`` the oldest
#: checked-out message (AMQ-QQ-SETTLE, AMQ-QQ-PREFETCH).
QUEUE_ALPHABET = (
    QueueOp("enqueue"),
    QueueOp("credit", 1),
    QueueOp("credit", 2),
    QueueOp("drain", 1),
    QueueOp("settle"),
    QueueOp("return"),
)

#: AD-AMQ-FIFO-CONFORM: the consumer modes and queue sizes runs choose: credited without a
#: delivery limit; ``simple_prefetch`` 1 with a delivery limit of 0 (a return drops the
#: message); ``simple_prefetch`` 2 without a limit.
QUEUE_SIZES: tuple[dict[str, Any], ...] = (
    {"mode": "credited", "prefetch": 0, "delivery_limit": None},
    {"mode": "simple_prefetch", "prefetch": 1, "delivery_limit": 0},
    {"mode": "simple_prefetch", "prefetch": 2, "delivery_limit": None},
)


@dataclass
class QueueModel:
    """The model's queue end for one consumer (AMQ-QQ-CREDITED, AMQ-QQ-CHECKOUT,
    AMQ-QQ-PREFETCH, AMQ-QQ-SETTLE). ``rcv_dc`` is the receiver's delivery-count: it
    counts the deliveries and takes a drain's advance from the credit reply."""

    sizes: Mapping[str, Any]
    consumer: Consumer
    msgs: QueueMsgs = field(default_factory=lambda: QueueMsgs(0, 0))
    rcv_dc: int = 0

    @classmethod
    def start(cls, sizes: Mapping[str, Any]) -> QueueModel:
        credit = int(sizes["prefetch"]) if sizes["mode"] == "simple_prefetch" else 0
        return cls(sizes, Consumer(0, credit, False, ()))

    @property
    def policy(self) -> QueuePolicy:
        return QueuePolicy(consumer_mode=self.sizes["mode"], prefetch=int(self.sizes["prefetch"]))

    def possible(self, op: QueueOp) -> bool:
        if op.op in ("credit", "drain"):
            return self.sizes["mode"] == "credited"
        if op.op in ("settle", "return"):
            return bool(self.consumer.checked_out)
        return True

    def apply(self, op: QueueOp) -> int:
        """The op, then checkout; returns the deliveries it caused."""
        c, q = self.consumer, self.msgs
        out: tuple[Any, ...] = ()
        if op.op == "enqueue":
            q = q._replace(ready=q.ready + 1)
            c, q, out = queue.checkout(c, q)
        elif op.op in ("credit", "drain"):
            req = CreditRequest(self.rcv_dc, op.credit, op.op == "drain")
            c, q, out = queue.on_credit(c, q, req)
            self.rcv_dc = c.delivery_count  # the deliveries and the reply's count
        elif op.op == "settle":
            c, q, out = queue.settle(c, q, c.checked_out[0], self.policy)
        elif op.op == "return":
            limit = self.sizes["delivery_limit"]
            c, q, _dropped = queue.returned(c, q, c.checked_out[0], 0, limit)
            if self.sizes["mode"] == "simple_prefetch":  # AMQ-QQ-PREFETCH: one back
                c = c._replace(credit=min(int(self.sizes["prefetch"]), c.credit + 1))
            c, q, out = queue.checkout(c, q)
        self.consumer, self.msgs = c, q
        if self.sizes["mode"] == "credited" and op.op not in ("credit", "drain"):
            self.rcv_dc = c.delivery_count
        return sum(1 for f in out if isinstance(f, Delivery))

    def view(self, delivered: int) -> dict[str, int]:
        c = self.consumer
        return {
            "ready": self.msgs.ready,
            "credit": c.credit,
            "delivery_count": c.delivery_count,
            "checked_out": len(c.checked_out),
            "delivered": delivered,
        }


def _request(op: QueueOp, model: QueueModel) -> dict[str, Any]:
    if op.op == "enqueue":
        return {"op": "enqueue"}
    if op.op in ("credit", "drain"):
        return {
            "op": "credit",
            "consumer": CONSUMER,
            "credit": op.credit,
            "delivery_count": model.rcv_dc,
            "drain": op.op == "drain",
        }
    return {"op": op.op, "consumer": CONSUMER, "count": 1}


def _impl_view(reply: Any) -> dict[str, int | None]:
    c = reply.state.get("consumers", {}).get(CONSUMER, {})
    delivered = sum(
        len(e.get("msg_ids", []))
        for e in reply.extra.get("effects", [])
        if e.get("effect") == "delivery" and e.get("consumer") == CONSUMER
    )
    return {
        "ready": reply.state.get("ready"),
        "credit": c.get("credit"),
        "delivery_count": c.get("delivery_count"),
        "checked_out": c.get("checked_out"),
        "delivered": delivered,
    }


@dataclass(frozen=True)
class QueueDiff:
    field: str
    model: int | None
    implementation: int | None


@dataclass(frozen=True)
class QueueRun:
    """One run's verdict: ``diverged`` at op ``index`` (fields differ, or the op was
    refused) or ``pass``."""

    sizes: dict[str, Any]
    ops: tuple[QueueOp, ...]
    verdict: str
    index: int | None = None
    diffs: tuple[QueueDiff, ...] = ()

    @property
    def failed(self) -> bool:
        return self.verdict != "pass"

    def to_json(self) -> dict[str, Any]:
        """The ``run`` of the AMQP family's document (OUT-JSON-SCHEMA)."""
        return {
            "verdict": self.verdict,
            "settings": self.sizes,
            "ops": [str(o) for o in self.ops],
            "op_index": self.index,
            "diffs": [
                {"field": d.field, "model": d.model, "implementation": d.implementation}
                for d in self.diffs
            ],
            "violations": [],
            "model": {},
            "implementation": {},
            "compared": list(COMPARED),
            "model_broken": [],
        }


def run_queue_ops(
    adapter: AmqpAdapter,
    sizes: Mapping[str, Any],
    ops: Sequence[QueueOp] | Callable[[QueueModel, int], QueueOp | None],
    steps: int = 0,
) -> QueueRun:
    """AD-AMQ-FIFO-CONFORM: ``reset`` with the delivery limit, ``checkout`` ``c``, then
    the ops (ops the model does not allow skipped, or drawn by ``ops(model, i)`` up to
    ``steps``), comparing after every op; stops at the first divergence."""
    adapter.step({"op": "reset", "settings": {"delivery_limit": sizes["delivery_limit"]}})
    checkout: dict[str, Any] = {"op": "checkout", "consumer": CONSUMER, "mode": sizes["mode"]}
    if sizes["mode"] == "credited":
        checkout["credit"] = 0
    else:
        checkout["prefetch"] = int(sizes["prefetch"])
    adapter.step(checkout)
    model = QueueModel.start(sizes)
    done: list[QueueOp] = []
    fixed = None if callable(ops) else list(ops)
    i = 0
    while True:
        if fixed is not None:
            if i >= len(fixed):
                break
            op: QueueOp | None = fixed[i]
            i += 1
            assert op is not None
            if not model.possible(op):
                continue
        else:
            if i >= steps:
                break
            assert callable(ops)
            op = ops(model, i)
            i += 1
            if op is None:
                break
        done.append(op)
        reply = adapter.try_step(_request(op, model))
        if reply is None:
            diff = QueueDiff(f"{op.op} refused", 0, 1)
            return QueueRun(dict(sizes), tuple(done), "diverged", len(done) - 1, (diff,))
        mv = model.view(model.apply(op))
        iv = _impl_view(reply)
        diffs = tuple(QueueDiff(k, mv[k], iv[k]) for k in mv if mv[k] != iv[k])
        if diffs:
            return QueueRun(dict(sizes), tuple(done), "diverged", len(done) - 1, diffs)
    return QueueRun(dict(sizes), tuple(done), "pass")


@dataclass(frozen=True)
class QueueConformResult:
    """The verdict of ``conform --adapter rabbit-fifo`` (AD-AMQ-FIFO-CONFORM,
    OUT-TYPED-RESULT): 0 conformant, 1 diverged, 3 the adapter failed."""

    adapter: str
    version: str
    policy: dict[str, Any]
    seed: int
    phases: tuple[AmqpPhase, ...]
    run: QueueRun | None
    found_by: str | None
    failure: str | None = None

    @property
    def verdict(self) -> str:
        if self.failure is not None:
            return "adapter-failure"
        return "conformant" if self.run is None else "divergence"

    @property
    def exit_code(self) -> int:
        return {
            "conformant": exit_codes.OK,
            "divergence": exit_codes.DIVERGENCE,
            "adapter-failure": exit_codes.ADAPTER_FAILURE,
        }[self.verdict]

    def to_json(self) -> dict[str, Any]:
        return result_document(self)


def _allows(sizes: Mapping[str, Any], seq: Sequence[QueueOp]) -> bool:
    model = QueueModel.start(sizes)
    for op in seq:
        if not model.possible(op):
            return False
        model.apply(op)
    return True


def _explore(adapter: AmqpAdapter, depth: int) -> tuple[QueueRun | None, int, int]:
    """Every op sequence of 1 … ``depth`` ops the model allows, shortest first, under
    each size choice: the first failing run is a shortest one."""
    return explore(
        QUEUE_SIZES,
        QUEUE_ALPHABET,
        depth,
        _allows,
        lambda sizes, seq: run_queue_ops(adapter, sizes, seq),
    )


def _hypothesis(
    adapter: AmqpAdapter, seed_: int, max_examples: int, steps: int
) -> tuple[QueueRun | None, int, int]:
    """Hypothesis draws the sizes and each op among those the model allows; the
    shortest failing run found is shrunk by delta debugging."""
    return hypothesis_search(
        QUEUE_SIZES,
        "sizes",
        QUEUE_ALPHABET,
        lambda sizes, choose: run_queue_ops(adapter, sizes, choose, steps),
        lambda sizes, seq: run_queue_ops(adapter, sizes, seq),
        lambda run: run.sizes,
        seed_,
        max_examples,
    )


def run_queue_conform(
    factory: Callable[[], AmqpAdapter],
    seed: int,
    depth: int,
    max_examples: int,
    steps: int,
    phases: tuple[str, ...] = QUEUE_PHASES,
) -> QueueConformResult:
    """AD-AMQ-FIFO-CONFORM: the explorer's runs, then Hypothesis's, until the first
    divergence."""
    name, version = "rabbit-fifo", "?"
    policy: dict[str, Any] = {}
    done: list[AmqpPhase] = []
    try:
        adapter = factory()
    except AdapterFailure as exc:
        return QueueConformResult(name, version, policy, seed, (), None, None, str(exc))
    try:
        name, version = str(adapter.name), str(adapter.info.get("version"))
        policy = dict(adapter.info.get("policy") or {})
        for phase in phases:
            t0 = time.perf_counter()
            if phase == "explorer-runs":
                run, runs, ops = _explore(adapter, depth)
            else:
                run, runs, ops = _hypothesis(adapter, seed, max_examples, steps)
            done.append(AmqpPhase(phase, runs, ops, time.perf_counter() - t0))
            if run is not None:
                return QueueConformResult(name, version, policy, seed, tuple(done), run, phase)
        return QueueConformResult(name, version, policy, seed, tuple(done), None, None)
    except AdapterFailure as exc:
        return QueueConformResult(name, version, policy, seed, tuple(done), None, None, str(exc))
    finally:
        adapter.close()


def queue_run_lines(run: QueueRun) -> list[str]:
    """The failing run as text (no I/O)."""
    sizes = ", ".join(f"{k} {v}" for k, v in run.sizes.items())
    n = len(run.ops)
    lines = [f"shortest failing trace: {n} op{'s' * (n != 1)} (sizes: {sizes})"]
    lines.append("     0  reset, checkout c")
    for i, op in enumerate(run.ops, start=1):
        marker = ">" if run.index is not None and i == run.index + 1 else " "
        lines.append(f"  {marker}{i:3}  {op}")
    if run.index is not None:
        lines.append(f"after op {run.index + 1} ({run.ops[run.index]}):")
    if run.diffs:
        width = max(len(d.field) for d in run.diffs)
        lines.append(f"    {'field':{width}}  model  implementation")
        for d in run.diffs:
            lines.append(f"    {d.field:{width}}  {d.model!s:5}  {d.implementation}")
    return lines
