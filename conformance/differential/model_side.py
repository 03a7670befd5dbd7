"""The model side of the adapter protocol: every named process as a CF
:class:`~creditflow.model.credit.flow.ProcessCredit`, and each protocol op applied to
the acting one (AD-OPS mirrored on ``model/credit/flow.py``)."""

from __future__ import annotations

from typing import cast

from creditflow.conformance.differential.protocol import (
    DEFAULT_SPEC,
    Grant,
    Observation,
    Op,
    view_of,
)
from creditflow.model.credit import flow as cf
from creditflow.model.credit.spec import CreditSpec


class ProcessModel:
    """Named processes that start empty (AD-FRESH) and change only by their own ops."""

    def __init__(self, spec: CreditSpec = DEFAULT_SPEC) -> None:
        self.spec = spec
        self.procs: dict[str, cf.ProcessCredit] = {}

    def reset(self, spec: CreditSpec) -> None:
        """AD-RESET: forget every process; ``spec`` is the default for send and ack."""
        self.spec = spec
        self.procs = {}

    def apply(self, op: Op) -> tuple[cf.ProcessCredit, tuple[Grant, ...]]:
        """Run ``op`` inside ``op.proc``: AD-SEND (CF-SEND), AD-ACK (CF-ACK), AD-BUMP
        (CF-BUMP), AD-BLOCK (CF-BLOCK), AD-UNBLOCK (CF-UNBLOCK), AD-PEER-DOWN
        (CF-PEER-DOWN), AD-STATE. Returns the process's new state and the grants sent."""
        ps = self.procs.get(op.proc, cf.INITIAL)
        kind = op.kind
        peer = cast(str, op.peer)  # every kind but "state" names a peer (AD-OPS)
        emitted: tuple[Grant, ...] = ()
        if kind == "send":
            ps = cf.send(ps, peer, op.spec or self.spec)
        elif kind == "ack":
            ps, emitted = cf.ack(ps, peer, op.spec or self.spec)
        elif kind == "bump":
            ps, emitted = cf.handle_bump(ps, peer, cast(int, op.amount))  # checked: AD-BUMP
        elif kind == "block":
            ps = cf.block(ps, peer)
        elif kind == "unblock":
            ps, emitted = cf.unblock(ps, peer)
        elif kind == "peer_down":
            ps, emitted = cf.peer_down(ps, peer)
        elif kind != "state":
            raise ValueError(f"unknown op {kind!r}")
        self.procs[op.proc] = ps
        return ps, emitted

    def observe(self, op: Op) -> Observation:
        """:meth:`apply`, as the protocol's response (AD-RESPONSE)."""
        ps, emitted = self.apply(op)
        return Observation(view_of(ps), emitted)
