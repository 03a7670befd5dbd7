"""An independent explicit-state check of the AMQP link shape (issue 28, point 6).

A second implementation of the rules of spec/amqp.md — written here from the spec, on
plain tuples, with its own serial arithmetic and its own search — is run on random
small link topologies next to the model (``creditflow.model.amqp.system``). Both must
reach the same set of observable states (both ends' delivery-count and credit, the
sender's supply and remote incoming window, the receiver's incoming window, the number
of unsettled deliveries and of frames on each wire) and the same set of stalled states
(PROP-AMQ-NO-STALL). Covered: AMQ-LINK-CREDIT-SND, AMQ-LINK-TRANSFER, AMQ-LINK-FLOW,
AMQ-SESSION-SEND, AMQ-SESSION-RECV, AMQ-SESSION-FLOW, AMQ-POL-CREDIT-WINDOW (count
credit, absolute or delta, renewed on arrival), AMQ-POL-CREDIT-MANUAL,
AMQ-POL-SENDER-CREDIT, AMQ-POL-WINDOW-FIXED, AMQ-POL-WINDOW-NEVER, AMQ-POL-WINDOW-RING,
AMQ-APP. Not covered here: drains, renewal on settle, the capacity window."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from creditflow.conformance.inputs.amqp_topologies import topology_from_dict
from creditflow.model.amqp import properties, system
from creditflow.model.amqp.topology import Topology

M = 1 << 32


def wrap(x: int) -> int:
    return x & (M - 1)


def dist(a: int, b: int) -> int:
    """a − b as a signed 32-bit serial distance."""
    return ((a - b + (1 << 31)) % M) - (1 << 31)


def independent_reachable(cfg: dict) -> tuple[set, set]:
    """The reachable observable states and the stalled ones, by a search of its own."""
    W, T, enc = cfg["window"], cfg["threshold"], cfg["encoding"]
    pol, ignore = cfg["session"], cfg["ignore"]
    grants, keep, i0 = cfg["grants"], cfg["holds"], cfg["initial"]
    manual = W is None

    def rwin_initial() -> int:
        return pol[1]  # fixed and never: the window; ring: the slots

    # sender: dc, credit, supply, next_out, remote_in ; receiver: dc, credit, next_in, iw,
    # unsettled ((id, held), ...), arrivals, grants used ; wires of tuples
    first_back = () if manual else (("F", i0, rwin_initial(), (i0, W)),)
    start = (
        (i0, 0, cfg["publishes"], i0, rwin_initial()),
        (),
        (i0, 0 if manual else W, i0, rwin_initial(), (), 0, 0),
        first_back,
    )

    def ring_window(nxt: int, uns: tuple) -> int:
        return pol[1] if not uns else pol[1] - dist(nxt, uns[0][0])

    def moves(st_):
        snd, fwd, rcv, back = st_
        sdc, scr, sup, snoi, sriw = snd
        rdc, rcr, rnii, riw, uns, arr, gu = rcv
        out = []
        if sup > 0 and scr > 0 and sriw > 0:
            out.append(
                (
                    (wrap(sdc + 1), scr - 1, sup - 1, wrap(snoi + 1), sriw - 1),
                    fwd + (("T",),),
                    rcv,
                    back,
                )
            )
        if fwd:
            rdc2, rcr2, rnii_old = wrap(rdc + 1), rcr - 1, rnii
            uns2 = uns + ((rnii_old, arr < keep),)
            rnii2, riw2 = wrap(rnii + 1), riw - 1
            sflow = False
            if pol[0] == "fixed" and riw2 <= pol[2]:
                riw2, sflow = pol[1], True
            elif pol[0] == "ring":
                riw2 = ring_window(rnii2, uns2)
            link = None
            if not manual and rcr2 <= T:
                link = (rdc2, W if enc == "absolute" else W - max(0, rcr2))
                rcr2 = W
            frames = (("F", rnii2, max(0, riw2), link),) if (sflow or link) else ()
            out.append((snd, fwd[1:], (rdc2, rcr2, rnii2, riw2, uns2, arr + 1, gu), back + frames))
        if back:
            _, nii, iw, link = back[0]
            sriw2 = max(0, dist(wrap(nii + iw), snoi))
            scr2 = scr
            if link is not None:
                scr2 = link[1] if ignore else max(0, dist(wrap(link[0] + link[1]), sdc))
            out.append(((sdc, scr2, sup, snoi, sriw2), fwd, rcv, back[1:]))
        free = [i for i, (_, held) in enumerate(uns) if not held]
        if free:
            i = free[0]
            uns2 = uns[:i] + uns[i + 1 :]
            riw2, frames = riw, ()
            if pol[0] == "ring":
                riw2 = ring_window(rnii, uns2)
                if riw2 > riw:
                    frames = (("F", rnii, max(0, riw2), None),)
            out.append((snd, fwd, (rdc, rcr, rnii, riw2, uns2, arr, gu), back + frames))
        if gu < len(grants):
            g = grants[gu]
            out.append(
                (
                    snd,
                    fwd,
                    (rdc, g, rnii, riw, uns, arr, gu + 1),
                    back + (("F", rnii, max(0, riw), (rdc, g)),),
                )
            )
        return out

    def observe(st_):
        snd, fwd, rcv, back = st_
        return (
            snd[0],
            snd[1],
            snd[2],
            snd[4],
            rcv[0],
            rcv[1],
            rcv[3],
            len(rcv[4]),
            len(fwd),
            len(back),
        )

    seen = {start}
    todo = deque([start])
    stalled = set()
    while todo:
        s = todo.popleft()
        nxt = moves(s)
        if not nxt and (s[0][2] > 0 or s[1]):
            stalled.add(observe(s))
        for n in nxt:
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return {observe(s) for s in seen}, stalled


def model_reachable(t: Topology) -> tuple[set, set]:
    start = system.initial_state(t)
    seen = {start}
    todo = deque([start])
    stalled = set()

    def observe(s: system.LinkState) -> tuple:
        snd, rcv = s.sender, s.receiver
        return (
            snd.link.delivery_count,
            snd.link.credit,
            snd.supply,
            snd.session.remote_incoming_window,
            rcv.link.delivery_count,
            rcv.link.credit,
            rcv.session.incoming_window,
            len(rcv.unsettled),
            len(s.fwd),
            len(s.back),
        )

    while todo:
        s = todo.popleft()
        assert isinstance(s, system.LinkState)
        succ = system.successors(t, s)
        if properties.stalled(t, s):
            stalled.add(observe(s))
        for _, n in succ:
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return {observe(s) for s in seen if isinstance(s, system.LinkState)}, stalled


def as_document(cfg: dict) -> dict:
    kind = cfg["session"][0]
    if kind == "fixed":
        window = {"policy": "fixed", "window": cfg["session"][1], "threshold": cfg["session"][2]}
    elif kind == "never":
        window = {"policy": "never", "window": cfg["session"][1]}
    else:
        window = {"policy": "ring", "slots": cfg["session"][1]}
    credit = (
        None
        if cfg["window"] is None
        else {
            "policy": "window",
            "window": cfg["window"],
            "threshold": cfg["threshold"],
            "encoding": cfg["encoding"],
        }
    )
    sender = {"id": "s", "kind": "endpoint", "role": "sender", "publishes": cfg["publishes"]}
    if cfg["ignore"]:
        sender["sender_credit"] = {"formula": "ignore_in_flight"}
    return {
        "graph": {"family": "amqp", "name": "random", "initial": cfg["initial"]},
        "nodes": [
            sender,
            {
                "id": "ss",
                "kind": "session",
                "window": {"policy": "fixed", "window": 8, "threshold": 4},
            },
            {"id": "rs", "kind": "session", "window": window},
            {
                "id": "r",
                "kind": "endpoint",
                "role": "receiver",
                "holds": cfg["holds"],
                "credit": credit,
                "grants": list(cfg["grants"]),
            },
        ],
        "edges": [
            {"source": "s", "target": "ss"},
            {"source": "ss", "target": "rs"},
            {"source": "rs", "target": "r"},
        ],
    }


@st.composite
def configs(draw) -> dict:
    w = draw(st.sampled_from([None, 1, 2, 3]))
    session = draw(
        st.one_of(
            st.tuples(st.just("fixed"), st.integers(1, 3)).map(lambda p: ("fixed", p[1], p[1] - 1)),
            st.tuples(st.just("never"), st.integers(1, 4)),
            st.tuples(st.just("ring"), st.integers(1, 3)),
        )
    )
    return {
        "window": w,
        "threshold": 0 if w is None else draw(st.integers(0, w - 1)),
        "encoding": draw(st.sampled_from(["absolute", "delta"])),
        "session": session,
        "ignore": draw(st.booleans()),
        "grants": tuple(draw(st.lists(st.integers(0, 3), max_size=2 if w is None else 1))),
        "holds": draw(st.integers(0, 2)),
        "publishes": draw(st.integers(1, 4)),
        "initial": draw(st.sampled_from([0, M - 1, M - 2, M - 3])),
    }


@settings(max_examples=60, deadline=None)
@given(configs())
def test_model_and_independent_search_reach_the_same_states(cfg: dict) -> None:
    """AMQ-TS: the model and the independent implementation reach the same observable
    states and the same stalled ones (PROP-AMQ-NO-STALL), across the serial wrap."""
    t = topology_from_dict(as_document(cfg))
    assert model_reachable(t) == independent_reachable(cfg)
