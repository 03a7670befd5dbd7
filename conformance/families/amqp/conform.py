"""``conform`` for the ``amqp`` family (AD-AMQ-CONFORM): an AMQP 1.0 implementation held
against the model (spec/amqp.md, link shape) run with the policy the adapter declares in
``hello`` (AD-AMQ-POLICY) and the small sizes each run chooses (AD-AMQ-SETTINGS).

Every op is applied to the adapter and to the model; after each op, at rest
(AD-AMQ-QUIESCE), the wire's view of every endpoint (``WireMonitor.endpoints()``) is
compared with the model's state (AD-AMQ-CONFORM-COMPARE), and the wire monitor's
property checks run on the implementation's own frames (AD-AMQ-CONFORM-PROPERTY): a
property violated while the model agrees is the policy's own bug (exit 12), a state that
differs first is a divergence (exit 1). Runs come from a breadth-first search over short
op sequences the model allows (the shortest failing sequence by construction) and from
Hypothesis (shrunk further by delta debugging, :func:`shrink_sequence`).
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.differential.findings import (
    CLASSES,
    VERDICT_EXIT_CODES,
    Finding,
    failing,
)
from creditflow.conformance.differential.op_search import (
    allows_in_order,
    explore_all,
    hypothesis_search,
    ops_in_turn,
)
from creditflow.conformance.families.amqp.protocol import (
    AMQP_PHASES,
    DEFAULT_AMQP_EXAMPLES,
    DEFAULT_AMQP_STEPS,
    DEFAULT_DEPTH,
    AmqpAdapter,
    Violation,
    WireMonitor,
)
from creditflow.conformance.inputs.amqp_topologies import MAX_AMOUNT
from creditflow.model.amqp import endpoints, properties, session
from creditflow.model.amqp.endpoints import Receiver, ReceiverConfig, Sender
from creditflow.model.amqp.frames import Flow, Transfer
from creditflow.model.amqp.link import LinkEnd
from creditflow.model.amqp.policies import (
    GRANT_DRAIN,
    CreditPolicy,
    CreditWindow,
    GrantDrain,
    SenderCredit,
    WindowCapacity,
    WindowFixed,
    WindowNever,
    WindowPolicy,
    WindowRing,
)
from creditflow.model.amqp.system import LinkState

SESSION, LINK = "s", "L"
#: FIND-EVERY: the default cap on distinct findings per run (``--max-findings``)
DEFAULT_MAX_FINDINGS = 20
#: AD-AMQ-CONFORM-VERDICT: monitor rules no policy of the model can break (the model's
#: numbers are serial, its drain answer is sent and carries credit 0): broken by the
#: implementation while the states agree, they are a divergence, not the policy's bug.
MODEL_KEEPS = ("bad-serial", "drain-unanswered", "drain-credit")
#: AD-AMQ-RMQ-ENDED: the pseudo-rule under which a refusal's error is reported.
REFUSED_RULE = "refused"


class AmqpOp(NamedTuple):
    """One application op of AD-AMQ-OPS on the run's one link (AD-AMQ-CONFORM-OPS)."""

    op: str
    credit: int = 0
    number: int = 0
    keep: int = 0

    def request(self) -> dict[str, Any]:
        req: dict[str, Any] = {"op": self.op, "link": LINK}
        if self.op in ("flow", "drain"):
            req["credit"] = self.credit
        if self.op == "settle":
            req.update(count=self.number, keep=self.keep)
        return req

    def __str__(self) -> str:
        if self.op in ("flow", "drain"):
            return f"{self.op} {self.credit}"
        if self.op == "settle":
            return f"settle {self.number}" + (f" keep {self.keep}" if self.keep else "")
        return self.op


#: AD-AMQ-CONFORM-OPS: the model's actions as adapter ops — ``send`` is the application's
#: ``transfer`` (one more message available), a hand ``grant`` is ``flow`` (n more
#: credit), ``drain`` is ``drain``, the sender's ``drain_done`` is ``drained``, the
#: application's ``settle`` is ``settle`` (``keep``: the oldest deliveries held).
ALPHABET = (
    AmqpOp("transfer"),
    AmqpOp("flow", credit=1),
    AmqpOp("flow", credit=2),
    AmqpOp("drain", credit=1),
    AmqpOp("drained"),
    AmqpOp("settle", number=1),
    AmqpOp("settle", number=1, keep=1),
)


@dataclass(frozen=True)
class ModelPolicy:
    """The model's policies for an adapter's declared ``policy`` (AD-AMQ-POLICY), the
    frames per message, and what the model has no parameter for (compared no further)."""

    credit: CreditPolicy
    window: WindowPolicy
    sender: SenderCredit
    frames: int
    uncompared: tuple[str, ...]
    #: AD-AMQ-RMQ-POLICY ``drain_echo: auto``: the sender answers a drain by itself
    #: (a broker's queue), not by the application's ``drained``
    drain_auto: bool = False
    #: AMQ-POL-GRANT-DRAIN: the drain flag of a hand grant, as declared (AD-AMQ-POLICY)
    grant_drain: GrantDrain = "keep"


