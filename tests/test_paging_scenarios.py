"""PG-SCENARIO files (loading, validation, running) and the model/broker comparison logic
(PG-OBSERVE-DETERMINED, PG-OBSERVE-NONDETERMINISTIC, PG-OBSERVE-INTERFERENCE) without a
broker: observations built from the model's own states."""

from __future__ import annotations

import copy
import json

import pytest

from creditflow.adapters.rabbitmq.paging import StepObservation
from creditflow.conformance.families.paging.compare import (
    COMPARED,
    NOT_COMPARED,
    compare,
    view_of_state,
)
from creditflow.conformance.inputs.paging_scenarios import (
    ScenarioError,
    load_scenario,
    parse_scenario,
    preset_names,
    run_scenario,
)
from creditflow.model.credit.spec import CreditSpec


def test_presets_load_and_run():
    """PG-SCENARIO: every preset loads, runs, and says whether a broker can run it."""
    names = preset_names()
    assert {
        "small-embedded",
        "large-tight-credit",
        "mixed-pending-acks",
        "slow-store",
        "v355-uncapped",
        "embed-boundary",
    } <= set(names)
    for name in names:
        scenario = load_scenario(name)
        run = run_scenario(scenario)
        assert len(run.results) == len(scenario.steps)
    assert load_scenario("large-tight-credit").broker_problem() is None
    assert "msg_store timing" in load_scenario("slow-store").broker_problem()
    assert "3.5.5" in load_scenario("v355-uncapped").broker_problem()
    s = load_scenario("large-tight-credit")
    assert s.profile.store_credit == CreditSpec(10, 5) and s.config.durable


def test_model_only_scenarios_are_refused_before_touching_a_broker():
    """PG-OBSERVE: a scenario that controls msg_store timing cannot run on a broker."""
    from creditflow.adapters.rabbitmq.broker import BrokerError
    from creditflow.adapters.rabbitmq.paging import BrokerPagingRun

    with pytest.raises(BrokerError, match="slow-store: cannot run on a broker"):
        BrokerPagingRun(None, load_scenario("slow-store"))  # type: ignore[arg-type]  # refused first


def test_deliveries_follow_the_client_order():
    """PG-SCENARIO: ack/requeue pick the oldest or newest outstanding deliveries."""
    doc = {
        "settings": {"msg_store_credit_disc_bound": [10, 5]},
        "steps": [
            {"op": "publish", "count": 5, "size": 10},
            {"op": "fetch", "count": 4},
            {"op": "requeue", "count": 1, "from": "newest"},
            {"op": "ack", "count": 2, "from": "oldest"},
            {"op": "fetch", "count": 2, "ack": False},
        ],
    }
    run = run_scenario(parse_scenario(doc, "inline"))
    assert run.results[1].delivered == [0, 1, 2, 3]
    assert [m.seq for m in run.results[2].settled.ready()] == [3, 4]
    assert [m.seq for m in run.results[3].settled.pending_acks()] == [2]
    assert run.results[4].delivered == [3, 4] and run.results[4].settled.removed == 4


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "a scenario must be a JSON object"),
        ({"steps": []}, "steps must be a non-empty list"),
        ({"steps": [{"op": "jump"}]}, "unknown op 'jump'"),
        ({"steps": [{"op": "publish"}]}, "give exactly one of 'size' or 'sizes'"),
        ({"steps": [{"op": "publish", "size": "big"}]}, "size must be int"),
        ({"steps": [{"op": "publish", "size": 1, "count": 0}]}, "count must be >= 1"),
        (
            {"steps": [{"op": "publish", "size": 1, "persistent": 1}]},
            "persistent must be true or false",
        ),
        ({"steps": [{"op": "ack", "from": "middle"}]}, "from must be 'oldest' or 'newest'"),
        ({"steps": [{"op": "target", "duration": -1}]}, "duration must be a number in"),
        ({"steps": [{"op": "target", "duration": 1, "extra": 2}]}, "unknown field(s) extra"),
        ({"steps": [{"op": "store", "store": "disk"}]}, "store must be 'persistent'"),
        ({"steps": [{"op": "settle", "settle": "yes"}]}, "settle must be true or false"),
        ({"profile": "2.0", "steps": [{"op": "settle"}]}, "unknown paging profile"),
        ({"settings": {"frobnicate": 1}, "steps": [{"op": "settle"}]}, "unknown setting"),
        (
            {"settings": {"msg_store_credit_disc_bound": [0, 1]}, "steps": [{"op": "settle"}]},
            "msg_store_credit_disc_bound must be",
        ),
        ({"queue": {"durable": "no"}, "steps": [{"op": "settle"}]}, "queue.durable"),
        ({"steps": [{"op": "settle"}], "colour": "red"}, "unknown top-level field"),
    ],
)
def test_invalid_scenarios_name_file_and_problem(doc, message):
    """PG-SCENARIO: one line naming the file and the problem."""
    with pytest.raises(ScenarioError) as info:
        parse_scenario(doc, "bad.json")
    text = str(info.value)
    assert text.startswith("bad.json: ") and message in text and "\n" not in text


