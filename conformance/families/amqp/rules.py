"""The rules an AMQP link-end finding breaks (FIND-RULE, spec/conformance-findings.md):
one table from every ``WireMonitor`` rule and every compared field of
AD-AMQ-CONFORM-COMPARE to a rule id of ours (spec/amqp.md), its class (FIND-CLASS) and
where the obligation is written; and the finding a failed run stands for
(FIND-SIGNATURE: the rule, the op and the fields where the run first parts from the
model).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from creditflow.conformance.differential.findings import Finding, Rule, finding_id, signature_text

#: FIND-RULE: the monitor's rules (AD-AMQ-MONITOR), each a MUST of AMQP 1.0 but the
#: stall (the library's own contract: credit granted is credit the sender can use) and a
#: refused op (AD-AMQ-RMQ-ENDED: the implementation refused what its API offers).
MONITOR_RULES: Mapping[str, Rule] = {
    "bad-serial": Rule("AMQ-SERIAL", "must", "AMQP 1.0 §2.8.11 (sequence-no, RFC 1982)"),
    "negative": Rule("PROP-AMQ-NONNEG", "must", "AMQP 1.0 §2.6.7, §2.5.6"),
    "no-window": Rule("AMQ-SESSION-SEND", "must", "AMQP 1.0 §2.5.6"),
    "no-credit": Rule("AMQ-LINK-TRANSFER", "must", "AMQP 1.0 §2.6.7"),
    "over-delivery": Rule("AMQ-LINK-TRANSFER", "must", "AMQP 1.0 §2.6.7"),
    "drain-credit": Rule("AMQ-LINK-DRAIN", "must", "AMQP 1.0 §2.6.7"),
    "drain-unanswered": Rule("AMQ-LINK-DRAIN", "must", "AMQP 1.0 §2.6.7"),
    "agree": Rule("PROP-AMQ-AGREE", "must", "AMQP 1.0 §2.6.7"),
    "credit-ledger": Rule("AMQ-LINK-CREDIT-SND", "must", "AMQP 1.0 §2.6.7"),
    "stall": Rule(
        "PROP-AMQ-NO-STALL",
        "contract",
        "the library's credit API: credit granted is credit the sender can use",
    ),
    "refused": Rule(
        "AD-AMQ-RMQ-ENDED", "contract", "the implementation refused an op its API offers"
    ),
}

#: FIND-RULE: a compared field that differs (AD-AMQ-CONFORM-COMPARE), by the end and
#: the field; a link field at a drain op or its answer is the drain rule's.
FIELD_RULES: Mapping[str, Rule] = {
    "sender.delivery_count": Rule("AMQ-LINK-CREDIT-SND", "must", "AMQP 1.0 §2.6.7"),
    "sender.credit": Rule("AMQ-LINK-CREDIT-SND", "must", "AMQP 1.0 §2.6.7"),
    "receiver.delivery_count": Rule("AMQ-LINK-STATE", "must", "AMQP 1.0 §2.6.7"),
    "receiver.credit": Rule("AMQ-LINK-FLOW", "must", "AMQP 1.0 §2.7.4, §2.6.7"),
    "client.next_outgoing_id": Rule("AMQ-SESSION-SEND", "must", "AMQP 1.0 §2.5.6"),
    "client.remote_incoming_window": Rule("AMQ-SESSION-FLOW", "must", "AMQP 1.0 §2.5.6"),
    "server.next_incoming_id": Rule("AMQ-SESSION-RECV", "must", "AMQP 1.0 §2.5.6"),
    "server.incoming_window": Rule(
        "AMQ-POL", "contract", "the window policy the adapter declares (AD-AMQ-POLICY)"
    ),
}
DRAIN_RULE = Rule("AMQ-LINK-DRAIN", "must", "AMQP 1.0 §2.6.7")
#: FIND-RULE: the ops at which a link field's difference is the drain rule's
DRAIN_OPS = ("drain", "drained")

#: FIND-CLASS: strongest first, for the rule a run with several broken is filed under
_ORDER = {"must": 0, "contract": 1, "should": 2, "policy": 3}


def rules_table() -> list[tuple[str, Rule]]:
    """FIND-RULE: every (monitor rule or field, rule) pair, for docs and tests."""
    return [*MONITOR_RULES.items(), *FIELD_RULES.items(), ("drain ops", DRAIN_RULE)]


def field_rule(op: str, name: str) -> Rule:
    """FIND-RULE: the rule a compared field's difference at ``op`` breaks."""
    if op in DRAIN_OPS and name.split(".", 1)[0] in ("sender", "receiver"):
        return DRAIN_RULE
    return FIELD_RULES.get(name, Rule("AMQ-LINK-STATE", "must", "AMQP 1.0 §2.6.7"))


def run_rule(
    op: str, fields: Iterable[str], monitor: Iterable[str]
) -> tuple[Rule, tuple[str, ...]]:
    """FIND-RULE, FIND-SIGNATURE: the rule a failed run is filed under (the strongest of
    those it breaks; a monitor rule before a field, as the frame shows it first) and the
    parts of its signature (``rule:NAME`` for monitor rules, then the fields)."""
    broken = [(MONITOR_RULES.get(m, MONITOR_RULES["agree"]), f"rule:{m}") for m in monitor]
    broken += [(field_rule(op, f), f) for f in fields]
    assert broken, "a failed run breaks some rule"
    first = min(broken, key=lambda b: _ORDER[b[0].klass])[0]
    return first, tuple(part for _, part in broken)


def amqp_finding(
    run: object,
    found_by: str | None,
    trace: str | None = None,
) -> Finding:
    """FIND-RECORD: the finding a failed :class:`AmqpRun` stands for; its signature
    (FIND-SIGNATURE) names the rule, the failing op's name and the fields (with whether
    the implementation's value is higher or lower) and monitor rules: no sizes, no seed,
    no numbers of the run."""
    # deferred: conform.py builds its findings with this module
    from creditflow.conformance.families.amqp.conform import AmqpRun, run_lines

    assert isinstance(run, AmqpRun) and run.index is not None
    op = run.ops[run.index].op
    fields = []
    for d in run.diffs:
        if d.field.startswith("property ") or d.field.endswith(" refused"):
            continue
        if isinstance(d.model, int) and isinstance(d.implementation, int):
            how = "higher" if d.implementation > d.model else "lower"
        else:
            how = "differs"
        fields.append(f"{d.field} {how}")
    monitor = sorted({v.rule for v in run.violations})
    rule, parts = run_rule(op, [f.rsplit(" ", 1)[0] for f in fields], monitor)
    parts = (*(f"rule:{m}" for m in monitor), *fields)
    signature = signature_text(rule.id, op, parts)
    return Finding(
        finding_id(signature),
        rule,
        signature,
        tuple(str(o) for o in run.ops),
        trace,
        found_by,
        tuple(run_lines(run)),
    )