class PolicyError(ValueError):
    """A declared policy the model has no parameter for (an adapter failure, exit 3)."""


def _amount(v: Any, name: str) -> int:
    """A declared number the model handles: an integer in ``0 … 2^31 − 1``
    (AMQ-TOPOLOGY-LIMITS, AMQ-SERIAL), else :class:`PolicyError` (exit 3, not a
    traceback)."""
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_AMOUNT:
        raise PolicyError(
            f"declared {name} {v!r} is not an integer in 0 … {MAX_AMOUNT} (AMQ-TOPOLOGY-LIMITS)"
        )
    return v


def model_policy(policy: Mapping[str, Any], settings: Mapping[str, Any]) -> ModelPolicy:
    """AD-AMQ-POLICY → the model's policy objects (AMQ-POL-*). A window the model has no
    renewal for (``x-renewal``) or no bound for (``x-unbounded``) leaves the session
    window fields uncompared (AD-AMQ-CONFORM-COMPARE). Numbers the policies refuse (a
    window of 0, a threshold not below its window) are a :class:`PolicyError` too (an
    adapter failure, exit 3, never a traceback)."""
    try:
        return _model_policy(policy, settings)
    except PolicyError:
        raise
    except (ValueError, TypeError) as exc:
        raise PolicyError(f"declared policy the model cannot take: {exc}") from None


def _model_policy(policy: Mapping[str, Any], settings: Mapping[str, Any]) -> ModelPolicy:
    c = dict(policy.get("credit") or {})
    w = dict(policy.get("window") or {})
    uncompared: list[str] = []
    credit: CreditPolicy
    if c.get("policy") == "manual":
        credit = None
    elif c.get("policy") == "window":
        credit = CreditWindow(
            _amount(c.get("window"), "credit.window"),
            _amount(c.get("threshold"), "credit.threshold"),
            c.get("count", "credit"),
            c.get("encoding", "absolute"),
            c.get("renew_on", "arrival"),
        )
    else:
        raise PolicyError(f"credit policy {c!r} has no model parameter")
    window: WindowPolicy
    kind = w.get("policy")
    if kind == "fixed":
        window = WindowFixed(
            _amount(w.get("window"), "window.window"),
            _amount(w.get("threshold"), "window.threshold"),
        )
    elif kind == "never":
        window = WindowNever(_amount(w.get("window"), "window.window"))
    elif kind == "ring":
        window = WindowRing(_amount(w.get("slots"), "window.slots"))
    elif kind == "capacity":
        window = WindowCapacity(
            _amount(w.get("capacity"), "window.capacity"), _amount(w.get("frame"), "window.frame")
        )
    elif kind == "x-unbounded":
        window = WindowNever(_amount(w.get("window"), "window.window"))
        uncompared += ["incoming_window", "remote_incoming_window"]
    else:
        raise PolicyError(f"window policy {w!r} has no model parameter")
    if any(k.startswith("x-") for k in w):
        uncompared += ["incoming_window", "remote_incoming_window"]
    formula = dict(policy.get("sender_credit") or {}).get("formula", "serial")
    # FIND-POLICY-DECLARED: a legal choice the adapter declares (AMQ-POL-GRANT-DRAIN)
    grant_drain = policy.get("grant_drain", "keep")
    if grant_drain not in GRANT_DRAIN:
        raise PolicyError(f"grant_drain {grant_drain!r} is none of {', '.join(GRANT_DRAIN)}")
    return ModelPolicy(
        credit,
        window,
        SenderCredit(formula),
        int(settings.get("message_frames", 1)),
        tuple(dict.fromkeys(uncompared)),
        policy.get("drain_echo") == "auto",
        grant_drain,
    )