def test_unreadable_files(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("{ nope")
    with pytest.raises(ScenarioError, match=r"x.json: not valid JSON \(line 1"):
        load_scenario(bad)
    with pytest.raises(ScenarioError, match="no such file or preset"):
        load_scenario(tmp_path / "missing.json")
    good = tmp_path / "g.json"
    good.write_text(json.dumps({"steps": [{"op": "publish", "size": 5}]}))
    assert load_scenario(good).name == "g"


def _observations(name: str) -> tuple:
    """Observations as a broker that behaves exactly like the model would give them."""
    scenario = load_scenario(name)
    run = run_scenario(scenario)
    obs = []
    for r in run.results:
        o = StepObservation(
            r.index, view_of_state(r.settled), "settled", rates_before=(0.0, 0.0, 0.0, 0.0)
        )
        if r.step.op == "target":
            o.before = view_of_state(r.settled)
            o.after_pass = view_of_state(r.after)
        obs.append(o)
    return scenario, obs


def test_an_identical_broker_agrees_and_rates_are_not_compared():
    """PG-OBSERVE-DETERMINED, PG-OBSERVE-NONDETERMINISTIC: the model against its own
    views agrees; measured rates differ without a diff (they are an input)."""
    scenario, obs = _observations("mixed-pending-acks")
    assert compare(scenario, obs).agrees
    assert "rates" in NOT_COMPARED and "rates" not in COMPARED
    noisy = copy.deepcopy(obs)
    for o in noisy:
        o.settled["rates"] = [3.5, 1.25, 0.5, 0.0]
    assert compare(scenario, noisy).agrees


def test_a_changed_field_is_a_diff_and_a_reset_target_is_interference():
    """PG-OBSERVE-INTERFERENCE: a settled target the model did not set is the broker's own
    periodic reset, reported as interference; an unsettled snapshot too; any other changed
    field is a divergence naming step, phase and field."""
    scenario, obs = _observations("large-tight-credit")
    bad = copy.deepcopy(obs)
    bad[3].settled["len"] += 1
    c = compare(scenario, bad)
    assert not c.agrees and [(d.step, d.phase, d.field) for d in c.diffs] == [(4, "settled", "len")]
    assert str(c.diffs[0]) == "step 4 (settled): len: model 52 != broker 53"
    reset = copy.deepcopy(obs)
    reset[1].settled["target"] = "infinity"  # step 2 kept target 0 in the model
    c = compare(scenario, reset)
    assert c.interference and "reset its RAM target" in c.interference[0]
    unsettled = copy.deepcopy(obs)
    unsettled[0].how = "unsettled"
    assert compare(scenario, unsettled).interference == ["step 1: the broker did not settle"]
    doc = compare(scenario, obs).to_json()
    assert doc["agrees"] and doc["steps"][1]["broker"]["after"]["q3"]
    json.dumps(doc)


def test_probe_snapshots_are_checked_against_backing_queue_status():
    """PG-OBSERVE: a field read by record position that disagrees with RabbitMQ's own
    backing_queue_status is an adapter error, not a divergence."""
    from creditflow.adapters.rabbitmq.broker import BrokerError
    from creditflow.adapters.rabbitmq.paging_probe import check_snapshot

    snapshot = {
        "q1": [],
        "q2": [],
        "q3": [[0]],
        "q4": [],
        "delta": [None, 0, 0, None],
        "len": 1,
        "target": "infinity",
        "next_seq_id": 1,
    }
    bqs = {
        "q1": 0,
        "q2": 0,
        "q3": 1,
        "q4": 0,
        "delta": [None, 0, 0, None],
        "len": 1,
        "target_ram_count": "infinity",
        "next_seq_id": 1,
    }
    check_snapshot({**snapshot, "backing_queue_status": bqs})
    with pytest.raises(BrokerError, match="q3 read as 1 but backing_queue_status says 2"):
        check_snapshot({**snapshot, "backing_queue_status": {**bqs, "q3": 2}})
