"""A live credit graph from one consistent-cut snapshot (spec/observe.md).

Plain data in (the JSON the node-side ``cf_observe`` module writes, OBS-SNAPSHOT), plain
data out: processes, edges with their conservation check (OBS-CONSERVATION), the
per-process checks (OBS-DEFERRED-BLOCKED, OBS-BLOCKED-CREDIT), the chains of blockers
(OBS-CHAINS), a networkx graph in creditflow's graph format (OBS-GRAPH) and a picture.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

ROLES = {
    "rabbit_reader": "reader",
    "rabbit_channel": "channel",
    "rabbit_amqqueue_process": "queue",
    "rabbit_prequeue": "queue",
    "rabbit_msg_store": "msg_store",
    "rabbit_mirror_queue_slave": "mirror",
}


class SnapshotError(ValueError):
    """A snapshot document that is not what ``cf_observe`` writes; says where."""


@dataclass(frozen=True, slots=True)
class Process:
    """One credit-flow process at the cut (OBS-PROCESS)."""

    pid: str
    role: str
    name: str | None
    credit_from: dict[str, int]
    credit_to: dict[str, int]
    blocked: list[str]
    deferred: list[tuple[str, int]]
    suspended: bool
    mailbox_len: int
    buffer_len: int
    #: (kind, peer) -> count of debits (data) or credit amount (grant), mailbox + buffer
    in_flight: dict[tuple[str, str], int] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.role} {self.name}" if self.name else f"{self.role} {self.pid}"

    def to_json(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "role": self.role,
            "name": self.name,
            "credit_from": self.credit_from,
            "credit_to": self.credit_to,
            "blocked": bool(self.blocked),
            "blocked_by": self.blocked,
            "deferred": [list(d) for d in self.deferred],
            "suspended": self.suspended,
            "mailbox_len": self.mailbox_len,
            "buffer_len": self.buffer_len,
        }


@dataclass(frozen=True, slots=True)
class Edge:
    """A sender -> receiver pair at the cut with its conservation terms (OBS-CONSERVATION)."""

    sender: str
    receiver: str
    spec: tuple[int, int]
    credit_from: int
    credit_to: int
    data: int
    grants: int
    deferred: int
    complete: bool  # both ends observed

    @property
    def total(self) -> int:
        i, m = self.spec
        return self.credit_from + self.data + (m - self.credit_to) + self.grants + self.deferred

    @property
    def holds(self) -> bool | None:
        return self.total == self.spec[0] if self.complete else None

    def to_json(self) -> dict[str, Any]:
        return {
            "sender": self.sender,
            "receiver": self.receiver,
            "credit": list(self.spec),
            "credit_from": self.credit_from,
            "credit_to": self.credit_to,
            "data_in_flight": self.data,
            "grants_in_flight": self.grants,
            "deferred": self.deferred,
            "conservation_holds": self.holds,
            "conservation_total": self.total,
        }


@dataclass(frozen=True, slots=True)
class Analysis:
    """Everything ``observe snapshot`` reports."""

    info: dict[str, Any]
    pause_ms: float
    processes: dict[str, Process]
    edges: list[Edge]
    violations: list[dict[str, Any]]
    chains: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.info.get("node"),
            "rabbit_version": self.info.get("rabbit_version"),
            "credit_flow_default_credit": self.info.get("credit_flow_default_credit"),
            "msg_store_credit_disc_bound": self.info.get("msg_store_credit_disc_bound"),
            "pause_ms": self.pause_ms,
            "processes": [p.to_json() for p in self.processes.values()],
            "edges": [e.to_json() for e in self.edges],
            "blocked_chains": self.chains,
            "violations": self.violations,
        }


def _pairs(raw: Any, what: str) -> dict[str, int]:
    try:
        return {str(k): int(v) for k, v in raw}
    except (TypeError, ValueError) as exc:
        raise SnapshotError(f"{what}: expected [[peer, int], …]") from exc


def parse_processes(doc: dict[str, Any]) -> dict[str, Process]:
    """The processes of a snapshot document, roles named (OBS-PROCESS)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("processes"), list):
        raise SnapshotError("not an observe snapshot: no 'processes' list")
    procs: dict[str, Process] = {}
    for i, raw in enumerate(doc["processes"]):
        try:
            pid = str(raw["pid"])
            role = ROLES.get(str(raw.get("role_hint")), "other")
            flight: dict[tuple[str, str], int] = defaultdict(int)
            for kind, peer, _where, n in raw.get("in_flight", []):
                flight[(str(kind), str(peer))] += int(n)
            procs[pid] = Process(
                pid=pid,
                role=role,
                name=raw.get("name"),
                credit_from=_pairs(raw.get("credit_from", []), f"process {i} credit_from"),
                credit_to=_pairs(raw.get("credit_to", []), f"process {i} credit_to"),
                blocked=[str(b) for b in raw.get("blocked", [])],
                deferred=[(str(t), int(n)) for t, n in raw.get("deferred", [])],
                suspended=bool(raw.get("pre_suspended")),
                mailbox_len=int(raw.get("mailbox_len", 0)),
                buffer_len=int(raw.get("buffer_len", 0)),
                in_flight=dict(flight),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SnapshotError(f"process {i}: {exc}") from exc
    _resolve_readers(procs)
    return procs


def _resolve_readers(procs: dict[str, Process]) -> None:
    """OBS-DIFF-CHANNEL: a channel's ``{method, …, flow}`` casts do not name their reader;
    the channel has one reader, the peer it acks (credit_to) or whose credit_from names it."""
    for r in procs.values():
        n = r.in_flight.pop(("data", "reader?"), 0)
        if not n:
            continue
        cands = {s for s in r.credit_to if s in procs and procs[s].role == "reader"}
        cands |= {s.pid for s in procs.values() if s.role == "reader" and r.pid in s.credit_from}
        who = cands.pop() if len(cands) == 1 else "unknown-reader"
        r.in_flight[("data", who)] = r.in_flight.get(("data", who), 0) + n


def edge_spec(receiver: Process | None, info: dict[str, Any]) -> tuple[int, int]:
    """OBS-SPEC (OBS-DIFF-STORE: only queue -> msg_store pairs carry the store's bound,
    and only for persistent bodies kept in the store): msg_store pairs use
    ``msg_store_credit_disc_bound``, every other pair
    ``credit_flow_default_credit`` — both read from the node."""
    default = tuple(info.get("credit_flow_default_credit") or (400, 200))
    store = tuple(info.get("msg_store_credit_disc_bound") or (4000, 800))
    spec = store if receiver is not None and receiver.role == "msg_store" else default
    return int(spec[0]), int(spec[1])


def build_edges(procs: dict[str, Process], info: dict[str, Any]) -> list[Edge]:
    """Every observed sender -> receiver pair with its conservation terms (OBS-EDGES)."""
    pairs: set[tuple[str, str]] = set()
    for p in procs.values():
        pairs |= {(p.pid, r) for r in p.credit_from}
        pairs |= {(s, p.pid) for s in p.credit_to}
        pairs |= {(s, p.pid) for (k, s) in p.in_flight if k == "data"}
        pairs |= {(p.pid, r) for (k, r) in p.in_flight if k == "grant"}
        pairs |= {(s, p.pid) for s, _ in p.deferred}
    edges = []
    for s, r in sorted(pairs):
        sp, rp = procs.get(s), procs.get(r)
        i, m = edge_spec(rp, info)
        edges.append(
            Edge(
                sender=s,
                receiver=r,
                spec=(i, m),
                credit_from=sp.credit_from.get(r, i) if sp else i,
                credit_to=rp.credit_to.get(s, m) if rp else m,
                data=rp.in_flight.get(("data", s), 0) if rp else 0,
                grants=sp.in_flight.get(("grant", r), 0) if sp else 0,
                deferred=sum(n for t, n in rp.deferred if t == s) if rp else 0,
                complete=sp is not None and rp is not None,
            )
        )
    return edges


def check(procs: dict[str, Process], edges: list[Edge]) -> list[dict[str, Any]]:
    """OBS-CONSERVATION, OBS-DEFERRED-BLOCKED and OBS-BLOCKED-CREDIT on one cut."""
    out: list[dict[str, Any]] = []
    for e in edges:
        if e.holds is False:
            out.append(
                {
                    "rule": "OBS-CONSERVATION",
                    "edge": [e.sender, e.receiver],
                    "detail": f"credit_from {e.credit_from} + data {e.data} + "
                    f"(M {e.spec[1]} - credit_to {e.credit_to}) + grants "
                    f"{e.grants} + deferred {e.deferred} = {e.total} != "
                    f"I {e.spec[0]}",
                }
            )
    for p in procs.values():
        if p.deferred and not p.blocked:
            out.append(
                {
                    "rule": "OBS-DEFERRED-BLOCKED",
                    "process": p.pid,
                    "detail": f"{len(p.deferred)} deferred grants but not blocked",
                }
            )
        pid_blockers = [b for b in p.blocked if not b.startswith(("name:", "term:"))]
        low = {r for r, c in p.credit_from.items() if c <= 0}
        if len(set(pid_blockers)) != len(pid_blockers) or set(pid_blockers) != low:
            out.append(
                {
                    "rule": "OBS-BLOCKED-CREDIT",
                    "process": p.pid,
                    "detail": f"blocked by {sorted(pid_blockers)} but credit_from <= 0 "
                    f"toward {sorted(low)}",
                }
            )
    return out


def chains(procs: dict[str, Process], edges: list[Edge]) -> list[dict[str, Any]]:
    """OBS-CHAINS: for each blocked publisher (a blocked process nobody waits on through
    credit, in practice the reader), who blocks whom down to the root cause."""
    by_pair = {(e.sender, e.receiver): e for e in edges}
    waited_on = {b for p in procs.values() for b in p.blocked}
    out = []
    for p in procs.values():
        if not p.blocked or (p.pid in waited_on and p.role != "reader"):
            continue
        steps: list[dict[str, Any]] = [{"pid": p.pid, "label": p.label, "role": p.role}]
        seen = {p.pid}
        cur = p
        cause = ""
        while True:
            blockers = [b for b in cur.blocked if b in procs]
            if not blockers:
                ext = [b for b in cur.blocked if b not in procs]
                cause = f"blocked by {', '.join(ext)} (not a credit-flow process here)"
                break
            nxt = procs[blockers[0]]
            e = by_pair.get((cur.pid, nxt.pid))
            steps.append(
                {
                    "pid": nxt.pid,
                    "label": nxt.label,
                    "role": nxt.role,
                    "waiting": e.data if e else None,
                    "credit_from": e.credit_from if e else None,
                }
            )
            if nxt.pid in seen:
                cause = f"cycle back to {nxt.label}"
                break
            seen.add(nxt.pid)
            if nxt.blocked:
                cur = nxt
                continue
            waiting = e.data if e else 0
            if nxt.suspended:
                cause = f"{nxt.label} is suspended with {waiting} messages from {cur.label} waiting"
            else:
                cause = (
                    f"{nxt.label} is not blocked; it has {waiting} messages from "
                    f"{cur.label} to take before it grants more "
                    f"({nxt.mailbox_len + nxt.buffer_len} messages queued in all)"
                )
            break
        text = " ← ".join(s["label"] for s in steps)
        out.append(
            {"publisher": p.pid, "chain": steps, "root_cause": cause, "text": f"{text}: {cause}"}
        )
    return out


def analyse(doc: dict[str, Any]) -> Analysis:
    """Parse and check one snapshot document (OBS-SNAPSHOT … OBS-CHAINS)."""
    info = doc.get("info") or {}
    procs = parse_processes(doc)
    edges = build_edges(procs, info)
    return Analysis(
        info=info,
        pause_ms=float(doc.get("pause_ms", 0.0)),
        processes=procs,
        edges=edges,
        violations=check(procs, edges),
        chains=chains(procs, edges),
    )


def _node_id(p: Process, used: set[str]) -> str:
    base = p.label
    name = base if base not in used else f"{base} {p.pid}"
    used.add(name)
    return name


def to_graph(a: Analysis) -> nx.DiGraph:
    """OBS-GRAPH: the live credit graph in creditflow's graph format (NET-GRAPH): readers
    are sources, suspended processes stalled, the live values under ``x-`` attributes;
    pairs with an end outside the snapshot are left out."""
    g = nx.DiGraph(name=f"live {a.info.get('node', '')}".strip())
    ids: dict[str, str] = {}
    used: set[str] = set()
    done = [e for e in a.edges if e.complete]
    involved = {e.sender for e in done} | {e.receiver for e in done}
    for p in a.processes.values():
        if p.pid not in involved:
            continue
        nid = ids[p.pid] = _node_id(p, used)
        attrs: dict[str, Any] = {"role": p.role, "x-pid": p.pid, "x-blocked": bool(p.blocked)}
        if p.role == "reader":
            attrs["source"] = True
        if p.suspended:
            attrs["stalled"] = True
        g.add_node(nid, **attrs)
    for e in a.edges:
        if not e.complete or e.sender not in ids or e.receiver not in ids:
            continue
        g.add_edge(
            ids[e.sender],
            ids[e.receiver],
            credit=list(e.spec),
            **{
                "x-credit_from": e.credit_from,
                "x-credit_to": e.credit_to,
                "x-data": e.data,
                "x-grants": e.grants,
                "x-deferred": e.deferred,
                "x-conservation": e.holds,
            },
        )
    return g


def _q(text: str) -> str:
    """A DOT string: backslashes and quotes escaped, newlines as DOT's ``\\n``."""
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{body}"'


def to_dot(a: Analysis) -> str:
    """OBS-PICTURE: who blocks whom. Blocked processes red, chain edges thick, edge
    labels ``credit_from/in flight``; suspended processes dashed."""
    on_chain = set()
    for c in a.chains:
        pids = [s["pid"] for s in c["chain"]]
        on_chain |= set(zip(pids, pids[1:], strict=False))
    lines = ["digraph observe {", "  rankdir=LR; node [shape=box, fontname=Helvetica];"]
    shown = {e.sender for e in a.edges} | {e.receiver for e in a.edges}
    for p in a.processes.values():
        if p.pid not in shown:
            continue
        style = ["color=red, fontcolor=red"] if p.blocked else []
        if p.suspended:
            style.append("style=dashed")
        queued = p.mailbox_len + p.buffer_len
        label = (
            f"{p.label}\n{p.pid}"
            + (" (suspended)" if p.suspended else "")
            + (f"\n{queued} queued" if queued else "")
        )
        lines.append(f"  {_q(p.pid)} [label={_q(label)}{', ' if style else ''}{', '.join(style)}];")
    for e in a.edges:
        attrs = [f"label={_q(f'credit {e.credit_from}, in flight {e.data}')}"]
        if e.credit_from <= 0:
            attrs.append("color=red")
        if (e.sender, e.receiver) in on_chain:
            attrs.append("penwidth=3")
        if e.holds is False:
            attrs.append("style=dotted")
        lines.append(f"  {_q(e.sender)} -> {_q(e.receiver)} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