@dataclass
class ModelLink:
    """The model's ``link`` shape driven op by op (AMQ-TS's rules, AMQ-LINK-*,
    AMQ-SESSION-*, AMQ-POL-*), brought to rest after each op like the adapter
    (AD-AMQ-QUIESCE): the sender sends while credit and window allow, frames are taken
    in order; the application's own steps (grant, drain, drain answer, settle) happen
    only by op."""

    pol: ModelPolicy
    cfg: ReceiverConfig
    sender: Sender
    receiver: Receiver
    fwd: list[Transfer | Flow] = field(default_factory=list)
    back: list[Flow] = field(default_factory=list)

    @classmethod
    def start(cls, pol: ModelPolicy, ids: Mapping[str, int], sender_window: int) -> ModelLink:
        """After BEGIN and ATTACH (AMQ-BEGIN-ATTACH); ``ids`` are the initial
        delivery-count and transfer ids the implementation chose."""
        cfg = ReceiverConfig(pol.credit, pol.window, 0, (), 0, pol.grant_drain)
        rcv, flows = endpoints.initial_receiver(cfg, ids["delivery_count"], sender_window)
        rcv = rcv._replace(
            session=rcv.session._replace(
                next_incoming_id=ids["client_next_outgoing_id"],
                next_outgoing_id=ids["server_next_outgoing_id"],
            )
        )
        ses = session.SessionEnd(
            ids["server_next_outgoing_id"],
            sender_window,
            ids["client_next_outgoing_id"],
            session.initial_window(pol.window),
        )
        snd = Sender(LinkEnd(ids["delivery_count"], 0), ses, 0, 0)
        m = cls(pol, cfg, snd, rcv, [], list(flows))
        m.quiesce()
        return m

    def possible(self, op: AmqpOp) -> bool:
        """AD-AMQ-CONFORM-OPS: ops the model allows now (a run draws only these)."""
        r = self.receiver
        if op.op in ("flow", "drain"):
            if self.pol.credit is not None:
                return False  # credit by policy, not by hand
            return op.op == "flow" or (not r.link.drain and r.link.credit + op.credit > 0)
        if op.op == "settle":
            return len(r.unsettled) >= op.keep + op.number
        if op.op == "drained":
            return not self.pol.drain_auto  # AD-AMQ-RMQ-POLICY: no application step
        return op.op == "transfer"

    def apply(self, op: AmqpOp) -> None:
        """One op, then rest (AD-AMQ-CONFORM-OPS)."""
        r, cfg = self.receiver, self.cfg
        if op.op == "transfer":
            self.sender = self.sender._replace(supply=self.sender.supply + 1)
        elif op.op == "flow":
            # AMQ-POL-CREDIT-MANUAL: the application adds n; the FLOW is absolute
            grant = cfg._replace(grants=(r.link.credit + op.credit,))
            r2, f = endpoints.receiver_grant(grant, r._replace(grants_used=0))
            self.receiver = r2._replace(grants_used=r.grants_used + 1)
            self.back.append(f)
        elif op.op == "drain":
            # AMQ-LINK-DRAIN: the credit added and the drain asked in one FLOW
            r = r._replace(link=r.link._replace(credit=r.link.credit + op.credit))
            self.receiver, f = endpoints.receiver_drain(r)
            self.back.append(f)
        elif op.op == "drained":
            if endpoints.sender_may_end_drain(self.sender):
                self.sender, f = endpoints.sender_end_drain(self.sender)
                self.fwd.append(f)
        elif op.op == "settle":
            held = r.unsettled[: op.keep]
            r = r._replace(
                unsettled=tuple((t, m, True) for t, m, _ in held) + r.unsettled[op.keep :]
            )
            for _ in range(op.number):
                r, _seq, flows = endpoints.receiver_settle(cfg, r)
                self.back.extend(flows)
            kept = tuple((t, m, False) for t, m, _ in r.unsettled[: op.keep])
            self.receiver = r._replace(unsettled=kept + r.unsettled[op.keep :])
        self.quiesce()

    def _may_send(self) -> bool:
        s = self.sender
        return (
            s.supply > 0
            and s.link.credit > 0
            and s.session.remote_incoming_window >= self.pol.frames
        )

    def quiesce(self) -> None:
        """Send and take frames until nothing moves (AD-AMQ-QUIESCE). A message of F
        frames is one delivery on the link (AMQ-LINK-TRANSFER, §2.6.6) and F transfer
        frames on the session (AMQ-SESSION-SEND, AMQ-SESSION-RECV)."""
        while True:
            if self._may_send():
                snd, tr = endpoints.send(self.sender)
                for _ in range(self.pol.frames - 1):
                    snd = snd._replace(session=session.sent(snd.session))
                self.sender = snd
                self.fwd.append(tr)
            elif self.fwd:
                head = self.fwd.pop(0)
                r, flows = endpoints.receiver_on_frame(self.cfg, self.receiver, head)
                if isinstance(head, Transfer):
                    ids = tuple(t for t, _, _ in r.unsettled)
                    for _ in range(self.pol.frames - 1):
                        ses, renewed = session.received(
                            self.cfg.window, r.session, ids, len(r.unsettled)
                        )
                        r = r._replace(session=ses)
                        if renewed:
                            flows = (*flows, Flow(session.flow_fields(ses), None))
                self.receiver = r
                self.back.extend(flows)
            elif self.back:
                head = self.back.pop(0)
                self.sender, answers = endpoints.sender_on_flow(self.sender, head, self.pol.sender)
                self.fwd.extend(answers)
            elif self.pol.drain_auto and endpoints.sender_may_end_drain(self.sender):
                self.sender, f = endpoints.sender_end_drain(self.sender)  # AD-AMQ-RMQ-POLICY
                self.fwd.append(f)
            else:
                return

    def properties_broken(self) -> tuple[str, ...]:
        """The state properties the model's own state breaks (PROP-AMQ-CREDIT,
        PROP-AMQ-NONNEG, PROP-AMQ-AGREE, PROP-AMQ-DRAIN), for a property verdict."""
        s = LinkState(self.sender, tuple(self.fwd), self.receiver, tuple(self.back))
        checks = (
            ("PROP-AMQ-CREDIT", properties.credit_ok),
            ("PROP-AMQ-NONNEG", properties.nonneg_ok),
            ("PROP-AMQ-AGREE", properties.agree_ok),
            ("PROP-AMQ-DRAIN", properties.drain_ok),
        )
        return tuple(name for name, ok in checks if not ok(s))

    def view(self) -> dict[str, int]:
        """The model's endpoints in the names of ``WireMonitor.endpoints()``
        (AMQ-LINK-STATE, AMQ-SESSION-STATE)."""
        s, r = self.sender, self.receiver
        return {
            "sender.delivery_count": s.link.delivery_count,
            "sender.credit": s.link.credit,
            "receiver.delivery_count": r.link.delivery_count,
            "receiver.credit": r.link.credit,
            "client.next_outgoing_id": s.session.next_outgoing_id,
            "client.remote_incoming_window": s.session.remote_incoming_window,
            "server.next_incoming_id": r.session.next_incoming_id,
            "server.incoming_window": r.session.incoming_window,
        }


