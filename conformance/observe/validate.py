"""Validate a recorded ``credit_flow`` trace against the model (spec/observe.md,
OBS-VALIDATE): every process's events are a run of the per-process model (CF-*) from
its state in the first snapshot to its state in the last, and the merged trace is a
run of the network semantics (NET-FIFO matching of acks to sends and of bumps to
grants, CF-FLUSH order) with PROP-CONSERVATION holding after every event.

Events, not NET steps, are the unit (OBS-DIFF-INTERLEAVING: the CF calls of one handling
interleave with other processes' calls on a live node); pairs after ``peer_down`` start
over and are no longer checked (OBS-DIFF-PEER-DOWN).

Plain data in (an observe trace document, OBS-TRACE-FILE), plain data out.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from creditflow.conformance.inputs import itf
from creditflow.conformance.inputs.reading import InputError, load_json
from creditflow.conformance.observe.snapshot import SnapshotError, build_edges, parse_processes
from creditflow.model.credit import flow as cf
from creditflow.model.credit.spec import CreditSpec

TRACE_FORMAT = "creditflow-observe-trace/1"

#: event kinds and how many arguments each carries after [t, u, pid, kind] (OBS-EVENT)
ARITY = {
    "send": 3,
    "ack": 3,
    "bump": 2,
    "peer_down": 1,
    "block": 2,
    "unblock": 2,
    "grant": 2,
    "blocked?": 1,
}


class TraceError(InputError):
    """A trace document that is not an observe trace; the message says where."""


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first event where the trace and the model disagree."""

    index: int  # position in the validated (windowed, sorted) event list; -1: final states
    rule: str
    detail: str
    event: list[Any] | None

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "rule": self.rule, "detail": self.detail, "event": self.event}


@dataclass(frozen=True, slots=True)
class Result:
    events: int
    processes: int
    divergence: Divergence | None
    seconds: float
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.divergence is None

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "events": self.events,
            "processes": self.processes,
            "seconds": round(self.seconds, 3),
            "events_per_second": round(self.events / self.seconds) if self.seconds else None,
            "divergence": self.divergence.to_json() if self.divergence else None,
            "stats": self.stats,
        }


def load_trace(path: str | Path) -> dict[str, Any]:
    """Read and check the shape of an observe trace file (TraceError names the problem)."""
    p = Path(path)
    try:
        doc = load_json(p)  # IN-READ, IN-DEPTH, IN-INT, IN-FINITE, IN-DUPLICATE
    except InputError as exc:
        raise TraceError(str(exc)) from None
    if not isinstance(doc, dict) or doc.get("format") != TRACE_FORMAT:
        raise TraceError(f"{p}: not an observe trace (format {TRACE_FORMAT!r} expected)")
    for key in ("first", "last", "events"):
        if key not in doc:
            raise TraceError(f"{p}: no {key!r}")
    for i, e in enumerate(doc["events"]):
        if not isinstance(e, list) or len(e) < 4 or e[3] not in ARITY or len(e) != 4 + ARITY[e[3]]:
            raise TraceError(f"{p}: event {i} is malformed: {str(e)[:80]}")
    return doc


def window(doc: dict[str, Any]) -> list[list[Any]]:
    """OBS-WINDOW: the events strictly between the two cuts, in stamp order."""
    lo, hi = doc["first"]["t_suspended"], doc["last"]["t_suspended"]
    return [e for e in doc["events"] if lo < e[0] < hi]


def _state(p: Any) -> cf.ProcessCredit:
    return cf.ProcessCredit(
        dict(p.credit_from), dict(p.credit_to), tuple(p.blocked), tuple(p.deferred)
    )


def _view(ps: cf.ProcessCredit) -> dict[str, Any]:
    return {
        "credit_from": dict(sorted(ps.credit_from.items())),
        "credit_to": dict(sorted(ps.credit_to.items())),
        "blocked": list(ps.blocked),
        "deferred": [list(d) for d in ps.deferred],
    }


