"""The ``rabbit-fifo`` adapter (AD-AMQ-FIFO): RabbitMQ's own ``rabbit_fifo`` (the
installed 3.10.8's beams) driven by ``apply/3``, held to the model's quorum-queue rules
(AMQ-QQ-*). Needs Erlang and the installed beams (``make test`` installs them), not a
running broker. One VM for the module; every test starts with ``reset``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from creditflow.adapters.amqp.rabbit_fifo import NAME, RabbitFifoAdapter, locate_rabbit_ebin
from creditflow.adapters.registry import AMQP_BUILTIN, UnknownAdapter, amqp_adapter_factory
from creditflow.conformance.differential.adapter import AdapterFailure
from tests.adapter_setup import started_amqp_adapter


def test_erlang_and_the_rabbit_beams_are_installed() -> None:
    """AD-AMQ-FIFO: ``make test`` installs Erlang and RabbitMQ's beams; a machine without
    them fails here, it does not skip this module."""
    assert shutil.which("erl") is not None, "erl is missing (scripts/setup.sh installs it)"
    assert locate_rabbit_ebin().is_dir()


@pytest.fixture(scope="module")
def fifo() -> Iterator[RabbitFifoAdapter]:
    yield from started_amqp_adapter(NAME, RabbitFifoAdapter)


def consumer(reply: Any, name: str = "c") -> dict[str, Any]:
    return reply.state["consumers"][name]


def delivered(reply: Any, name: str = "c") -> list[int]:
    return [i for e in reply.of("delivery") if e["consumer"] == name for i in e["msg_ids"]]


def test_hello_names_release_and_policy(fifo: RabbitFifoAdapter) -> None:
    # AD-AMQ-FIFO-HELLO, AD-AMQ-FIFO-POLICY
    assert NAME in AMQP_BUILTIN
    assert fifo.info["name"] == "rabbit-fifo"
    assert fifo.info["version"] == "3.10.8"
    assert fifo.info["implementation"]["machine_version"] == 2
    policy = fifo.info["policy"]
    assert policy["consumer_modes"] == ["credited", "simple_prefetch"]
    assert policy["go_on_limit_removed"] is False
    assert policy["credit"] == {"formula": "x-unwrapped"}


def test_a_credited_consumer_gets_exactly_its_credit(fifo: RabbitFifoAdapter) -> None:
    # AMQ-QQ-CREDITED, AMQ-QQ-CHECKOUT; AD-AMQ-FIFO-REPLY, AD-AMQ-FIFO-EFFECTS, AD-AMQ-FIFO-STATE
    fifo.reset()
    for _ in range(10):
        fifo.apply("enqueue")
    r = fifo.apply("checkout", consumer="c", mode="credited", credit=0)
    assert delivered(r) == [] and r.state["ready"] == 10
    r = fifo.apply("credit", consumer="c", credit=3, delivery_count=0)
    assert delivered(r) == [0, 1, 2]
    assert r.reply == {"credit_reply": {"available": 7}}
    assert consumer(r)["credit"] == 0 and consumer(r)["delivery_count"] == 3
    # settling gives a credited consumer no credit back (increase_credit/2)
    r = fifo.apply("settle", consumer="c", count=3)
    assert delivered(r) == [] and consumer(r)["credit"] == 0 and r.state["ready"] == 7
    # a grant is absolute: delivery_count(rcv) + credit - delivery_count
    r = fifo.apply("credit", consumer="c", credit=2, delivery_count=3)
    assert delivered(r) == [3, 4] and consumer(r)["delivery_count"] == 5


def test_drain_ends_with_credit_zero_and_the_count_advanced(fifo: RabbitFifoAdapter) -> None:
    # AMQ-QQ-CREDITED: drain
    fifo.reset()
    fifo.apply("checkout", consumer="c", mode="credited", credit=0)
    fifo.apply("enqueue")
    fifo.apply("enqueue")
    r = fifo.apply("credit", consumer="c", credit=5, delivery_count=0, drain=True)
    assert delivered(r) == [0, 1]
    assert consumer(r)["credit"] == 0
    assert consumer(r)["delivery_count"] == 5  # 2 delivered + 3 drained
    assert r.reply == {
        "credit_reply": {"available": 0},
        "drained": {"consumer": "c", "credit": 3},
    }


def test_after_a_drain_the_3_10_client_count_loses_the_drained_credit(
    fifo: RabbitFifoAdapter,
) -> None:
    # Finding (AD-AMQ-FIFO, 3.10.8): rabbit_fifo_client:credit/4 sends last_msg_id + 1
    # as the receiver's delivery_count, but a drain advanced the queue's count by the
    # credit drained. The next grant of n gives n - drained: 3 of 3 lost here.
    fifo.reset()
    fifo.apply("checkout", consumer="c", mode="credited", credit=0)
    fifo.apply("credit", consumer="c", credit=3, delivery_count=0, drain=True)  # empty: 3 drained
    for _ in range(5):
        fifo.apply("enqueue")
    client_count = 0  # last_msg_id + 1, nothing was delivered
    r = fifo.apply("credit", consumer="c", credit=3, delivery_count=client_count)
    assert delivered(r) == []
    assert consumer(r)["credit"] == 0 and r.state["ready"] == 5
    # the AMQP delivery-count (3 after the drain) gets them
    r = fifo.apply("credit", consumer="c", credit=3, delivery_count=3)
    assert delivered(r) == [0, 1, 2]


def test_delivery_count_is_not_serial(fifo: RabbitFifoAdapter) -> None:
    # Finding (3.10.8): the consumer's delivery_count is a plain integer, not
    # RFC 1982 serial (AMQ-SERIAL): drains take it past 2^32 - 1, and a receiver's
    # wrapped count then computes no credit (max(0, …)).
    fifo.reset()
    fifo.apply("checkout", consumer="c", mode="credited", credit=0)
    top = (1 << 32) - 1
    fifo.apply("credit", consumer="c", credit=top, delivery_count=0, drain=True)
    r = fifo.apply("credit", consumer="c", credit=5, delivery_count=top, drain=True)
    assert consumer(r)["delivery_count"] == top + 5  # not (top + 5) mod 2^32 = 4
    fifo.apply("enqueue")
    r = fifo.apply("credit", consumer="c", credit=5, delivery_count=4)  # the wire's count
    assert delivered(r) == [] and consumer(r)["credit"] == 0


def test_simple_prefetch_never_exceeds_prefetch(fifo: RabbitFifoAdapter) -> None:
    # AMQ-QQ-PREFETCH
    fifo.reset()
    for _ in range(6):
        fifo.apply("enqueue")
    r = fifo.apply("checkout", consumer="c", mode="simple_prefetch", prefetch=2)
    assert delivered(r) == [0, 1] and consumer(r)["checked_out"] == 2
    r = fifo.apply("settle", consumer="c", count=1)
    assert delivered(r) == [2] and consumer(r)["checked_out"] == 2
    r = fifo.apply("return", consumer="c", count=1)
    assert consumer(r)["checked_out"] == 2 and consumer(r)["credit"] == 0


def test_a_return_beyond_the_delivery_limit_is_dropped(fifo: RabbitFifoAdapter) -> None:
    # AMQ-QQ-SETTLE: delivery_limit 1 — the first return requeues (count 1), the second
    # (count 2 > 1) drops
    fifo.reset(delivery_limit=1)
    fifo.apply("enqueue")
    r = fifo.apply("checkout", consumer="c", mode="simple_prefetch", prefetch=1)
    assert delivered(r) == [0]
    r = fifo.apply("return", consumer="c", count=1)
    assert delivered(r) == [1] and r.of("delivery")[0]["delivery_counts"] == [1]
    r = fifo.apply("return", consumer="c", count=1)
    assert delivered(r) == [] and r.state["total"] == 0 and r.state["ready"] == 0


def test_a_dropped_return_credits_a_prefetch_consumer_twice(fifo: RabbitFifoAdapter) -> None:
    # Finding (3.10.8): return/5 adds one credit per returned id after return_one/6 has
    # already completed the dropped one (complete/5 adds one too): a simple_prefetch
    # consumer of prefetch 1 then holds 2 messages.
    fifo.reset(delivery_limit=0)
    for _ in range(3):
        fifo.apply("enqueue")
    r = fifo.apply("checkout", consumer="c", mode="simple_prefetch", prefetch=1)
    assert consumer(r)["checked_out"] == 1
    r = fifo.apply("return", consumer="c", count=1)  # count 1 > limit 0: dropped
    assert r.state["total"] == 2
    assert consumer(r)["checked_out"] == 2  # over prefetch 1
    assert consumer(r)["checked_out"] > 1


def test_reject_publish_blocks_above_the_limit_and_goes_below_the_watermark(
    fifo: RabbitFifoAdapter,
) -> None:
    # AMQ-QQ-OVERFLOW: over = ready > L; go once ready <= trunc(0.8 L) = trunc(5.6) = 5
    fifo.reset(max_length=7, overflow="reject_publish")
    statuses: list[tuple[int, str]] = []
    for _ in range(8):
        r = fifo.apply("enqueue", enqueuer="p")
        statuses += [(r.state["ready"], e["status"]) for e in r.of("queue_status")]
    assert statuses == [(8, "reject_publish")]
    assert r.state["enqueuers"]["p"]["blocked"] is True
    # an enqueuer registering while over the limit is told at once (register_enqueuer)
    assert fifo.apply("register_enqueuer", enqueuer="q").reply == "reject_publish"
    fifo.apply("checkout", consumer="c", mode="credited", credit=0)
    seen: list[tuple[int, str, str]] = []
    for dc in range(4):
        r = fifo.apply("credit", consumer="c", credit=1, delivery_count=dc)
        seen += [(r.state["ready"], e["enqueuer"], e["status"]) for e in r.of("queue_status")]
    # 7 and 6 are not below the watermark; 5 is: every enqueuer is told go, once
    assert sorted(seen) == [(5, "p", "go"), (5, "q", "go")]
    assert r.state["enqueuers"]["p"]["blocked"] is False


def test_removing_the_limit_never_lets_publishers_go(fifo: RabbitFifoAdapter) -> None:
    # Finding (3.10.8, the stall shape; RabbitMQ main sends go, AMQ-QQ-OVERFLOW's
    # go_on_limit_removed): evaluate_limit/5 returns at once without a limit, so a
    # blocked enqueuer gets no go when a policy removes the limit, nor ever after.
    fifo.reset(max_length=2, overflow="reject_publish")
    for _ in range(3):
        r = fifo.apply("enqueue", enqueuer="p")
    assert r.state["enqueuers"]["p"]["blocked"] is True
    r = fifo.apply("update_config", settings={"max_length": None})
    assert r.state["config"]["max_length"] is None
    assert r.of("queue_status") == []
    fifo.apply("checkout", consumer="c", mode="simple_prefetch", prefetch=10)
    r = fifo.apply("settle", consumer="c", count=3)
    assert r.state["ready"] == 0 and r.of("queue_status") == []
    assert r.state["enqueuers"]["p"]["blocked"] is True
    # raising the limit instead does say go (a not-below → below crossing)
    fifo.reset(max_length=2, overflow="reject_publish")
    for _ in range(3):
        fifo.apply("enqueue", enqueuer="p")
    r = fifo.apply("update_config", settings={"max_length": 100})
    assert [e["status"] for e in r.of("queue_status")] == ["go"]


def test_enqueue_without_pid_and_out_of_sequence(fifo: RabbitFifoAdapter) -> None:
    # AD-AMQ-FIFO-OPS: enqueue with and without an enqueuer
    fifo.reset()
    r = fifo.apply("enqueue")
    assert r.reply == "ok" and r.state["enqueuers"] == {} and r.state["ready"] == 1
    r = fifo.apply("enqueue", enqueuer="p", seq=1)
    assert r.state["enqueuers"]["p"]["next_seqno"] == 2
    r = fifo.apply("enqueue", enqueuer="p", seq=5)
    assert r.reply == "not_enqueued" and r.state["ready"] == 2
    r = fifo.apply("enqueue", enqueuer="p", seq=1)  # a duplicate: ok, not enqueued again
    assert r.reply == "ok" and r.state["ready"] == 2
    assert r.state["enqueuers"]["p"]["next_seqno"] == 2


def test_a_cancelled_consumer_keeps_its_messages_and_gets_no_more(
    fifo: RabbitFifoAdapter,
) -> None:
    # AD-AMQ-FIFO-OPS: cancel
    fifo.reset()
    for _ in range(3):
        fifo.apply("enqueue")
    fifo.apply("checkout", consumer="c", mode="simple_prefetch", prefetch=2)
    r = fifo.apply("cancel", consumer="c")
    assert consumer(r)["status"] == "cancelled" and consumer(r)["checked_out"] == 2
    r = fifo.apply("settle", consumer="c", count=1)
    assert delivered(r) == [] and consumer(r)["credit"] == 0 and r.state["ready"] == 1


def test_discard_drops_and_gives_prefetch_credit_back(fifo: RabbitFifoAdapter) -> None:
    # AMQ-QQ-SETTLE: discard completes (dead-letters; no handler here: dropped)
    fifo.reset()
    for _ in range(3):
        fifo.apply("enqueue")
    fifo.apply("checkout", consumer="c", mode="simple_prefetch", prefetch=1)
    r = fifo.apply("discard", consumer="c", count=1)
    assert delivered(r) == [1] and r.state["total"] == 2 and consumer(r)["checked_out"] == 1


def test_a_bad_ebin_is_one_line(tmp_path: Any) -> None:
    # AD-AMQ-FIFO: --rabbitmq-ebin without rabbit_fifo.beam there or beside it; a
    # release is chosen by its ebin, not by NAME@VERSION
    with pytest.raises(AdapterFailure, match="no rabbit_fifo.beam"):
        amqp_adapter_factory(NAME, rabbitmq_ebin=tmp_path)()
    with pytest.raises(UnknownAdapter):
        amqp_adapter_factory(NAME + "@3.10.8")


def test_the_rabbit_common_ebin_of_the_rabbitmq_adapter_also_works() -> None:
    # AD-AMQ-FIFO: the folder --adapter rabbitmq takes finds rabbit's ebin beside it
    common = next(locate_rabbit_ebin().parent.parent.glob("rabbit_common-*/ebin"))
    assert locate_rabbit_ebin(common) == locate_rabbit_ebin()


def test_unknown_settings_are_refused(fifo: RabbitFifoAdapter) -> None:
    # AD-AMQ-FIFO-SETTINGS, AD-AMQ-REFUSE
    assert fifo.try_step({"op": "reset", "settings": {"max_lenght": 1}}) is None
    fifo.reset()
    assert fifo.try_step({"op": "settle", "consumer": "c", "count": 1}) is None
    assert fifo.try_step({"op": "credit", "consumer": "c", "credit": 1}) is None


OPS = st.one_of(
    st.tuples(st.just("enqueue"), st.integers(1, 3)),
    st.tuples(st.just("settle"), st.integers(1, 3)),
    st.tuples(st.just("return"), st.integers(1, 3)),
    st.tuples(st.just("credit"), st.integers(0, 4)),
    st.tuples(st.just("drain"), st.integers(0, 4)),
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    prefetch=st.integers(1, 3),
    ops=st.lists(OPS, max_size=25),
)
def test_random_runs_keep_checked_out_within_credit_and_prefetch(
    fifo: RabbitFifoAdapter, prefetch: int, ops: list[tuple[str, int]]
) -> None:
    # PROP-AMQ-NONNEG on rabbit_fifo's own states: a simple_prefetch consumer never holds
    # more than its prefetch; a credited consumer's delivery_count never passes the
    # receiver's limit delivery_count(rcv) + credit (no delivery-limit: that is pinned
    # separately above)
    fifo.reset()
    fifo.apply("checkout", consumer="p", mode="simple_prefetch", prefetch=prefetch)
    r = fifo.apply("checkout", consumer="c", mode="credited", credit=0)
    limit = 0  # delivery_count(rcv) + link credit of the last grant
    for op, n in ops:
        held = {name: c["checked_out"] for name, c in r.state["consumers"].items()}
        if op == "enqueue":
            for _ in range(n):
                r = fifo.apply("enqueue")
        elif op in ("settle", "return"):
            name = "p" if n % 2 else "c"
            if held.get(name):
                r = fifo.apply(op, consumer=name, count=min(n, held[name]))
        else:
            dc = consumer(r)["delivery_count"]
            r = fifo.apply("credit", consumer="c", credit=n, delivery_count=dc, drain=op == "drain")
            limit = dc + n
        assert consumer(r, "p")["checked_out"] <= prefetch
        assert consumer(r, "c")["delivery_count"] <= limit
        assert consumer(r, "p")["credit"] + consumer(r, "p")["checked_out"] == prefetch


def test_random_runs_with_a_delivery_limit_find_the_prefetch_overrun(
    fifo: RabbitFifoAdapter,
) -> None:
    # The same monitor with a delivery limit drawn: Hypothesis finds the 3.10.8 overrun
    # (a dropped return credited twice) on rabbit_fifo's own states, shortest first
    def overruns(case: tuple[int, int, list[tuple[str, int]]]) -> bool:
        limit, prefetch, ops = case
        fifo.reset(delivery_limit=limit)
        r = fifo.apply("checkout", consumer="p", mode="simple_prefetch", prefetch=prefetch)
        for op, n in ops:
            held = consumer(r, "p")["checked_out"]
            if op == "enqueue":
                r = fifo.apply("enqueue")
            elif held:
                r = fifo.apply(op, consumer="p", count=min(n, held))
            if consumer(r, "p")["checked_out"] > prefetch:
                return True
        return False

    ops = st.lists(
        st.tuples(st.sampled_from(["enqueue", "settle", "return"]), st.integers(1, 2)),
        max_size=8,
    )
    limit, prefetch, found = find(
        st.tuples(st.integers(0, 2), st.integers(1, 2), ops),
        overruns,
        settings=settings(max_examples=300, deadline=None, database=None),
    )
    # shortest: prefetch 1, limit 0, three messages, one return (dropped: 2 credits)
    assert (limit, prefetch, [op for op, _ in found]) == (0, 1, ["enqueue"] * 3 + ["return"])