def run_session(endpoints: Mapping[str, Any], side: str) -> dict[str, Any]:
    """The run's one session at ``side`` as the wire shows it: the one on the lowest
    channel (proton and rhea begin on channel 0, azure-pyamqp on 1: AD-AMQ-AZURE-ENDS)."""
    ours = [k for k in endpoints["sessions"] if k.startswith(side + ":")]
    if not ours:
        return {}
    return dict(endpoints["sessions"][min(ours, key=lambda k: int(k.split(":", 1)[1]))])


def wire_view(monitor: WireMonitor) -> dict[str, int | None]:
    """The implementation's endpoints as its frames show them (AD-AMQ-MONITOR
    ``endpoints()``), in the names of :meth:`ModelLink.view`."""
    e = monitor.endpoints()
    ends = e["links"].get(LINK, {})
    client, server = run_session(e, "client"), run_session(e, "server")
    return {
        "sender.delivery_count": ends.get("sender", {}).get("delivery_count"),
        "sender.credit": ends.get("sender", {}).get("credit"),
        "receiver.delivery_count": ends.get("receiver", {}).get("delivery_count"),
        "receiver.credit": ends.get("receiver", {}).get("credit"),
        "client.next_outgoing_id": client.get("next_outgoing_id"),
        "client.remote_incoming_window": client.get("remote_incoming_window"),
        "server.next_incoming_id": server.get("next_incoming_id"),
        "server.incoming_window": server.get("incoming_window"),
    }


@dataclass(frozen=True)
class FieldDiff:
    """One endpoint field where model and implementation differ (AD-AMQ-CONFORM-COMPARE)."""

    field: str
    model: int | None
    implementation: int | None


def diff_documents(diffs: Sequence[FieldDiff]) -> list[dict[str, Any]]:
    """The ``diffs`` of a run's document (OUT-JSON-SCHEMA)."""
    return [{"field": d.field, "model": d.model, "implementation": d.implementation} for d in diffs]


@dataclass(frozen=True)
class AmqpRun:
    """One run's verdict (AD-AMQ-CONFORM-VERDICT): ``diverged`` (the first op after which
    the states differ, or that the implementation refused), ``property`` (a monitor rule
    broken while the model agreed) or ``pass``."""

    settings: dict[str, int]
    ops: tuple[AmqpOp, ...]
    verdict: str
    index: int | None = None
    diffs: tuple[FieldDiff, ...] = ()
    violations: tuple[Violation, ...] = ()
    model: dict[str, int] = field(default_factory=dict)
    implementation: dict[str, int | None] = field(default_factory=dict)
    compared: tuple[str, ...] = ()
    model_broken: tuple[str, ...] = ()
    #: TRACE-AMQP-RUN: where the model started (the ids the implementation chose, the
    #: sender's window) and the policy the adapter declared, so a trace replays the model
    start: dict[str, int] = field(default_factory=dict, compare=False)
    declared: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def failed(self) -> bool:
        return self.verdict != "pass"

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "settings": self.settings,
            "ops": [str(o) for o in self.ops],
            "op_index": self.index,
            "diffs": diff_documents(self.diffs),
            "violations": [{"rule": v.rule, "message": v.message} for v in self.violations],
            "model": self.model,
            "implementation": self.implementation,
            "compared": list(self.compared),
            "model_broken": list(self.model_broken),
        }


Chooser = Callable[[ModelLink, int], AmqpOp | None]
#: AD-AMQ-EXPECTATIONS-MASK: a failed run of these ops under these sizes judged with the
#: known divergences masked: the first failure that is no known one (a run whose ops
#: are a subsequence of the ops given), or a passing run
Mask = Callable[[AmqpAdapter, Mapping[str, int], Sequence[AmqpOp], "AmqpRun"], "AmqpRun"]


