"""FIND-*: every distinct finding of an AMQP conform run, each with its rule and class
(FIND-CLASS, FIND-RULE, FIND-RECORD, FIND-SIGNATURE), the run going on after each
(FIND-EVERY), its run kept for its trace (FIND-TRACE), the exit by class (FIND-EXIT), and
a legal choice declared instead of reported (FIND-POLICY-DECLARED)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from creditflow.adapters.registry import amqp_adapter_factory
from creditflow.conformance.differential.findings import Finding, Rule
from creditflow.conformance.families.amqp.conform import (
    AmqpConformOptions,
    model_policy,
    run_amqp_conform,
)
from creditflow.conformance.families.amqp.rules import MONITOR_RULES, rules_table
from creditflow.model.amqp import endpoints
from creditflow.model.amqp.endpoints import Receiver, ReceiverConfig
from creditflow.model.amqp.link import LinkEnd
from creditflow.model.amqp.session import SessionEnd

FAST = {"depth": 3, "max_examples": 0, "phases": ("explorer-runs",)}


def test_every_monitor_rule_has_a_rule_of_ours() -> None:
    """FIND-RULE: each WireMonitor rule and compared field maps to a spec id and class."""
    import re
    from pathlib import Path

    spec = Path(__file__).parent.parent / "spec"
    ids = set(
        re.findall(
            r"^#+ ([A-Z][A-Z0-9-]+)", "\n".join(p.read_text() for p in spec.glob("*.md")), re.M
        )
    )
    for name in (
        "no-credit",
        "over-delivery",
        "bad-serial",
        "drain-unanswered",
        "drain-credit",
        "no-window",
        "negative",
        "stall",
        "agree",
        "credit-ledger",
    ):
        assert name in MONITOR_RULES
    for _, rule in rules_table():
        assert rule.id in ids, rule.id
        assert rule.klass in ("must", "should", "contract", "policy")


def test_a_bad_class_is_refused() -> None:
    """FIND-CLASS: a rule's class is one of the four."""
    with pytest.raises(ValueError):
        Rule("X", cast(Any, "fatal"), "nowhere")


def test_every_finding_of_a_double_mutant_in_one_run() -> None:
    """FIND-EVERY, FIND-SIGNATURE, FIND-RECORD, FIND-TRACE: a mutant with two bugs gives
    two distinct findings in one run, each with its rule, class, run and JSON record."""
    factory = amqp_adapter_factory("amqp-reference:mutant:delta-credit+missed-drain-echo")
    result = run_amqp_conform(factory, AmqpConformOptions(seed=1, **FAST))
    rules = {f.rule.id for f in result.findings}
    assert {"AMQ-LINK-CREDIT-SND", "AMQ-LINK-DRAIN"} <= rules, [
        f.signature for f in result.findings
    ]
    assert len({f.signature for f in result.findings}) == len(result.findings)
    assert len(result.finding_runs) == len(result.findings)
    assert all(r.failed for r in result.finding_runs)
    doc = result.to_json()
    assert [f["signature"] for f in doc["findings"]] == [f.signature for f in result.findings]
    assert doc["findings_summary"]["distinct"] == len(result.findings)
    assert result.exit_code == 1  # FIND-EXIT: must findings fail
    assert all("seed" not in f.signature and "window" not in f.signature for f in result.findings)


def test_the_cap_on_findings() -> None:
    """FIND-EVERY: the search stops at max_findings and says so."""
    factory = amqp_adapter_factory("amqp-reference:mutant:delta-credit+missed-drain-echo")
    result = run_amqp_conform(factory, AmqpConformOptions(seed=1, max_findings=1, **FAST))
    assert len(result.findings) == 1 and result.capped


def test_exit_by_class() -> None:
    """FIND-EXIT: should and policy findings fail only with --strict."""
    f = Finding("x", Rule("AMQ-POL-GRANT-DRAIN", "policy", "§2.7.4"), "s", ())
    assert not f.fails() and f.fails(strict=True)
    assert Finding("y", Rule("AMQ-LINK-DRAIN", "must", "§2.6.7"), "s", ()).fails()


def test_grant_drain_is_a_declared_choice() -> None:
    """FIND-POLICY-DECLARED, AMQ-POL-GRANT-DRAIN: the drain flag of a hand grant is the
    model's parameter; proton declares clear, an unknown choice is refused."""
    ses = SessionEnd(0, 10, 0, 10)
    draining = Receiver(LinkEnd(0, 1, True), ses, (), 0, 0, 0, 1, 0)
    for choice, flag in (("keep", True), ("clear", False), ("sticky", True)):
        cfg = ReceiverConfig(None, None, 0, (2,), 1, cast(Any, choice))
        r, _ = endpoints.receiver_grant(cfg, draining)
        assert r.link.drain is flag
    after = draining._replace(link=LinkEnd(0, 0, False))
    cfg = ReceiverConfig(None, None, 0, (2,), 1, cast(Any, "sticky"))
    assert endpoints.receiver_grant(cfg, after)[0].link.drain is True
    with pytest.raises(ValueError):
        model_policy(
            {
                "credit": {"policy": "manual"},
                "window": {"policy": "never", "window": 3},
                "grant_drain": "maybe",
            },
            {},
        )


def test_every_finding_has_its_own_trace_written_with_its_rule(tmp_path):
    """FIND-TRACE, FIND-EVERY through the command line: a double mutant's run lists three
    distinct findings, each with a trace of its own on disk whose meta names its rule,
    class and signature, and each trace replays as the divergence it records."""
    import json as json_

    from click.testing import CliRunner

    from creditflow.conformance.cli import main

    adapter = "amqp-reference:mutant:delta-credit+missed-drain-echo"
    argv = ["conform", "--adapter", adapter, "--seed", "1", "--depth", "3"]
    argv += ["--max-examples", "5", "--out", str(tmp_path), "--json"]
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 1, r.output
    doc = json_.loads(r.output.strip().splitlines()[-1])
    findings = doc["findings"]
    assert len({f["signature"] for f in findings}) == len(findings) >= 3
    traces = [f["trace"] for f in findings]
    assert len(set(traces)) == len(traces)
    for f in findings:
        meta = json_.loads(Path(f["trace"]).read_text(encoding="utf-8"))["#meta"]["creditflow"]
        assert (meta["rule"], meta["class"], meta["signature"]) == (
            f["rule"],
            f["class"],
            f["signature"],
        )
        replayed = CliRunner().invoke(main, ["replay", f["trace"], "--adapter", adapter])
        assert replayed.exit_code == 1, replayed.output
