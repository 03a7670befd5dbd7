"""A syntactic certificate that processes are blocked forever (EXP-CERTIFICATE).

:func:`~creditflow.conformance.explore.deadlock.blocked_forever` needs the whole state
graph. The certificate looks at one state and names processes that no continuation
can unblock, so that the explorer can report a deadlock on the fly (EXP-ONLINE). It is
sound, not complete: every process it names is blocked forever; a process blocked
forever for another reason is found by the fixpoint.

A process ``p`` is certified when it is blocked on an edge ``e = p -> r`` (NET-BLOCKED)
whose credit cannot come back:

* **no grant** — ``M <= 0``: CF-ACK never grants on ``e``, so nothing can lift ``p``,
  whether or not it checks;
* **closed wait** — ``credit_from + M⁺·bumps <= 0`` and ``r`` is itself certified or
  stalled: ``r`` defers every grant while blocked (CF-DEFER) and flushes only when
  unblocked (CF-FLUSH), a stalled ``r`` takes and flushes nothing, so only the grants
  already in flight can reach ``p``;
* **no supply of grants** — ``p`` checks blocked (NET-CHECKS-BLOCKED, so it sends nothing
  more on ``e``) and ``credit_from + M⁺·(bumps + deferred + ⌊(M − credit_to + k·data)/M⌋)
  <= 0``: even every grant the messages in flight can still earn would not lift it;
* **bounded return** — ``r`` sends back to ``p`` on a blocking edge ``f = r -> p`` (``k_f``
  sends per message, ``M_f``) and ``credit_from + M⁺·(bumps + deferred + k·⌈Y⁺/k_f⌉) <= 0``
  with ``Y = credit_from_f + M_f⁺·bumps_f``: while ``p`` is blocked it grants nothing new
  on ``f``, every step of ``r`` forwards to ``p``, so ``r`` is unblocked for at most
  ``⌈Y⁺/k_f⌉`` more of its steps, and only those steps can grant on ``e``.

``M⁺ = max(M, 0)``; the certified set is the greatest set closed under these rules.
"""

from __future__ import annotations

from typing import NamedTuple

from creditflow.conformance.explore.encoding import (
    BUMPS,
    CREDIT_FROM,
    CREDIT_TO,
    DATA,
    DEFERRED,
    EDGE_FIELDS,
    CreditNetwork,
    State,
)


class CertificateEdge(NamedTuple):
    """One blocking edge ``p -> r`` as EXP-CERTIFICATE reads it: the state slots of its
    fields, ``M⁺ = max(M, 0)``, ``M``, the debits ``k`` per message, and its ends."""

    credit_from: int
    bumps: int
    deferred: int
    data: int
    credit_to: int
    weight: int
    more_after: int
    debits: int
    sender: int
    receiver: int
    sender_checks: bool
    #: the return edge ``r -> p`` if it can block (bounded return), else -1 slots
    back_credit_from: int = -1
    back_bumps: int = -1
    back_weight: int = 0
    back_debits: int = 1


class StuckCertificate:
    """EXP-CERTIFICATE for one network: :attr:`mask` of a state."""

    def __init__(self, network: CreditNetwork) -> None:
        net = network
        edges = []
        edge_of = {ends: e for e, ends in enumerate(net.edge_ends)}
        for e, (p, r) in enumerate(net.edge_ends):
            if not net.edge_blocks[e]:
                continue
            base = EDGE_FIELDS * e
            m = net.more_after[e]
            f = edge_of.get((r, p))
            back = (
                ()
                if f is None or not net.edge_blocks[f]
                else (
                    EDGE_FIELDS * f + CREDIT_FROM,
                    EDGE_FIELDS * f + BUMPS,
                    max(net.more_after[f], 0),
                    net.debits[f],
                )
            )
            edges.append(
                CertificateEdge(
                    base + CREDIT_FROM,
                    base + BUMPS,
                    base + DEFERRED,
                    base + DATA,
                    base + CREDIT_TO,
                    max(m, 0),
                    m,
                    net.debits[e],
                    p,
                    r,
                    net.checks[p],
                    *back,
                )
            )
        #: the blocking edges (the only ones a certificate can name a process on)
        self.edges = tuple(edges)
        #: the stalled processes, as a mask
        self.stalled = sum(1 << n for n in range(net.n_nodes) if net.stalled[n])
        # a compiled first test: some blocking edge with credit_from + M⁺·bumps <= 0
        test = (
            " or ".join(f"s[{e.credit_from}] + {e.weight} * s[{e.bumps}] <= 0" for e in edges)
            or "False"
        )
        #: Bit ``n`` set iff process ``n`` is certified blocked forever in ``s``: the
        #: compiled first test, then (rarely) :meth:`certified` — one call per state,
        #: as the explorer asks it of every new state (EXP-ONLINE)
        self.mask = eval(  # noqa: S307 - generated from ints only
            f"lambda s: certified(s) if {test} else 0", {"certified": self.certified}
        )

    def certified(self, s: State) -> int:
        """Bit ``n`` set iff process ``n`` is certified blocked forever in ``s``."""
        certain = 0
        waits: list[tuple[int, int]] = []
        for edge in self.edges:
            cf, bumps, deferred, data, credit_to, mp, m, k, p, r, checks, bcf, bb, bw, bk = edge
            credit = s[cf]
            if credit > 0:
                continue
            credit += mp * s[bumps]
            if credit > 0:
                continue
            if m <= 0:  # no grant: CF-ACK never grants with M <= 0, the credit never rises
                certain |= 1 << p
                continue
            if checks:
                earnable = (m - s[credit_to] + k * s[data]) // m if m >= 1 else 0
                if credit + mp * (s[deferred] + earnable) <= 0:
                    certain |= 1 << p
                    continue
            if bcf >= 0:
                steps = -(-max(s[bcf] + bw * s[bb], 0) // bk)  # r's steps while it can grant
                if credit + mp * (s[deferred] + k * steps) <= 0:
                    certain |= 1 << p
                    continue
            waits.append((p, r))
        if not waits:
            return certain
        # the greatest closed set: drop waiters whose receiver is not (yet) in the set
        waiting = certain
        for p, _ in waits:
            waiting |= 1 << p
        changed = True
        while changed:
            changed = False
            keep = certain
            for p, r in waits:
                if (waiting | self.stalled) >> r & 1:
                    keep |= 1 << p
            if keep != waiting:
                waiting, changed = keep, True
        return waiting