def run_ops(
    adapter: AmqpAdapter,
    settings: Mapping[str, int],
    ops: Sequence[AmqpOp] | Chooser,
    steps: int = 0,
) -> AmqpRun:
    """One run (AD-AMQ-CONFORM): reset with ``settings``, begin, attach, then the ops (a
    fixed sequence, ops the model does not allow skipped; or drawn by ``ops(model, i)``
    up to ``steps``), comparing after every op; stops at the first failure."""
    reply = adapter.step({"op": "reset", "settings": dict(settings)})
    declared = reply.extra.get("policy") or adapter.info["policy"]
    pol = model_policy(declared, settings)
    monitor = WireMonitor(manual=pol.credit is None)
    for req in (
        {"op": "begin", "session": SESSION},
        {"op": "attach", "session": SESSION, "link": LINK},
    ):
        got = adapter.step(req)
        monitor.feed(got.frames)
    e = monitor.endpoints()
    client, server = run_session(e, "client"), run_session(e, "server")
    ids = {
        "delivery_count": e["links"][LINK]["sender"]["delivery_count"],
        "client_next_outgoing_id": client.get("next_outgoing_id", 0),
        "server_next_outgoing_id": server.get("next_outgoing_id", 0),
    }
    sender_window = int(server.get("remote_incoming_window") or 0)
    model = ModelLink.start(pol, ids, sender_window)
    start = {**ids, "sender_window": sender_window}
    compared = tuple(k for k in model.view() if k.split(".", 1)[1] not in pol.uncompared)
    done: list[AmqpOp] = []
    for op in ops_in_turn(model, ops, steps):
        done.append(op)
        got2 = adapter.try_step(op.request())
        if got2 is None:
            return AmqpRun(
                dict(settings),
                tuple(done),
                "diverged",
                len(done) - 1,
                (FieldDiff(f"{op.op} refused", 0, 1),),
                # AD-AMQ-RMQ-ENDED: the implementation's own words for the refusal
                (Violation(REFUSED_RULE, LINK, op.request(), adapter.last_refusal),),
                model=model.view(),
                compared=compared,
                start=start,
                declared=dict(declared),
            )
        model.apply(op)
        if op.op in ("flow", "drain"):
            monitor.granted(LINK, op.credit)
        found = monitor.feed(got2.frames) + monitor.at_rest(op.op, got2.state)
        mv, wv = model.view(), wire_view(monitor)
        diffs = tuple(FieldDiff(k, mv[k], wv[k]) for k in compared if mv[k] != wv[k])
        diffs += tuple(
            FieldDiff(f"property {v.rule}", 0, 1) for v in found if v.rule in MODEL_KEEPS
        )
        if diffs or found:
            verdict = "diverged" if diffs else "property"
            return AmqpRun(
                dict(settings),
                tuple(done),
                verdict,
                len(done) - 1,
                diffs,
                tuple(found),
                mv,
                wv,
                compared,
                model.properties_broken(),
                start,
                dict(declared),
            )
    return AmqpRun(
        dict(settings), tuple(done), "pass", compared=compared, start=start, declared=dict(declared)
    )


#: AD-AMQ-CONFORM-SIZES: the reference's sizes (AMQ-POL-WINDOW-FIXED): a window of 3
#: renewed at 1; a window of 2 renewed at 0 with a delivery-count 2 below the serial
#: wrap; a window of 4 renewed at 1 with 2-frame messages. A threshold below the frames
#: of one message less one stalls by the policy itself (the window left cannot carry a
#: message and no arrival renews it), which ``conform`` reports as exit 12.
REFERENCE_SIZES = (
    {"window": 3, "threshold": 1, "message_frames": 1, "initial_delivery_count": 0},
    {"window": 2, "threshold": 0, "message_frames": 1, "initial_delivery_count": (1 << 32) - 2},
    {"window": 4, "threshold": 1, "message_frames": 2, "initial_delivery_count": 0},
)


#: AD-AMQ-10-SIZES: amqp10_client as the sender to a proton receiver (its defaults:
#: proton frees its capacity when the application reads, on arrival, where the
#: model's capacity policy frees it on settle); as the receiver, credit by hand and a
#: credit window of 4 renewed at 2.
AMQP10_CLIENT_SIZES = (
    {"client_receives": 0},
    {"client_receives": 1},
    {"client_receives": 1, "credit_window": 4, "renew_when": 2},
)


