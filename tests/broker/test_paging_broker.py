"""PG-OBSERVE: the paging scenarios on a real RabbitMQ 3.10.8 (Debian's package, a
private node on loopback) agree with the model, field by field, in the atomic one-pass
snapshots and in the settled states."""

from __future__ import annotations

import json

import pytest

from creditflow.adapters.rabbitmq.broker import BrokerError
from creditflow.adapters.rabbitmq.paging import compare_on_broker
from creditflow.conformance.cli import main
from creditflow.conformance.cli import paging as cli_paging
from creditflow.conformance.families.paging.compare import (
    COMPARED,
    compare,
    view_of_probe,
)
from creditflow.conformance.inputs.paging_scenarios import load_scenario

pytestmark = pytest.mark.xdist_group("broker")

#: the scenarios the issue asks for, plus the embedding boundary
BROKER_SCENARIOS = ("small-embedded", "large-tight-credit", "mixed-pending-acks", "embed-boundary")


def test_paging_on_a_real_broker(private_broker, tmp_path, monkeypatch):
    """PG-OBSERVE: the four scenarios on one broker, then every check on their comparisons
    (one function: the comparisons are computed once)."""
    comparisons = {
        name: compare_on_broker(private_broker, load_scenario(name)) for name in BROKER_SCENARIOS
    }
    for name in BROKER_SCENARIOS:
        check_agreement(comparisons[name], name)
    check_large_messages_stop_paging_when_blocked(comparisons)
    check_embedded_messages_keep_their_bodies_until_delta(comparisons)
    check_embedding_boundary_on_the_broker(comparisons)
    check_a_wrong_prediction_is_caught(comparisons)
    check_cli_against_broker(private_broker, tmp_path, monkeypatch)
    check_erlang_session_evaluates_and_reports_errors(private_broker)


def check_agreement(c, name):
    """PG-OBSERVE-DETERMINED, PG-OBSERVE-SETTLED, PG-OBSERVE-PASS: every compared field of
    every step, and of every target step's one-pass snapshot, is equal."""
    assert not c.interference, (name, c.interference)
    assert not c.diffs, name + ":\n" + "\n".join(str(d) for d in c.diffs[:20])
    assert all(o.how == "settled" for o in c.observations), name
    assert any(o.after_pass is not None for o in c.observations), name


def check_large_messages_stop_paging_when_blocked(comparisons):
    """PG-A2B-BLOCKED, PG-CREDIT on the broker itself: after the first pass of target 0,
    exactly 10 of 40 large messages are betas and the queue is blocked by the transient
    msg_store with credit 0; once settled, q3 keeps 0..20 and delta holds 21..39."""
    obs = comparisons["large-tight-credit"].observations[1]
    one_pass = view_of_probe(obs.after_pass)
    assert [m[0] for m in one_pass["q3"]] == list(range(30, 40))
    assert len(one_pass["q4"]) == 30
    assert one_pass["blocked"] == ["transient"] and one_pass["credit"]["transient"] == 0
    settled = view_of_probe(obs.settled)
    assert [m[0] for m in settled["q3"]] == list(range(21))
    assert settled["delta"] == [21, 19, 19, 40] and settled["credit"]["transient"] == 10


def check_embedded_messages_keep_their_bodies_until_delta(comparisons):
    """PG-PERSIST-TO, PG-CAP, PG-CONTINUE on the broker: small bodies spend no credit, the
    first pass moves 2 x 10 and reschedules; they stay in RAM until rolled into delta."""
    obs = comparisons["small-embedded"].observations[1]
    one_pass = view_of_probe(obs.after_pass)
    assert len(one_pass["q3"]) == 20 and one_pass["waiting_bump"] is True
    assert one_pass["ram_msg_count"] == 50 and one_pass["credit"]["transient"] is None
    settled = view_of_probe(obs.settled)
    assert settled["delta"][1] == 34 and settled["ram_msg_count"] == 16


def check_embedding_boundary_on_the_broker(comparisons):
    """PG-PERSIST-TO: 4092 + 3 bytes of properties is embedded, 4093 + 3 is not."""
    settled = view_of_probe(comparisons["embed-boundary"].observations[1].settled)
    kinds = [m[5] for m in settled["q4"]]  # the embedded flag
    assert kinds == [True, True, True, False, False, False]


def check_a_wrong_prediction_is_caught(comparisons):
    """The comparison is not vacuous: the same observations against a model with another
    credit bound differ (in credit, and in what the first pass moved)."""
    c = comparisons["large-tight-credit"]
    wrong = load_scenario("large-tight-credit")
    wrong = wrong.__class__(
        **{
            **wrong.__dict__,
            "config": wrong.config._replace(
                profile=wrong.profile.with_settings(store_credit=(20, 10))
            ),
        }
    )
    diffs = compare(wrong, c.observations).diffs
    fields = {d.field for d in diffs}
    assert {"credit", "q3", "q4"} <= fields and fields <= set(COMPARED)


def check_cli_against_broker(private_broker, tmp_path, monkeypatch):
    """PG-OBSERVE via the CLI: the report file is written and the exit code is 0; the
    command's broker is the module's (the CLI starts its own otherwise)."""
    from click.testing import CliRunner

    class Shared:
        def __init__(self, workdir):
            pass

        def __enter__(self):
            return private_broker

        def __exit__(self, *exc):
            return None

    monkeypatch.setattr("creditflow.adapters.rabbitmq.broker.PrivateBroker", Shared)
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        main,
        ["paging", "embed-boundary", "--against-broker", "--out", str(out)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "agrees" in result.output and cli_paging is not None
    doc = json.loads(out.read_text())
    assert doc["agrees"] is True and len(doc["steps"]) == 5
    assert doc["steps"][3]["broker"]["after"]["len"] == 5


def check_erlang_session_evaluates_and_reports_errors(private_broker):
    """PG-OBSERVE's transport: a hidden node evaluates on the broker in milliseconds;
    syntax and runtime errors become BrokerError naming the node."""
    from creditflow.adapters.rabbitmq.erlang import ErlangSession

    with ErlangSession(private_broker) as session:
        assert session.eval('io:format("~p~n", [1 + 1]), ok.') == "2"
        assert session.eval("node().") == ""
        with pytest.raises(BrokerError, match="failed"):
            session.eval("1 +.")
        with pytest.raises(BrokerError, match="failed"):
            session.eval("erlang:error(boom).")
        assert session.eval('io:format("~s~n", [atom_to_list(node())]), ok.') == private_broker.node
    with pytest.raises(BrokerError, match="not running"):
        session.eval("1.")
