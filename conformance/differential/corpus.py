"""The regression corpus: scenarios from RabbitMQ's history and the verified edge cases
of ``credit_flow`` 3.10.8, as per-process traces (TRACE-PROCESS-DOC), plus the
explorer's stalled-queue counterexample as a network trace (TRACE-PROJECTION).

The shipped files live in ``conformance/corpus/credit_flow/`` (package data); their
expected answers come from the model and CI replays them against the real module.
Regenerate them with ``python -m creditflow.conformance.differential.corpus [FOLDER]``
(``tests/test_regressions.py`` checks that the shipped files are up to date).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from creditflow.conformance.differential.protocol import Op
from creditflow.conformance.differential.session import ProcessTrace, model_trace
from creditflow.conformance.differential.traces import SUFFIX, process_trace_document
from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.inputs.itf import write_document
from creditflow.conformance.traces.network import network_trace
from creditflow.model.credit.spec import CreditSpec


@dataclass(frozen=True)
class Regression:
    """One scenario: where it comes from and the ops that reproduce it."""

    name: str
    source: str  #: the bug or the verified fact (spec/sources.md ids: CF4, §1.3, ...)
    description: str
    spec: CreditSpec
    ops: tuple[Op, ...]

    def trace(self) -> ProcessTrace:
        return model_trace(self.spec, self.ops)


def _n(times: int, op: Op) -> list[Op]:
    return [op] * times


def regressions() -> list[Regression]:
    """Every per-process regression scenario."""
    s, a = "send", "ack"
    return [
        Regression(
            "cf4-channel-blocked-on-dead-queue",
            "spec/sources.md CF4: rabbitmq-server commit dee6c8a198 (2020), "
            "regression of f20fa273e9",
            "A channel that exhausted its credit to a queue is blocked and defers the grants "
            "it owes the reader; when the queue dies, peer_down must unblock the channel, "
            "flush the deferred grants (newest first) and forget the queue (CF-PEER-DOWN).",
            CreditSpec(2, 1),
            (
                *_n(2, Op(s, "channel", "queue")),
                *_n(2, Op(a, "channel", "reader")),
                Op("peer_down", "channel", "queue"),
                Op(a, "channel", "reader"),
                Op(s, "channel", "queue"),
            ),
        ),
        Regression(
            "cf3-syncer-blocked-on-two-mirrors",
            "spec/sources.md CF3: commit 60b6ee19fb (2013), the mirror syncer",
            "A process blocked on two peers stays blocked when one of them dies and flushes "
            "its deferred grants only when the other one bumps (CF-UNBLOCK, CF-FLUSH).",
            CreditSpec(1, 1),
            (
                Op(s, "syncer", "mirror1"),
                Op(s, "syncer", "mirror2"),
                Op(a, "syncer", "queue"),
                Op("peer_down", "syncer", "mirror1"),
                Op("bump", "syncer", "mirror2", amount=1),
            ),
        ),
        Regression(
            "cf7-quorum-queue-pseudo-peer",
            "spec/sources.md CF6/CF7: PR #1883, commit e06d3e7069 (3.12.0)",
            "A channel blocked twice by a quorum queue's name (a pseudo-peer) needs two "
            "unblocks; its grants stay deferred until the last one (CF-MULTISET, CF-FLUSH). "
            "In 3.10.8 nothing unblocks it when the queue is deleted: only an explicit unblock.",
            CreditSpec(2, 1),
            (
                Op("block", "channel", "qq:orders"),
                Op("block", "channel", "qq:orders"),
                Op(a, "channel", "reader"),
                Op("unblock", "channel", "qq:orders"),
                Op(a, "channel", "reader"),
                Op("unblock", "channel", "qq:orders"),
            ),
        ),
        Regression(
            "cf13-disabled-0-0",
            "spec/sources.md CF13: PRs #13055/#13067 (2025) re-allow {0,0}; verified on 3.10.8",
            "{0,0} disables credit flow: ten sends leave credit -10 without blocking, ten acks "
            "leave credit_to -10 without a grant (CF-DISABLED, CF-NEGATIVE).",
            CreditSpec(0, 0),
            (*_n(10, Op(s, "reader", "channel")), *_n(10, Op(a, "channel", "reader"))),
        ),
        Regression(
            "cf13-negative-initial-credit",
            "spec/sources.md CF13: PR #144 discussion (negative InitialCredit disables blocking)",
            "A negative InitialCredit never blocks; acks still grant every MoreCreditAfter-th "
            "time (CF-DISABLED).",
            CreditSpec(-1, 2),
            (
                *_n(3, Op(s, "reader", "channel")),
                *_n(4, Op(a, "channel", "reader")),
                Op("bump", "reader", "channel", amount=2),
            ),
        ),
        Regression(
            "cf5-mirror-double-debit",
            "spec/sources.md CF5: PR #6110 (3.10.10/3.11.2); 3.10.8 debits mirrors twice",
            "3.10.8 sends twice per message to a classic mirror and the mirror acks twice: "
            "debits equal acks, so the pair's credit is conserved (CF-SEND, CF-ACK, CF-BUMP).",
            CreditSpec(4, 2),
            (
                *_n(4, Op(s, "channel", "mirror")),
                *_n(4, Op(a, "mirror", "channel")),
                *_n(2, Op("bump", "channel", "mirror", amount=2)),
            ),
        ),
        Regression(
            "stalled-queue-2-1",
            "spec/sources.md §1.6 (verified), "
            "classic_queue_SUITE:classic_queue_flow_control_enabled",
            "Reader -> channel -> suspended queue with {2,1}: the queue ends with 4 messages, "
            "the channel at credit -2 holding 2 deferred grants, the reader blocked at 0.",
            CreditSpec(2, 1),
            (
                *_n(2, Op(s, "reader", "channel")),
                Op(a, "channel", "reader"),
                Op(s, "channel", "queue"),
                Op(a, "channel", "reader"),
                Op(s, "channel", "queue"),
                *_n(2, Op("bump", "reader", "channel", amount=1)),
                *_n(2, Op(s, "reader", "channel")),
                Op(a, "channel", "reader"),
                Op(s, "channel", "queue"),
                Op(a, "channel", "reader"),
                Op(s, "channel", "queue"),
                Op("state", "reader"),
                Op("state", "queue"),
            ),
        ),
        Regression(
            "bump-unblocks-only-on-crossing",
            "spec/sources.md §1.3 (verified): spec {3,2}",
            "Five sends give 2, 1, 0 (blocked), -1, -2; a bump of 2 gives 0 and does not "
            "unblock; another bump of 2 gives 2 and unblocks (CF-BUMP, CF-NEGATIVE).",
            CreditSpec(3, 2),
            (*_n(5, Op(s, "reader", "channel")), *_n(2, Op("bump", "reader", "channel", amount=2))),
        ),
        Regression(
            "bump-from-unknown-peer",
            "spec/sources.md §1.3, §1.7 (verified)",
            "A bump from a peer never sent to, or forgotten by peer_down, starts from 0, not "
            "from InitialCredit: the next send uses it (CF-BUMP-UNKNOWN).",
            CreditSpec(5, 3),
            (
                Op("bump", "sender", "stranger", amount=3),
                Op(s, "sender", "stranger"),
                Op(s, "sender", "peer"),
                Op("peer_down", "sender", "peer"),
                Op("bump", "sender", "peer", amount=3),
                Op(s, "sender", "peer"),
            ),
        ),
        Regression(
            "peer-down-keeps-deferred-grants",
            "spec/sources.md §1.3: peer_down does not purge credit_deferred",
            "Grants deferred for a peer that dies stay deferred and go out (into the void) "
            "at the next flush (CF-PEER-DOWN, CF-FLUSH).",
            CreditSpec(1, 1),
            (
                Op(s, "queue", "store"),
                Op(a, "queue", "channel"),
                Op("block", "queue", "qq:x"),
                Op("peer_down", "queue", "channel"),
                Op("unblock", "queue", "qq:x"),
            ),
        ),
        Regression(
            "flush-newest-first",
            "spec/sources.md §1.3 (verified): deferred grants go out in list order",
            "Grants deferred to several peers are sent newest first when the last blocker "
            "goes (CF-DEFER, CF-FLUSH).",
            CreditSpec(1, 1),
            (
                Op(s, "channel", "queue"),
                Op(a, "channel", "reader1"),
                Op(a, "channel", "reader2"),
                Op(a, "channel", "reader1"),
                Op("bump", "channel", "queue", amount=1),
            ),
        ),
        Regression(
            "cf2-msg-store-client-down",
            "spec/sources.md CF2: commits d84c12bce4 / 4918d0ecb0 (2014)",
            "The message store acks a queue with {4000,800}; when the queue dies, peer_down "
            "erases its counter and a new client starts over from MoreCreditAfter (CF-ACK, "
            "CF-PEER-DOWN).",
            CreditSpec(4000, 800),
            (
                *_n(3, Op(a, "msg_store", "queue")),
                Op("peer_down", "msg_store", "queue"),
                Op(a, "msg_store", "queue"),
            ),
        ),
    ]


NETWORK_REGRESSION = ("stalled-queue-network-2-1", "stalled-queue", CreditSpec(2, 1), 10)


def _network_document() -> tuple[str, dict]:
    name, preset, spec, publishes = NETWORK_REGRESSION
    graph = load_preset(preset).with_credit(spec).with_publishes(publishes)
    system, result = check_graph(graph, CheckOptions())
    finding = result.primary()
    assert finding is not None, "the stalled-queue preset must deadlock"
    doc = network_trace(
        system,
        finding,
        source=f"creditflow check {preset} --credit 2,1 --publishes 10",
        description="The explorer's shortest deadlock of reader -> channel -> suspended queue "
        "with {2,1} (spec/sources.md §1.6), replayed as per-process ops (TRACE-PROJECTION).",
    )
    return name, doc


def corpus_documents() -> Iterator[tuple[str, dict]]:
    """Every corpus file as (name, ITF document)."""
    for r in regressions():
        yield (
            r.name,
            process_trace_document(
                r.trace(), r.description, r.source, {"regression": r.name}, created=False
            ),
        )
    yield _network_document()


def corpus_dir() -> Path:
    """The shipped corpus (package data)."""
    return Path(str(resources.files("creditflow.conformance") / "corpus" / "credit_flow"))


def write_corpus(folder: Path) -> list[Path]:
    return [write_document(doc, folder / f"{name}{SUFFIX}") for name, doc in corpus_documents()]


if __name__ == "__main__":  # pragma: no cover
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else corpus_dir()
    for path in write_corpus(target):
        print(path)