def settings_choices(info: Mapping[str, Any]) -> list[dict[str, int]]:
    """AD-AMQ-CONFORM-SIZES: the small sizes runs choose among, from the settings the
    adapter offers (AD-AMQ-SETTINGS): the reference's windows of 2–4 frames, rhea's
    rings of 2–3 slots with credit by hand or a credit window of 4, proton's defaults."""
    offered = dict(info.get("settings") or {})
    if {"window", "threshold", "message_frames", "initial_delivery_count"} <= set(offered):
        return [dict(s) for s in REFERENCE_SIZES]
    if "client_receives" in offered:  # amqp10-client (AD-AMQ-10-SIZES)
        return [dict(s) for s in AMQP10_CLIENT_SIZES]
    base: dict[str, list[int]] = {}
    if "session_buffer_size" in offered:  # rhea's ring
        base["session_buffer_size"] = [3, 2]
    if "outgoing_buffer_size" in offered:  # the sender's ring: out of the way (no model bound)
        base["outgoing_buffer_size"] = [64]
    if "credit_window" in offered:
        base["credit_window"] = [0, 4]
    if "sender_link_credit" in offered:  # azure-pyamqp (AD-AMQ-AZURE-SIZES)
        base["link_credit"] = [0, 2]
        base["incoming_window"] = [3, 2]
    if "quorum_queue" in offered:  # AD-AMQ-RMQ-SETTINGS: a classic queue, then a quorum one
        base["quorum_queue"] = [0, 1]
    return [dict(zip(base, values, strict=True)) for values in itertools.product(*base.values())]


@dataclass(frozen=True)
class AmqpPhase:
    name: str
    runs: int
    ops: int
    seconds: float


def result_document(result: Any) -> dict[str, Any]:
    """OUT-JSON-SCHEMA: the keys every AMQP ``conform --json`` document starts with, in
    order (the link end's and the queue end's, AD-AMQ-CONFORM, AD-AMQ-FIFO-CONFORM)."""
    return {
        "family": "amqp",
        "verdict": result.verdict,
        "exit_code": result.exit_code,
        "adapter": result.adapter,
        "version": result.version,
        "policy": result.policy,
        "seed": result.seed,
        "phases": [
            {"name": p.name, "runs": p.runs, "ops": p.ops, "seconds": round(p.seconds, 3)}
            for p in result.phases
        ],
        "found_by": result.found_by,
        "run": None if result.run is None else result.run.to_json(),
        "failure": result.failure,
    }


@dataclass(frozen=True)
class AmqpConformResult:
    """The verdict of an AMQP conform run (AD-AMQ-CONFORM-VERDICT, OUT-TYPED-RESULT)."""

    adapter: str
    version: str
    policy: dict[str, Any]
    seed: int
    phases: tuple[AmqpPhase, ...]
    run: AmqpRun | None
    found_by: str | None
    failure: str | None = None
    #: AD-AMQ-EXPECTATIONS-MATCH: the known divergences (name, why, signature), how often
    #: each was met and masked, listed traces that pass, listed traces not run (why)
    known: tuple[tuple[str, str, str], ...] = ()
    expected_hits: dict[str, int] = field(default_factory=dict)
    unexpected_passes: tuple[str, ...] = ()
    known_not_run: dict[str, str] = field(default_factory=dict)
    #: FIND-EVERY: every distinct finding of the run, in the order found, and the run
    #: each stands for (its shortest witness)
    findings: tuple[Finding, ...] = ()
    finding_runs: tuple[AmqpRun, ...] = ()
    #: FIND-EXIT: ``--strict``: every class fails the run
    strict: bool = False
    #: FIND-EVERY: the cap on distinct findings, and whether the run stopped at it
    max_findings: int = 0
    capped: bool = False

    @property
    def failing(self) -> tuple[Finding, ...]:
        """FIND-EXIT: the findings that fail the run."""
        return failing(self.findings, self.strict)

    @property
    def verdict(self) -> str:
        """FIND-EXIT: ``run`` is the first failing finding's run; only ``should`` and
        ``policy`` findings (without ``--strict``) leave the run conformant."""
        if self.failure is not None:
            return "adapter-failure"
        if self.run is None:
            return "unexpected-pass" if self.unexpected_passes else "conformant"
        runs = [
            r for f, r in zip(self.findings, self.finding_runs, strict=True) if f.fails(self.strict)
        ]
        if any(r.verdict == "diverged" for r in runs) or self.run.verdict == "diverged":
            return "divergence"
        return "property-violated"

    @property
    def exit_code(self) -> int:
        """0 conformant and no property violated, 1 diverged, 3 adapter failed, 12 a
        property violated with the model agreeing (AD-AMQ-CONFORM-VERDICT)."""
        return VERDICT_EXIT_CODES[self.verdict]

    def to_json(self) -> dict[str, Any]:
        return {
            **result_document(self),
            "expected_divergences": [
                {"trace": n, "why": why, "signature": sig, "met": self.expected_hits.get(n, 0)}
                for n, why, sig in self.known
            ],
            "unexpected_passes": list(self.unexpected_passes),
            "expectations_not_run": dict(self.known_not_run),
            # FIND-RECORD: every distinct finding, and the summary (FIND-EVERY)
            "findings": [f.to_json() for f in self.findings],
            "findings_summary": findings_summary(self),
        }