class Validator:
    """Replays events one by one (see module doc); :meth:`run` returns a :class:`Result`."""

    def __init__(self, doc: dict[str, Any]) -> None:
        try:
            self.first = parse_processes(doc["first"])
            self.last = parse_processes(doc["last"])
        except SnapshotError as exc:
            raise TraceError(f"snapshot: {exc}") from exc
        self.info = doc["first"].get("info") or {}
        self.events = window(doc)
        self.states: dict[str, cf.ProcessCredit] = {p: _state(x) for p, x in self.first.items()}
        self.expect: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
        self.data: dict[tuple[str, str], int] = defaultdict(int)  # debits S -> R in flight
        self.grants: dict[tuple[str, str], int] = defaultdict(int)  # credit R -> S in flight
        #: grants the model emitted whose bump_credit send is not traced yet
        self.pending: dict[tuple[str, str], int] = defaultdict(int)
        self.spec: dict[tuple[str, str], CreditSpec] = {}
        self.reset: set[tuple[str, str]] = set()  # pairs after peer_down (CF-PEER-DOWN)
        for e in build_edges(self.first, self.info):
            self.data[(e.sender, e.receiver)] = e.data
            self.grants[(e.sender, e.receiver)] = e.grants
            self.spec[(e.sender, e.receiver)] = CreditSpec(*e.spec)
            if not e.complete:
                self.reset.add((e.sender, e.receiver))
        self.new_processes: set[str] = set()
        self.stats: dict[str, int] = defaultdict(int)

    def st(self, pid: str) -> cf.ProcessCredit:
        if pid not in self.states:
            self.states[pid] = cf.ProcessCredit()
            self.new_processes.add(pid)
        return self.states[pid]

    # -- one event ------------------------------------------------------------------

    def step(self, e: list[Any]) -> tuple[str, str] | None:
        """Apply one event; None or (rule, why) for a divergence."""
        pid, kind, args = e[2], e[3], e[4:]
        self.stats[kind] += 1
        exp = self.expect[pid]
        if exp:
            want = exp[0]
            got = (kind, str(args[0]), int(args[1]) if kind == "grant" else 0)
            if kind in ("block", "unblock") and args[1] is True:
                got = (kind, str(args[0]), 0)
            if kind == "blocked?":
                return None  # a blocked() call by the caller between two internal steps
            if got != want:
                return (
                    "OBS-CF-RUN",
                    f"{pid}: model expects {want[0]} {want[1]}"
                    f"{' ' + str(want[2]) if want[0] == 'grant' else ''}"
                    f" next, trace has {kind} {args}",
                )
            exp.pop(0)
            if kind == "grant":
                pair = (str(args[0]), pid)
                self.pending[pair] -= int(args[1])
                self.grants[pair] += int(args[1])
            return None
        ps = self.st(pid)
        if kind == "send":
            peer, spec = str(args[0]), CreditSpec(int(args[1]), int(args[2]))
            before = ps.credit_from.get(peer, spec.initial)
            self.states[pid] = cf.send(ps, peer, spec)
            if before == 1:
                exp.append(("block", peer, 0))
            self.data[(pid, peer)] += 1
            return self._spec((pid, peer), spec) or self._conserve((pid, peer))
        if kind == "ack":
            peer, spec = str(args[0]), CreditSpec(int(args[1]), int(args[2]))
            out = cf.ack(ps, peer, spec)
            self.states[pid] = out.state
            self.data[(peer, pid)] -= 1
            if self.data[(peer, pid)] < 0 and (peer, pid) not in self.reset:
                return ("OBS-NET-ACK", f"{pid} acks {peer} but no message from {peer} is in flight")
            for to, n in out.emitted:
                exp.append(("grant", str(to), n))
                self.pending[(str(to), pid)] += n
            return self._spec((peer, pid), spec) or self._conserve((peer, pid))
        if kind == "bump":
            peer, n = str(args[0]), int(args[1])
            self.grants[(pid, peer)] -= n
            if self.grants[(pid, peer)] < 0 and (pid, peer) not in self.reset:
                return (
                    "OBS-NET-BUMP",
                    f"{pid} handles a bump of {n} from {peer} that {peer} never sent",
                )
            before = ps.credit_from.get(peer, 0)
            out = cf.handle_bump(ps, peer, n)
            self.states[pid] = out.state
            if before <= 0 < before + n:
                exp.append(("unblock", peer, 0))
            self._flush(pid, out.emitted)
            return self._conserve((pid, peer))
        if kind == "peer_down":
            peer = str(args[0])
            out = cf.peer_down(ps, peer)
            self.states[pid] = out.state
            exp.append(("unblock", peer, 0))
            self._flush(pid, out.emitted)
            self.reset |= {(pid, peer), (peer, pid)}
            return None
        if kind == "block":
            if args[1] is True:
                return (
                    "OBS-CF-RUN",
                    f"{pid}: credit_flow blocks on {args[0]} where the model does not",
                )
            self.states[pid] = cf.block(ps, str(args[0]))
            return None
        if kind == "unblock":
            if args[1] is True:
                return (
                    "OBS-CF-RUN",
                    f"{pid}: credit_flow unblocks {args[0]} where the model does not",
                )
            out = cf.unblock(ps, str(args[0]))
            self.states[pid] = out.state
            self._flush(pid, out.emitted)
            return None
        if kind == "grant":
            return (
                "OBS-CF-RUN",
                f"{pid} sends bump_credit to {args[0]} where the model sends none",
            )
        if kind == "blocked?":
            if bool(args[0]) != cf.is_blocked(ps):
                return (
                    "OBS-CF-RUN",
                    f"{pid}: blocked() returned {args[0]}, the model says {cf.is_blocked(ps)}",
                )
            return None
        return ("OBS-EVENT", f"unknown event kind {kind}")

    def _flush(self, pid: str, emitted: tuple[tuple[Any, int], ...]) -> None:
        """CF-FLUSH: deferred grants go out newest first; each is an expected send."""
        for to, n in emitted:
            self.expect[pid].append(("grant", str(to), n))
            self.pending[(str(to), pid)] += n

    def _spec(self, pair: tuple[str, str], spec: CreditSpec) -> tuple[str, str] | None:
        old = self.spec.setdefault(pair, spec)
        if old != spec:
            return ("OBS-SPEC", f"{pair[0]} -> {pair[1]} used {tuple(old)} and now {tuple(spec)}")
        return None

    def _conserve(self, pair: tuple[str, str]) -> tuple[str, str] | None:
        """PROP-CONSERVATION on ``pair`` after the event."""
        if pair in self.reset or pair not in self.spec:
            return None
        s, r = pair
        i, m = self.spec[pair]
        cfrom = self.st(s).credit_from.get(r, i)
        cto = self.st(r).credit_to.get(s, m)
        deferred = sum(n for t, n in self.st(r).deferred if t == s)
        grants = self.grants[pair] + self.pending[pair]
        total = cfrom + self.data[pair] + (m - cto) + grants + deferred
        if total != i:
            return (
                "PROP-CONSERVATION",
                f"{s} -> {r}: credit_from {cfrom} + data "
                f"{self.data[pair]} + (M {m} - credit_to {cto}) + "
                f"grants {grants} + deferred {deferred} "
                f"= {total} != I {i}",
            )
        return None

    # -- the final cut --------------------------------------------------------------

    def final(self) -> tuple[str, str] | None:
        """OBS-VALIDATE-FINAL: the replayed state is the last snapshot's, per process and
        per pair (data and grants in flight)."""
        for pid, exp in self.expect.items():
            if exp:
                return ("OBS-CF-RUN", f"{pid}: the trace ends before {exp[0][0]} {exp[0][1]}")
        for pid, p in self.last.items():
            want = _state(p)
            have = self.states.get(pid)
            if have is None:
                if pid in self.first or want == cf.ProcessCredit():
                    continue
                have = cf.ProcessCredit()
            if (dict(have.credit_from), dict(have.credit_to), have.blocked, have.deferred) != (
                dict(want.credit_from),
                dict(want.credit_to),
                want.blocked,
                want.deferred,
            ):
                return (
                    "OBS-VALIDATE-FINAL",
                    f"{pid}: replayed {_view(have)} but the last snapshot has {_view(want)}",
                )
        for e in build_edges(self.last, self.info):
            pair = (e.sender, e.receiver)
            if not e.complete or pair in self.reset:
                continue
            if (self.data[pair], self.grants[pair]) != (e.data, e.grants):
                return (
                    "OBS-VALIDATE-FINAL",
                    f"{pair[0]} -> {pair[1]}: replay leaves "
                    f"{self.data[pair]} messages and "
                    f"{self.grants[pair]} credit in flight, the last "
                    f"snapshot {e.data} and {e.grants}",
                )
        return None

    def run(self) -> Result:
        t0 = time.perf_counter()
        div = None
        for i, e in enumerate(self.events):
            bad = self.step(e)
            if bad:
                div = Divergence(i, bad[0], bad[1], e)
                break
        else:
            bad = self.final()
            if bad:
                div = Divergence(-1, bad[0], bad[1], None)
        return Result(
            events=len(self.events),
            processes=len(self.states),
            divergence=div,
            seconds=time.perf_counter() - t0,
            stats=dict(self.stats),
        )


