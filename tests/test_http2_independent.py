"""An independent check of the HTTP/2 model (spec/http2.md): a second implementation of
the rules, written here from the spec for uploads on one connection (H2-SEND,
H2-NO-EXCESS, H2-DEBIT, H2-EMPTY-END, H2-RECEIVE, H2-RESET-COUNTS, H2-DISCARD-CREDIT,
H2-CONSUME, H2-POL-CREDIT, H2-CREDIT, H2-WINDOW-UPDATE, H2-RESET), against the model on
random small topologies: reachable state counts, the no-stall verdict (PROP-H2-NO-STALL)
and the length of the shortest stall."""

from __future__ import annotations

import random
from collections import deque

import pytest

from creditflow.conformance.explore.explorer import NO_DEADLOCK, explore
from creditflow.conformance.families.http2.checking import Http2System
from creditflow.model.http2 import system as h2system
from creditflow.model.http2.topology import Credit, EndConfig, StreamConfig, Topology

CONN = 6  # a small connection window, so that it binds


def successors(t, s):
    """Every successor of ``s`` = (send_conn, recv_conn, conn_owed, streams, c2s, s2c);
    a stream is (snd_state, snd_window, left, rcv_state, rcv_window, buffered, owed)."""
    send_conn, recv_conn, conn_owed, streams, c2s, s2c = s
    srv, cli = t.server, t.client
    out = []

    def owe(streams, conn_owed, i, n, event, discarded=False):
        sc, cc = srv.stream_credit, srv.connection_credit
        st = list(streams[i])
        if not discarded and sc.trigger == event and st[3] == "open":
            st[6] += n
        if discarded or cc.trigger == event:
            conn_owed += n
        return streams[:i] + (tuple(st),) + streams[i + 1 :], conn_owed

    def flush(streams, recv_conn, conn_owed, i, s2c):
        if i is not None:
            st = list(streams[i])
            if st[6] and st[6] >= srv.stream_credit.threshold:
                s2c += (("W", i, st[6]),)
                st[4] += st[6]
                st[6] = 0
                streams = streams[:i] + (tuple(st),) + streams[i + 1 :]
        if conn_owed and conn_owed >= srv.connection_credit.threshold:
            s2c += (("W", -1, conn_owed),)
            recv_conn += conn_owed
            conn_owed = 0
        return streams, recv_conn, conn_owed, s2c

    for i, st in enumerate(streams):
        ss, sw, left, rs, rw, buf, owed = st
        # send_data
        if ss == "open":
            if left == 0:
                frame = (0, True)
            else:
                n = min(cli.frame_octets, sw, send_conn, left)
                frame = (n, False) if n > 0 else None
            if frame is not None:
                n, end = frame
                new = ("closed" if end else ss, sw - n, left - n, rs, rw, buf, owed)
                out.append(
                    (
                        ("send", i),
                        (
                            send_conn - n,
                            recv_conn,
                            conn_owed,
                            streams[:i] + (new,) + streams[i + 1 :],
                            c2s + (("D", i, n, end),),
                            s2c,
                        ),
                    )
                )
        # consume
        if t.streams[i].reads == "all" and rs in ("open", "closed") and buf:
            st2 = streams[:i] + ((ss, sw, left, rs, rw, 0, owed),) + streams[i + 1 :]
            st2, co = owe(st2, conn_owed, i, buf, "consume")
            st2, rc, co, w = flush(st2, recv_conn, co, i, s2c)
            out.append((("consume", i), (send_conn, rc, co, st2, c2s, w)))
        # reset by the receiver
        if t.streams[i].reset == "receiver" and rs == "open":
            st2 = streams[:i] + ((ss, sw, left, "reset", rw, 0, 0),) + streams[i + 1 :]
            co = conn_owed + (buf if srv.credit_discarded else 0)
            st2, rc, co, w = flush(st2, recv_conn, co, None, s2c + (("R", i),))
            out.append((("reset", i), (send_conn, rc, co, st2, c2s, w)))
    if c2s:
        _, i, n, end = c2s[0]
        ss, sw, left, rs, rw, buf, owed = streams[i]
        rc = recv_conn - n
        if rs != "open":
            co = conn_owed + (n if srv.credit_discarded else 0)
            st2, rc, co, w = flush(streams, rc, co, None, s2c)
        else:
            new = (ss, sw, left, "closed" if end else "open", rw - n, buf + n, owed)
            st2 = streams[:i] + (new,) + streams[i + 1 :]
            st2, co = owe(st2, conn_owed, i, n, "receipt")
            st2, rc, co, w = flush(st2, rc, co, i, s2c)
        out.append((("recv_c2s",), (send_conn, rc, co, st2, c2s[1:], w)))
    if s2c:
        head = s2c[0]
        st2, sc = streams, send_conn
        if head[0] == "W" and head[1] == -1:
            sc += head[2]
        elif head[0] == "W":
            ss, sw, *rest = streams[head[1]]
            if ss != "reset":
                st2 = streams[: head[1]] + ((ss, sw + head[2], *rest),) + streams[head[1] + 1 :]
        else:
            ss, *rest = streams[head[1]]
            st2 = streams[: head[1]] + (("reset", *rest),) + streams[head[1] + 1 :]
        out.append((("recv_s2c",), (sc, recv_conn, conn_owed, st2, c2s, s2c[1:])))
    return out


