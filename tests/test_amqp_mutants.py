"""The AMQP reference adapter and its mutants (AD-AMQ-REFERENCE): the wire monitor
(AD-AMQ-MONITOR) finds nothing on the reference in an exhaustive search of short op
sequences, and catches every mutant with the shortest op sequence that shows it."""

from __future__ import annotations

import copy
import sys
from collections import deque
from typing import Any

import pytest

from creditflow.adapters.amqp.reference import MUTANTS, Server
from creditflow.adapters.registry import UnknownAdapter, amqp_adapter_factory
from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.families.amqp.protocol import AmqpAdapter, WireMonitor

#: Small sizes that reach every mutant's fault in a few ops: a session window of 4 frames
#: renewed at 2, messages of 2 frames, delivery-counts that wrap after 2 deliveries.
SETTINGS = {"window": 4, "threshold": 2, "message_frames": 2, "initial_delivery_count": 2**32 - 2}
#: The ops the search draws (the receiving application grants 1 or 3, settles its oldest).
ALPHABET: tuple[dict[str, Any], ...] = (
    {"op": "flow", "link": "L", "credit": 1},
    {"op": "flow", "link": "L", "credit": 3},
    {"op": "transfer", "link": "L"},
    {"op": "settle", "link": "L", "count": 1},
    {"op": "drain", "link": "L", "credit": 1},
    {"op": "drained", "link": "L"},
)


def _apply(server: Server, monitor: WireMonitor, req: dict[str, Any]) -> list[str] | None:
    """One op on the in-process server, its frames and state through the monitor; the
    rules broken, or ``None`` when the op is refused (not possible now)."""
    resp = server.handle(req)
    if resp["ok"] is not True:
        return None
    if req["op"] in ("flow", "drain"):
        monitor.granted(req["link"], req["credit"])
    found = monitor.feed(resp["frames"]) + monitor.at_rest(req["op"], resp["state"])
    return [v.rule for v in found]


def shortest_violation(mutant: str | None, depth: int) -> tuple[list[str], list[str]] | None:
    """Breadth-first over op sequences of length ≤ ``depth`` after reset, begin and
    attach: the first (shortest) sequence after which the monitor reports something, and
    the rules; ``None`` when none does."""
    server, monitor = Server(mutant), WireMonitor(manual=True)
    for req in (
        {"op": "reset", "settings": SETTINGS},
        {"op": "begin", "session": "S"},
        {"op": "attach", "session": "S", "link": "L"},
    ):
        assert _apply(server, monitor, req) == []
    frontier: deque[tuple[Server, WireMonitor, list[str]]] = deque([(server, monitor, [])])
    while frontier:
        server, monitor, trace = frontier.popleft()
        if len(trace) == depth:
            continue
        for req in ALPHABET:
            s, m = copy.deepcopy(server), copy.deepcopy(monitor)
            rules = _apply(s, m, req)
            if rules is None:
                continue
            step = trace + [f"{req['op']}({req.get('credit', req.get('count', ''))})"]
            if rules:
                return step, rules
            frontier.append((s, m, step))
    return None


def test_reference_breaks_no_rule_up_to_depth_5() -> None:
    """AD-AMQ-REFERENCE, AD-AMQ-MONITOR: no op sequence of length ≤ 5 from this alphabet
    makes the monitor report anything on the reference (so each mutant's report is the
    mutant's)."""
    assert shortest_violation(None, 5) is None


#: Each mutant, the rule that catches it and the shortest op sequence (derived by hand:
#: e.g. double-grant shows at the first grant; delta-credit needs credit left over when
#: the second grant is made; no-serial-wrap needs the drain echo to pass 2^32: 2^32 − 2
#: plus the 2 credits drained).
EXPECTED = {
    "ignores-credit": (["transfer()"], "no-credit"),
    "double-grant": (["flow(1)"], "credit-ledger"),
    "delta-credit": (["flow(1)", "flow(1)"], "credit-ledger"),
    "missed-drain-echo": (["drain(1)", "drained()"], "drain-unanswered"),
    "no-serial-wrap": (["flow(1)", "drain(1)", "drained()"], "bad-serial"),
    "per-frame-count": (["flow(1)", "transfer()", "flow(1)"], "agree"),
    # 2 messages of 2 frames fill the window of 4; the third waits with credit 4 > 2 held
    "window-never-renewed": (
        ["flow(3)", "flow(3)", "transfer()", "transfer()", "transfer()"],
        "stall",
    ),
}


def test_every_mutant_has_an_expectation() -> None:
    assert set(EXPECTED) == set(MUTANTS)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_is_caught_with_its_shortest_trace(mutant: str) -> None:
    """AD-AMQ-REFERENCE: the monitor catches every mutant of issue 29, and the search
    returns the shortest sequence that shows it."""
    trace, rule = EXPECTED[mutant]
    found = shortest_violation(mutant, len(trace))
    assert found is not None, f"{mutant} not caught within {len(trace)} ops"
    assert found[0] == trace
    assert rule in found[1]


def test_reference_and_a_mutant_run_as_protocol_subprocesses() -> None:
    """AD-AMQ-REFERENCE through the registry: ``amqp-reference`` and
    ``amqp-reference:mutant:NAME`` speak the protocol (AD-AMQ-TRANSPORT)."""
    ref = amqp_adapter_factory("amqp-reference")()
    mut = amqp_adapter_factory("amqp-reference:mutant:ignores-credit")()
    try:
        assert ref.info["policy"]["window"] == {"policy": "fixed", "window": 4, "threshold": 2}
        assert "ignores-credit" in mut.info["name"]
        for adapter, expected in ((ref, []), (mut, ["no-credit", "over-delivery"])):
            monitor = WireMonitor(manual=True)
            rules: list[str] = []
            for req in (
                {"op": "reset", "settings": SETTINGS},
                {"op": "begin", "session": "S"},
                {"op": "attach", "session": "S", "link": "L"},
                {"op": "transfer", "link": "L"},
            ):
                reply = adapter.step(req)
                rules += [v.rule for v in monitor.feed(reply.frames)]
            assert rules == expected
    finally:
        ref.close()
        mut.close()


def test_unknown_amqp_names_are_usage_errors() -> None:
    """AD-AMQ-VERSION: an unknown library or mutant is refused at once (UnknownAdapter)."""
    for name in ("qpid-jms@1.0", "amqp-reference:mutant:nope", "amqp-reference@1"):
        with pytest.raises(UnknownAdapter):
            amqp_adapter_factory(name)


HELLO_WITHOUT_POLICY = """
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "hello":
        out = {"ok": True, "name": "x", "version": "1", "families": ["amqp"], "settings": {}}
    else:
        out = {"ok": False, "error": "no"}
    out["id"] = req["id"]
    print(json.dumps(out), flush=True)
"""


def test_a_hello_without_policy_is_a_protocol_error() -> None:
    """AD-AMQ-HELLO: ``version``, ``settings`` and ``policy`` are required."""
    with pytest.raises(AdapterFailure, match='hello lacks "policy"'):
        AmqpAdapter([sys.executable, "-c", HELLO_WITHOUT_POLICY], name="fake")