def validate(doc: dict[str, Any]) -> Result:
    """OBS-VALIDATE on a loaded trace document."""
    return Validator(doc).run()


def shrunk_itf(doc: dict[str, Any], div: Divergence) -> dict[str, Any]:
    """OBS-DIVERGENCE: the diverging prefix as an ITF trace, shrunk to the events of the
    processes involved (the diverging process and the peers its event names), one state
    per event with that process's replayed credit state."""
    events = window(doc)
    last = events[div.index] if div.index >= 0 else None
    involved = set()
    if last is not None:
        involved = {last[2]} | {str(a) for a in last[4:] if isinstance(a, str)}
    v = Validator(doc)
    states = []
    upto = div.index if div.index >= 0 else len(events) - 1
    for i, e in enumerate(events[: upto + 1]):
        if i < upto:
            v.step(e)
        if not involved or e[2] in involved:
            states.append(
                {
                    "event": {"index": i, "pid": e[2], "kind": e[3], "args": json.dumps(e[4:])},
                    "process": e[2],
                    "credit": _view(v.st(e[2])),
                }
            )
    meta = {
        "source": "creditflow observe validate",
        "rule": div.rule,
        "detail": div.detail,
        "description": "events of the involved processes up to the first divergence; "
        "the last state is the diverging event (state before it)",
    }
    return itf.trace_document(["event", "process", "credit"], states, meta)