def findings_summary(result: AmqpConformResult) -> dict[str, Any]:
    """FIND-EVERY: how many distinct findings, by class, how many fail the run
    (FIND-EXIT), whether the cap stopped the search, and the budget used."""
    by_class = {k: sum(f.klass == k for f in result.findings) for k in CLASSES}
    return {
        "distinct": len(result.findings),
        "by_class": by_class,
        "failing": len(result.failing),
        "strict": result.strict,
        "max_findings": result.max_findings,
        "capped": result.capped,
        "runs": sum(p.runs for p in result.phases),
        "ops": sum(p.ops for p in result.phases),
        "seconds": round(sum(p.seconds for p in result.phases), 3),
    }


@dataclass(frozen=True)
class AmqpConformOptions:
    seed: int
    max_examples: int = DEFAULT_AMQP_EXAMPLES
    steps: int = DEFAULT_AMQP_STEPS
    depth: int = DEFAULT_DEPTH
    phases: tuple[str, ...] = AMQP_PHASES
    skip: tuple[str, ...] = ()
    #: AD-AMQ-EXPECTATIONS-MASK: known divergences masked (``amqp_expected.Masker``)
    mask: Mask | None = None
    #: FIND-EXIT: ``--strict``
    strict: bool = False
    #: FIND-EVERY: the search stops at this many distinct findings (``--max-findings``)
    max_findings: int = DEFAULT_MAX_FINDINGS

    @property
    def alphabet(self) -> tuple[AmqpOp, ...]:
        """The ops runs draw from: :data:`ALPHABET` without the skipped op names."""
        return tuple(o for o in ALPHABET if o.op not in self.skip)


def _explore(
    adapter: AmqpAdapter,
    choices: list[dict[str, int]],
    depth: int,
    alphabet: tuple[AmqpOp, ...] = ALPHABET,
    mask: Mask | None = None,
    stats: dict[str, int] | None = None,
) -> Iterator[AmqpRun]:
    """AD-AMQ-CONFORM-EXPLORE, FIND-EVERY: every sequence of up to ``depth`` ops the model
    allows, shortest first, under each size choice; each failing run ``mask`` does not
    find known (a shortest one of its kind), the search going on after it."""
    policies = [model_policy(_declared(adapter, s), s) for s in choices]
    return explore_all(
        list(zip(choices, policies, strict=True)),
        alphabet,
        depth,
        lambda choice, seq: model_allows(choice[1], seq),
        lambda choice, seq: run_ops(adapter, choice[0], seq),
        None if mask is None else lambda choice, seq, run: mask(adapter, choice[0], seq, run),
        stats,
    )


def _declared(adapter: AmqpAdapter, settings: Mapping[str, int]) -> dict[str, Any]:
    """The policy the adapter declares with ``settings`` in effect (AD-AMQ-RESET)."""
    reply = adapter.step({"op": "reset", "settings": dict(settings)})
    return dict(reply.extra.get("policy") or adapter.info["policy"])


def model_allows(pol: ModelPolicy, seq: Sequence[AmqpOp]) -> bool:
    """Whether the model allows every op of ``seq`` in order (no run skips an op);
    decided on the model alone."""
    window = session.initial_window(pol.window)
    zero = {"delivery_count": 0, "client_next_outgoing_id": 0, "server_next_outgoing_id": 0}
    return allows_in_order(ModelLink.start(pol, zero, window), seq)


def _hypothesis(
    adapter: AmqpAdapter,
    choices: list[dict[str, int]],
    options: AmqpConformOptions,
    alphabet: tuple[AmqpOp, ...] = ALPHABET,
) -> tuple[AmqpRun | None, int, int]:
    """AD-AMQ-CONFORM-HYPOTHESIS: Hypothesis draws the sizes and each op among those the
    model allows; it shrinks a failing run, delta debugging shrinks it further."""
    mask = options.mask
    if options.max_examples < 1:
        return None, 0, 0
    return hypothesis_search(
        choices,
        "settings",
        alphabet,
        lambda chosen, choose: run_ops(adapter, chosen, choose, options.steps),
        lambda chosen, seq: run_ops(adapter, chosen, seq),
        lambda run: run.settings,
        options.seed,
        options.max_examples,
        None if mask is None else lambda chosen, seq, run: mask(adapter, chosen, seq, run),
    )