def check(t):
    """Reachable states; the shortest depth of a state where a reading stream's sender
    is blocked and stays blocked in every continuation (None: no stall)."""
    init = (
        CONN,
        CONN,
        0,
        tuple(
            (
                "open",
                t.server.initial_window_size,
                s.octets,
                "open",
                t.server.initial_window_size,
                0,
                0,
            )
            for s in t.streams
        ),
        (),
        (),
    )
    depth = {init: 0}
    edges = {}
    q = deque([init])
    while q:
        s = q.popleft()
        edges[s] = [n for _, n in successors(t, s)]
        for n in edges[s]:
            if n not in depth:
                depth[n] = depth[s] + 1
                q.append(n)

    def blocked(s, i):
        ss, sw, left, *_ = s[3][i]
        return ss == "open" and left > 0 and min(sw, s[0]) <= 0

    reverse = {s: [] for s in depth}
    for s, ns in edges.items():
        for n in ns:
            reverse[n].append(s)
    stall = None
    for i, st in enumerate(t.streams):
        if st.reads != "all":
            continue
        free = {s for s in depth if not blocked(s, i)}
        q2 = deque(free)
        while q2:
            s = q2.popleft()
            for p in reverse[s]:
                if p not in free:
                    free.add(p)
                    q2.append(p)
        for s in depth:
            if s not in free:
                stall = depth[s] if stall is None else min(stall, depth[s])
    return len(depth), stall


def random_topology(rng: random.Random, k: int) -> Topology:
    def credit() -> Credit:
        return Credit(rng.choice(["receipt", "consume"]), rng.randint(1, 3))

    server = EndConfig(
        initial_window_size=rng.randint(2, 5),
        connection_window=CONN,
        stream_credit=credit(),
        connection_credit=credit(),
        credit_discarded=rng.random() < 0.6,
    )
    client = EndConfig(connection_window=CONN, frame_octets=rng.randint(1, 3))
    streams = tuple(
        StreamConfig(
            2 * j + 1,
            "upload",
            rng.randint(0, 6),
            rng.choice(["all", "all", "none"]),
            rng.choice([None, None, "receiver"]),
        )
        for j in range(rng.randint(1, 2))
    )
    return Topology(f"random-{k}", client, server, streams)


@pytest.mark.parametrize("seed", range(16))
def test_model_agrees_with_the_second_implementation(seed, monkeypatch):
    monkeypatch.setattr(h2system, "CONNECTION_INITIAL_WINDOW", CONN)
    t = random_topology(random.Random(seed), seed)
    result = explore(Http2System(t))
    assert result.complete
    n, stall = check(t)
    assert result.n_states == n, t
    finding = result.findings.get(NO_DEADLOCK)
    assert (finding is not None) == (stall is not None), t
    if finding is not None and finding.kind == "blocked-forever":
        assert finding.length == stall, t
    assert set(result.findings) <= {NO_DEADLOCK}, t
