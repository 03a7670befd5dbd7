"""Observe traces generated from the model (no broker): a reader -> channel -> queue
chain run under NET semantics with the CF model, written in the OBS-TRACE-FILE format,
so validation (OBS-VALIDATE) can be tested fast and on known-good data."""

from __future__ import annotations

import random
from collections import deque
from typing import Any

from creditflow.model.credit import flow as cf
from creditflow.model.credit.spec import CreditSpec

PIDS = {"reader": "<0.1.0>", "channel": "<0.2.0>", "queue": "<0.3.0>"}
ROLE_HINT = {
    "reader": "rabbit_reader",
    "channel": "rabbit_channel",
    "queue": "rabbit_amqqueue_process",
}


def generate(steps: int = 400, spec: tuple[int, int] = (4, 2), seed: int = 1) -> dict[str, Any]:
    """A trace document of ``steps`` random NET steps (reader reads, channel and queue
    take, everyone handles bumps), first cut at NET-INIT, last cut at the end."""
    rng = random.Random(seed)
    sp = CreditSpec(*spec)
    r, c, q = PIDS["reader"], PIDS["channel"], PIDS["queue"]
    st = {p: cf.ProcessCredit() for p in (r, c, q)}
    data = {(r, c): deque(), (c, q): deque()}
    grants: dict[tuple[str, str], deque] = {(r, c): deque(), (c, q): deque()}
    events: list[list[Any]] = []
    clock = [1000]

    def ev(pid: str, kind: str, *args: Any) -> None:
        clock[0] += 1
        events.append([clock[0], clock[0], pid, kind, *args])

    def send(s: str, to: str) -> None:
        before = st[s].credit_from.get(to, sp.initial)
        st[s] = cf.send(st[s], to, sp)
        ev(s, "send", to, *spec)
        if before == 1:
            ev(s, "block", to, True)
        data[(s, to)].append(1)

    def grant_out(s: str, emitted: tuple) -> None:
        for to, n in emitted:
            ev(s, "grant", to, n)
            grants[(to, s)].append(n)

    for _ in range(steps):
        moves = []
        if not cf.is_blocked(st[r]):
            moves.append("read")
        if data[(r, c)]:
            moves.append("channel")
        if data[(c, q)]:
            moves.append("queue")
        moves += [f"bump{i}" for i, pair in enumerate(((r, c), (c, q))) if grants[pair]]
        move = rng.choice(moves)
        if move == "read":
            ev(r, "blocked?", False)
            send(r, c)
        elif move in ("channel", "queue"):
            me, frm = (c, r) if move == "channel" else (q, c)
            data[(frm, me)].popleft()
            out = cf.ack(st[me], frm, sp)
            st[me] = out.state
            ev(me, "ack", frm, *spec)
            grant_out(me, out.emitted)
            if move == "channel":
                send(c, q)
        else:
            s, to = ((r, c), (c, q))[int(move[-1])]
            n = grants[(s, to)].popleft()
            before = st[s].credit_from.get(to, 0)
            out = cf.handle_bump(st[s], to, n)
            st[s] = out.state
            ev(s, "bump", to, n)
            if before <= 0 < before + n:
                ev(s, "unblock", to, True)
            grant_out(s, out.emitted)
    info = {
        "node": "model@localhost",
        "rabbit_version": "3.10.8",
        "credit_flow_default_credit": list(spec),
        "msg_store_credit_disc_bound": [40, 8],
    }

    def cut(states: dict[str, cf.ProcessCredit], t: int, final: bool) -> dict[str, Any]:
        procs = []
        for role, pid in PIDS.items():
            s = states[pid]
            flight = []
            if final:
                flight += [
                    ["data", a, "mailbox", len(d)] for (a, b), d in data.items() if b == pid and d
                ]
                flight += [
                    ["grant", b, "mailbox", sum(g)]
                    for (a, b), g in grants.items()
                    if a == pid and g
                ]
            procs.append(
                {
                    "pid": pid,
                    "role_hint": ROLE_HINT[role],
                    "name": role,
                    "credit_from": [[k, v] for k, v in s.credit_from.items()],
                    "credit_to": [[k, v] for k, v in s.credit_to.items()],
                    "blocked": list(s.blocked),
                    "deferred": [[to, n] for to, n in s.deferred],
                    "in_flight": flight,
                    "mailbox_len": 0,
                    "buffer_len": 0,
                }
            )
        return {"info": info, "t_suspended": t, "t_resume": t, "pause_ms": 0.0, "processes": procs}

    first = cut({p: cf.ProcessCredit() for p in (r, c, q)}, 1000, False)
    last = cut(st, clock[0] + 1, True)
    return {
        "format": "creditflow-observe-trace/1",
        "node": "model@localhost",
        "info": info,
        "first": first,
        "last": last,
        "events": events,
    }
