"""``conform --adapter rabbit-fifo``: RabbitMQ's quorum-queue state machine held against
the model's queue end (AD-AMQ-FIFO-CONFORM; ``model/amqp/queue.py``, AMQ-QQ-*).

One consumer ``c`` checks out (credited with credit 0, or ``simple_prefetch`` with a
prefetch); every op is applied to the adapter (``apply/3``) and to the model's queue
functions, and after each the queue's ``ready``, the consumer's credit,
delivery-count and checked-out count, and the deliveries the op caused are compared.
Runs come from a breadth-first search over short op sequences (the shortest failing
one by construction), then Hypothesis (shrunk by delta debugging). Each divergence is a
:class:`Finding` naming the AMQ-QQ-* rule it breaks and that rule's class (FIND-RULE);
after one, the search masks it and goes on (AD-AMQ-FIFO-FINDINGS), as a known one from
an expectations file is masked (AD-AMQ-FIFO-EXPECTATIONS)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.differential.findings import (
    VERDICT_EXIT_CODES,
    Finding,
    Rule,
    failing,
    finding_id,
    signature_text,
)
from creditflow.conformance.differential.op_search import (
    allows_in_order,
    executed_prefix,
    explore,
    hypothesis_search,
    ops_in_turn,
)
from creditflow.conformance.families.amqp.conform import (
    AmqpPhase,
    FieldDiff,
    diff_documents,
    failing_run_head,
    result_document,
)
from creditflow.conformance.families.amqp.protocol import AmqpAdapter
from creditflow.model.amqp import queue
from creditflow.model.amqp.frames import CreditRequest, Delivery
from creditflow.model.amqp.policies import QueuePolicy
from creditflow.model.amqp.queue import Consumer, QueueMsgs

CONSUMER = "c"
#: AD-AMQ-FIFO-CONFORM: what is compared after every op
COMPARED = ("ready", "credit", "delivery_count", "checked_out", "delivered")
QUEUE_PHASES = ("explorer-runs", "hypothesis-runs")
#: AD-AMQ-FIFO-FINDINGS: at most this many distinct findings per phase
MAX_FINDINGS = 12

#: FIND-RULE: the rules a queue-end divergence can break (spec/amqp.md, AMQ-QQ-*), each
#: with its class and where the obligation is written.
QUEUE_RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule(
            "AMQ-QQ-CREDITED",
            "must",
            "AMQP 1.0 §2.6.7 (link-credit = delivery-count(rcv) + link-credit(rcv) − "
            "delivery-count(snd); drain uses up the credit and advances delivery-count)",
        ),
        Rule(
            "AMQ-QQ-CHECKOUT",
            "contract",
            "RabbitMQ quorum queues (rabbit_fifo checkout/4): a consumer with credit is "
            "sent the ready messages, one credit each",
        ),
        Rule(
            "AMQ-QQ-PREFETCH",
            "contract",
            "RabbitMQ consumer prefetch (basic.qos): at most the prefetch count "
            "unacknowledged; each settlement gives one credit back",
        ),
        Rule(
            "AMQ-QQ-SETTLE",
            "contract",
            "RabbitMQ quorum queues, poison message handling (x-delivery-limit): a return "
            "requeues the message, over the limit it is dropped",
        ),
    )
}


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


class QueueDiff(FieldDiff):
    """One field of the queue's view where model and implementation differ."""


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

    @property
    def rule(self) -> Rule:
        """FIND-RULE: the rule the diverging op breaks: a grant's AMQ-QQ-CREDITED; a
        ``simple_prefetch`` consumer's credit, or more checked out than its prefetch,
        AMQ-QQ-PREFETCH; a settlement's other fields AMQ-QQ-SETTLE; an enqueue's
        AMQ-QQ-CHECKOUT."""
        assert self.index is not None, "a passing run breaks no rule"
        op = self.ops[self.index].op
        fields = {d.field for d in self.diffs}
        over = any(
            d.field == "checked_out"
            and isinstance(d.implementation, int)
            and d.implementation > int(self.sizes["prefetch"])
            for d in self.diffs
        )
        if op in ("credit", "drain"):
            return QUEUE_RULES["AMQ-QQ-CREDITED"]
        if self.sizes["mode"] == "simple_prefetch" and ("credit" in fields or over):
            return QUEUE_RULES["AMQ-QQ-PREFETCH"]
        if op in ("settle", "return"):
            return QUEUE_RULES["AMQ-QQ-SETTLE"]
        return QUEUE_RULES["AMQ-QQ-CHECKOUT"]

    @property
    def signature(self) -> str:
        """FIND-SIGNATURE: the rule, the diverging op, and each field that parts from the
        model with how (``higher``/``lower`` than the model's, or ``refused``)."""
        assert self.index is not None, "a passing run has no signature"
        fields = []
        for d in self.diffs:
            if d.field.endswith(" refused"):
                fields.append("refused")
            elif isinstance(d.model, int) and isinstance(d.implementation, int):
                fields.append(f"{d.field} {'higher' if d.implementation > d.model else 'lower'}")
            else:
                fields.append(f"{d.field} differs")
        return signature_text(self.rule.id, self.ops[self.index].op, fields)

    def witness(self) -> tuple[str, ...]:
        """FIND-RECORD: the ops up to and with the diverging one."""
        end = len(self.ops) if self.index is None else self.index + 1
        return tuple(str(o) for o in self.ops[:end])

    def to_json(self) -> dict[str, Any]:
        """The ``run`` of the AMQP family's document (OUT-JSON-SCHEMA)."""
        return {
            "verdict": self.verdict,
            "settings": self.sizes,
            "ops": [str(o) for o in self.ops],
            "op_index": self.index,
            "diffs": diff_documents(self.diffs),
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
    for op in ops_in_turn(model, ops, steps):
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


#: AD-AMQ-FIFO-TRACE: writes a finding's trace before it is reported; the trace's path
#: (``None`` when it could not be written)
TraceWriter = Callable[[QueueRun, Finding, str], "str | None"]


@dataclass(frozen=True)
class QueueConformResult:
    """The verdict of ``conform --adapter rabbit-fifo`` (AD-AMQ-FIFO-CONFORM,
    OUT-TYPED-RESULT): 0 conformant (no failing finding, FIND-EXIT), 1 a failing finding
    or an unexpected pass (AD-AMQ-FIFO-EXPECTATIONS), 3 the adapter failed. ``run`` is
    the first finding's run; ``findings`` every distinct one (AD-AMQ-FIFO-FINDINGS), in
    the order found, ``runs`` their runs."""

    adapter: str
    version: str
    policy: dict[str, Any]
    seed: int
    phases: tuple[AmqpPhase, ...]
    run: QueueRun | None
    found_by: str | None
    failure: str | None = None
    findings: tuple[Finding, ...] = ()
    runs: tuple[QueueRun, ...] = ()
    #: AD-AMQ-FIFO-EXPECTATIONS: known failures (name, reason, signature), hits by name
    known: tuple[tuple[str, str, str], ...] = ()
    expected_hits: dict[str, int] = field(default_factory=dict)
    unexpected_passes: tuple[str, ...] = ()
    strict: bool = False

    @property
    def verdict(self) -> str:
        if self.failure is not None:
            return "adapter-failure"
        if failing(self.findings, self.strict):
            return "divergence"
        return "unexpected-pass" if self.unexpected_passes else "conformant"

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT_CODES[self.verdict]

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA: the family's document, then ``findings`` (FIND-RECORD) and the
        expectations met."""
        doc = result_document(self)
        doc["findings"] = [f.to_json() for f in self.findings]
        doc["expected"] = [
            {"name": n, "reason": r, "signature": sig, "hits": self.expected_hits.get(n, 0)}
            for n, r, sig in self.known
        ]
        doc["unexpected_passes"] = list(self.unexpected_passes)
        return doc


def _allows(sizes: Mapping[str, Any], seq: Sequence[QueueOp]) -> bool:
    return allows_in_order(QueueModel.start(sizes), seq)


class QueueMasker:
    """AD-AMQ-FIFO-EXPECTATIONS, AD-AMQ-FIFO-FINDINGS: a failed run whose signature is a
    known one (listed, or found earlier in this run) has its failing op taken out and is
    run again from ``reset``, until it passes or fails in an unknown way; so a second bug
    behind a known one still fails. ``hits`` counts the known signatures met."""

    def __init__(self, adapter: AmqpAdapter, known: Mapping[str, str]) -> None:
        self.adapter = adapter
        self.known = dict(known)  #: signature -> name
        self.hits: dict[str, int] = {}

    def __call__(self, sizes: Mapping[str, Any], ops: Sequence[QueueOp], run: QueueRun) -> QueueRun:
        current = list(ops)
        while run.failed and run.signature in self.known:
            cut = executed_prefix(current, run)
            if cut is None:
                break
            name = self.known[run.signature]
            self.hits[name] = self.hits.get(name, 0) + 1
            del current[cut - 1]
            run = run_queue_ops(self.adapter, sizes, current)
        return run


def _explore(
    adapter: AmqpAdapter, depth: int, mask: QueueMasker
) -> tuple[QueueRun | None, int, int]:
    """Every op sequence of 1 … ``depth`` ops the model allows, shortest first, under
    each size choice: the first failing run not masked is a shortest one."""
    return explore(
        QUEUE_SIZES,
        QUEUE_ALPHABET,
        depth,
        _allows,
        lambda sizes, seq: run_queue_ops(adapter, sizes, seq),
        mask,
    )


def _hypothesis(
    adapter: AmqpAdapter, seed_: int, max_examples: int, steps: int, mask: QueueMasker
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
        mask,
    )


def queue_finding(run: QueueRun, found_by: str | None, trace: str | None = None) -> Finding:
    """FIND-RECORD: the finding a failed run shows."""
    assert run.index is not None
    sig = run.signature
    detail = tuple(
        f"{d.field}: model {d.model}, implementation {d.implementation}" for d in run.diffs
    )
    return Finding(finding_id(sig), run.rule, sig, run.witness(), trace, found_by, detail)


def run_queue_conform(
    factory: Callable[[], AmqpAdapter],
    seed: int,
    depth: int,
    max_examples: int,
    steps: int,
    phases: tuple[str, ...] = QUEUE_PHASES,
    known: Mapping[str, str] | None = None,
    write: TraceWriter | None = None,
    resolve: Callable[[AmqpAdapter], QueueExpectations] | None = None,
    strict: bool = False,
) -> QueueConformResult:
    """AD-AMQ-FIFO-CONFORM, AD-AMQ-FIFO-FINDINGS: the explorer's runs, then Hypothesis's;
    after each finding (its trace written by ``write`` first, AD-AMQ-FIFO-TRACE) it is
    masked and the phase runs again, until it finds nothing new or
    :data:`MAX_FINDINGS`. ``resolve`` replays an expectations file's traces on the
    adapter (AD-AMQ-FIFO-EXPECTATIONS): their signatures are masked from the start."""
    name, version = "rabbit-fifo", "?"
    policy: dict[str, Any] = {}
    done: list[AmqpPhase] = []
    findings: list[Finding] = []
    runs: list[QueueRun] = []
    found_by: list[str] = []
    expected = QueueExpectations()
    try:
        adapter = factory()
    except AdapterFailure as exc:
        return QueueConformResult(name, version, policy, seed, (), None, None, str(exc))
    mask = QueueMasker(adapter, known or {})

    def result(failure: str | None = None) -> QueueConformResult:
        return QueueConformResult(
            name,
            version,
            policy,
            seed,
            tuple(done),
            runs[0] if runs else None,
            found_by[0] if found_by else None,
            failure,
            tuple(findings),
            tuple(runs),
            expected.known,
            {n: mask.hits.get(n, 0) for n, _r, _s in expected.known},
            expected.unexpected_passes,
            strict,
        )

    try:
        name, version = str(adapter.name), str(adapter.info.get("version"))
        policy = dict(adapter.info.get("policy") or {})
        if resolve is not None:
            expected = resolve(adapter)
            mask.known.update({sig: n for n, _r, sig in expected.known})
        for phase in phases:
            t0 = time.perf_counter()
            total_runs = total_ops = 0
            for _ in range(MAX_FINDINGS):
                if phase == "explorer-runs":
                    run, n_runs, n_ops = _explore(adapter, depth, mask)
                else:
                    run, n_runs, n_ops = _hypothesis(adapter, seed, max_examples, steps, mask)
                total_runs += n_runs
                total_ops += n_ops
                if run is None:
                    break
                sig = run.signature
                path = None if write is None else write(run, queue_finding(run, phase), phase)
                findings.append(queue_finding(run, phase, path))
                runs.append(run)
                found_by.append(phase)
                mask.known[sig] = f"finding {finding_id(sig)}"
            done.append(AmqpPhase(phase, total_runs, total_ops, time.perf_counter() - t0))
        return result()
    except AdapterFailure as exc:
        return result(str(exc))
    finally:
        adapter.close()


@dataclass(frozen=True)
class QueueExpectations:
    """AD-AMQ-FIFO-EXPECTATIONS: an expectations file's traces replayed: the known
    failures (name, reason, signature) and the listed traces that pass."""

    known: tuple[tuple[str, str, str], ...] = ()
    unexpected_passes: tuple[str, ...] = ()


def queue_run_lines(run: QueueRun) -> list[str]:
    """The failing run as text (no I/O)."""
    sizes = ", ".join(f"{k} {v}" for k, v in run.sizes.items())
    return failing_run_head(sizes, "reset, checkout c", run.ops, run.index, run.diffs)