def run_amqp_conform(
    factory: Callable[[], AmqpAdapter], options: AmqpConformOptions
) -> AmqpConformResult:
    """``conform`` for an AMQP adapter (AD-AMQ-CONFORM, FIND-EVERY): the explorer's runs,
    then Hypothesis's; after each finding the search masks it (AD-AMQ-EXPECTATIONS-MASK,
    as an expectation would) and goes on, the explorer from where it was, Hypothesis
    again with the grown mask and what is left of its examples, until the budget ends
    or ``max_findings`` distinct findings are found."""
    # deferred: expected.py builds on this module
    from creditflow.conformance.families.amqp.expected import (
        KnownAmqpFailure,
        Masker,
        run_signature,
    )

    # deferred: rules.py reads this module's runs
    from creditflow.conformance.families.amqp.rules import amqp_finding

    name, version = "?", "?"
    declared: dict[str, Any] = {}
    phases: list[AmqpPhase] = []
    masker = options.mask if isinstance(options.mask, Masker) else Masker(())
    base = None if isinstance(options.mask, Masker) else options.mask

    def mask(
        adapter: AmqpAdapter, s: Mapping[str, int], seq: Sequence[AmqpOp], r: AmqpRun
    ) -> AmqpRun:
        if base is not None:
            r = base(adapter, s, seq, r)
        return masker(adapter, s, seq, r) if r.failed else r

    findings: list[Finding] = []
    runs_of: list[AmqpRun] = []

    def record(run: AmqpRun, phase: str) -> bool:
        """FIND-EVERY: a new finding masked from now on; whether the cap is reached."""
        found = amqp_finding(run, phase)
        masker.known += (
            KnownAmqpFailure(f"finding {found.id}", found.rule.id, run_signature(run)),
        )
        if all(f.signature != found.signature for f in findings):
            findings.append(found)
            runs_of.append(run)
        return len(findings) >= options.max_findings

    def result(failure: str | None = None) -> AmqpConformResult:
        first = next(
            (r for f, r in zip(findings, runs_of, strict=True) if f.fails(options.strict)), None
        )
        by = next((f.found_by for f in findings if f.fails(options.strict)), None)
        return AmqpConformResult(
            name,
            version,
            declared,
            options.seed,
            tuple(phases),
            first,
            by,
            failure,
            findings=tuple(findings),
            finding_runs=tuple(runs_of),
            strict=options.strict,
            max_findings=options.max_findings,
            capped=len(findings) >= options.max_findings,
        )

    try:
        adapter = factory()
    except AdapterFailure as exc:
        return result(str(exc))
    try:
        name = str(adapter.name)
        version = str(adapter.info.get("version"))
        declared = dict(adapter.info.get("policy") or {})
        choices = settings_choices(adapter.info)
        # AD-AMQ-CONFORM-OPS: only the ops the adapter offers (azure-pyamqp has no
        # ``drained``: AD-AMQ-AZURE-OPS)
        alphabet = tuple(o for o in options.alphabet if o.op in adapter.ops)
        for phase in options.phases:
            if len(findings) >= options.max_findings:
                break
            t0 = time.perf_counter()
            stats = {"runs": 0, "ops": 0}
            if phase == "explorer-runs":
                for failed in _explore(adapter, choices, options.depth, alphabet, mask, stats):
                    if record(failed, phase):
                        break
            else:
                left = options.max_examples
                while left > 0 and len(findings) < options.max_findings:
                    more = dataclasses.replace(options, mask=mask, max_examples=left)
                    drawn, runs, ops = _hypothesis(adapter, choices, more, alphabet)
                    stats["runs"] += runs
                    stats["ops"] += ops
                    left -= max(runs, 1)
                    if drawn is None:
                        break
                    record(drawn, phase)
            phases.append(AmqpPhase(phase, stats["runs"], stats["ops"], time.perf_counter() - t0))
        return result()
    except (AdapterFailure, PolicyError) as exc:
        return result(str(exc))
    finally:
        adapter.close()


def failing_run_head(
    sizes: str, opening: str, ops: Sequence[object], index: int | None, diffs: Sequence[FieldDiff]
) -> list[str]:
    """How both AMQP conform drivers' failing run begins as text (no I/O): the sizes,
    ``opening`` as op 0, the ops with the failing one (``index``) marked, then model vs
    implementation at it."""
    n = len(ops)
    lines = [f"shortest failing trace: {n} op{'s' * (n != 1)} (sizes: {sizes})"]
    lines.append(f"     0  {opening}")
    for i, op in enumerate(ops, start=1):
        marker = ">" if index is not None and i == index + 1 else " "
        lines.append(f"  {marker}{i:3}  {op}")
    if index is not None:
        lines.append(f"after op {index + 1} ({ops[index]}):")
    if diffs:
        width = max(len(d.field) for d in diffs)
        lines.append(f"    {'field':{width}}  model  implementation")
        for d in diffs:
            lines.append(f"    {d.field:{width}}  {d.model!s:5}  {d.implementation}")
    return lines


def run_lines(run: AmqpRun) -> list[str]:
    """The failing run as text (no I/O): the sizes, the ops up to the failure, then
    model vs implementation at that op and the properties the implementation broke."""
    sizes = ", ".join(f"{k} {v}" for k, v in run.settings.items()) or "defaults"
    lines = failing_run_head(sizes, "reset, begin s, attach L", run.ops, run.index, run.diffs)
    for v in run.violations:
        if v.rule == REFUSED_RULE:
            lines.append(f"    refused ({v.link}): {v.message}")
        else:
            lines.append(f"    property {v.rule} ({v.link}): {v.message}")
    if run.verdict == "property":
        broken = ", ".join(run.model_broken) or "none of its state properties"
        lines.append(
            f"    the model with the same policy reaches the same state; it breaks: {broken}"
        )
    return lines
