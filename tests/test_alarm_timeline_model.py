"""AL-TIMELINE against the alarm model: a timeline run agrees, step by step, with a plain
walk of the model's own listed actions (AL-ACTIONS, AL-MEMORY, AL-SETTLE), whatever the
watermark values; the file's sizes are bounded where it is read (IN-LIMITS). Cost: ~15 s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creditflow.conformance.inputs.alarm_timelines import (
    MAX_CONNECTIONS,
    MAX_NODES,
    MAX_PUBLISHES,
    MAX_STEPS,
    TimelineError,
    TimelineStuck,
    parse_timeline,
    run_timeline,
)
from creditflow.model.alarms.rules import (
    ACTION_SHIFT,
    BROKER,
    DISK,
    MEMORY,
    AlarmConfig,
    AlarmModel,
    AlarmState,
    ConnectionSpec,
    Notice,
    alarm_bit,
)

#: values around the old packing of ``node * 64 + value`` into 20 bits
AWKWARD_VALUES = (0, 1, 2, 63, 64, 65, 100, 127, 128)


class ModelWalk:
    """The reference: each timeline step done with the actions ``AlarmModel.enabled``
    lists, found by their description, memory moved one unit at a time, and the broker
    settled by its first listed internal step — no encoding, no shortcut."""

    def __init__(self, model: AlarmModel) -> None:
        self.model = model
        self.state: AlarmState = model.initial()

    def take(self, text: str) -> list[Notice]:
        listed = {self.model.describe(a): a for a in self.model.enabled(self.state)}
        if text not in listed:
            raise TimelineStuck(text)
        outcome = self.model.apply(self.state, listed[text])
        self.state = outcome.state
        return list(outcome.notices)

    def settle(self) -> list[Notice]:
        notices: list[Notice] = []
        while True:
            internal = [a for a in self.model.enabled(self.state) if a >> ACTION_SHIFT in BROKER]
            if not internal:
                return notices
            outcome = self.model.apply(self.state, internal[0])
            self.state = outcome.state
            notices.extend(outcome.notices)

    def step(self, op: str, p: dict[str, Any]) -> list[Notice]:
        nodes = self.model.config.nodes
        notices: list[Notice] = []
        if op == "publish":
            for _ in range(p["count"]):
                notices += self.take(f"publish({p['connection']})") + self.settle()
        elif op == "consume":
            notices += self.take(f"consume({p['connection']})") + self.settle()
        elif op == "watermark":
            notices += self.take(f"set_watermark({p['node']}, {p['value']})") + self.settle()
        elif op == "node_down":
            notices += self.take(f"node_down({p['node']})") + self.settle()
        elif p["source"] == "disk":
            kind = "disk_set" if op == "alarm" else "disk_clear"
            notices += self.take(f"{kind}({p['node']})") + self.settle()
        else:
            n, on = nodes.index(p["node"]), op == "alarm"
            while (self.state.used[n] > self.state.limit[n]) != on:
                outcome = self.model.apply(
                    self.state, self.model.encode("mem_up" if on else "mem_down", p["node"])
                )
                self.state = outcome.state
            if bool(self.state.alarms & alarm_bit(n, MEMORY)) != on:
                notices += self.take(f"tick({p['node']})")
            notices += self.settle()
        return notices


@st.composite
def timelines(draw: st.DrawFn) -> dict[str, Any]:
    nodes = [f"rabbit@n{i}" for i in range(draw(st.integers(1, 3)))]
    profile = draw(st.sampled_from(["3.10.8", "3.10.8", "2008"]))
    conns = [
        {
            "name": f"c{i}",
            "node": draw(st.sampled_from(nodes)),
            "capability": draw(st.booleans()),
            "empty_body": draw(st.booleans()),
            "complies": draw(st.booleans()),
        }
        for i in range(draw(st.integers(1, 3)))
    ]
    names = [c["name"] for c in conns]
    steps: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["publish", "consume", "alarm", "clear", "watermark"]))
        node = draw(st.sampled_from(nodes))
        if op == "publish":
            step = {"op": op, "connection": draw(st.sampled_from(names))}
            step["count"] = draw(st.integers(1, 4))
        elif op == "consume":
            step = {"op": op, "connection": draw(st.sampled_from(names))}
        elif op == "watermark":
            step = {"op": op, "node": node, "value": draw(st.sampled_from(AWKWARD_VALUES))}
        else:
            sources = ["memory", "disk"] if profile == "3.10.8" else ["memory"]
            step = {"op": op, "node": node, "source": draw(st.sampled_from(sources))}
        steps.append(step)
    if len(nodes) > 1 and draw(st.booleans()):
        steps.insert(draw(st.integers(0, len(steps))), {"op": "node_down", "node": nodes[-1]})
    limit = draw(st.sampled_from(AWKWARD_VALUES))
    return {
        "profile": profile,
        "nodes": nodes,
        "limit": limit,
        "connections": conns,
        "steps": steps,
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=timelines())
def test_a_timeline_run_is_a_walk_of_the_model(document: dict[str, Any]) -> None:
    """AL-TIMELINE, AL-ACTIONS, AL-MEMORY, AL-SETTLE: every step ends in the state, with
    the frames, that the model's own listed actions give; both get stuck at the same
    step; a watermark step changes its node's limit only, to its value."""
    timeline = parse_timeline(document, "t.json")
    walk = ModelWalk(AlarmModel(timeline.config))
    limits = {n: document["limit"] for n in document["nodes"]}
    results = run_timeline(timeline)
    for step in timeline.steps:
        try:
            want = walk.step(step.op, step.params)
        except TimelineStuck:
            with pytest.raises(TimelineStuck):
                next(results)
            return
        got = next(results)
        assert got.state == walk.state, step.describe()
        assert got.notices == want, step.describe()
        if step.op == "watermark":
            limits[step.params["node"]] = step.params["value"]
        assert dict(zip(timeline.config.nodes, got.state.limit, strict=True)) == limits
    assert next(results, None) is None


@pytest.mark.parametrize("value", [64, 100, 2**20, 4_194_304, 10**15])
def test_any_watermark_value_is_its_own_action_on_its_node(value: int) -> None:
    """AL-ACTIONS: a watermark value is never packed with its node: 64 on one node, 100
    on the first of two, 2^20, 4194304 (once 1 << 22: a publish) and 10^15 each set that
    node's limit and nothing else — no other node, no publish."""
    document = {
        "nodes": ["a", "b"],
        "connections": [{"name": "p"}, {"name": "c"}],
        "steps": [
            {"op": "watermark", "node": "a", "value": value},
            {"op": "alarm", "node": "a"},
            {"op": "clear", "node": "a"},
        ],
    }
    results = list(run_timeline(parse_timeline(document, "t.json")))
    after_watermark, alarmed, cleared = (r.state for r in results)
    assert after_watermark.limit == (value, 1)
    assert after_watermark.used == (0, 0) and after_watermark.queue == 0
    assert [c.written for c in after_watermark.conns] == [0, 0]
    assert alarmed.used[0] == value + 1 and alarmed.alarms == alarm_bit(0, MEMORY)
    assert cleared.used[0] == value and cleared.alarms == 0
    assert all(r.violations == [] for r in results)


def test_publishing_beyond_a_fixed_cap_settles() -> None:
    """AL-SETTLE: 100,001 publishes, then a consumer: every message is delivered (the
    old fixed cap of 100,000 internal steps said "did not settle")."""
    document = {
        "connections": [{"name": "p"}, {"name": "c"}],
        "steps": [
            {"op": "publish", "connection": "p", "count": 100_001},
            {"op": "consume", "connection": "c"},
        ],
    }
    *_, last = run_timeline(parse_timeline(document, "t.json"))
    assert last.state.queue == 0 and last.state.conns[1].consumed == 100_001


def test_settling_is_bounded_by_the_work_in_the_state() -> None:
    """AL-SETTLE: ``settle`` takes exactly the reads and deliveries the state holds, and
    ``broker_work`` bounds them."""
    specs = (
        ConnectionSpec("p", publishes=7),
        ConnectionSpec("c", consumes=True, starts_later=True),
    )
    model = AlarmModel(AlarmConfig(specs))
    state = model.initial()
    for _ in range(7):
        state = model.apply(state, model.encode("publish", "p")).state
    state = model.apply(state, model.encode("consume", "c")).state
    assert model.broker_work(state) == 28  # 14 frames unread
    settled, _ = model.settle(state)
    assert settled.queue == 0 and settled.conns[1].consumed == 7
    assert not any(model.broker_enabled(settled))


def write(tmp_path: Path, document: dict[str, Any]) -> str:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    return str(path)


BASE = {"connections": [{"name": "p"}], "steps": [{"op": "publish", "connection": "p"}]}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"limit": 10**17}, "limit must be an integer in [0, 1,000,000,000,000,000]"),
        (
            {"steps": [{"op": "publish", "connection": "p", "count": 10**17}]},
            "step 1 (publish) count must be an integer in [1, 1,000,000]",
        ),
        (
            {"steps": [{"op": "watermark", "value": 10**16}]},
            "step 1 (watermark) value must be an integer in [0, 1,000,000,000,000,000]",
        ),
        (
            {"steps": [{"op": "publish", "connection": "p", "count": MAX_PUBLISHES}] * 2},
            "2,000,000 publishes in all, more than 1,000,000",
        ),
        (
            {"steps": [{"op": "consume", "connection": "p"}] * (MAX_STEPS + 1)},
            "more than 10,000 steps",
        ),
        ({"nodes": [f"n{i}" for i in range(MAX_NODES + 1)]}, "more than 1,000 nodes"),
        (
            {"connections": [{"name": f"c{i}"} for i in range(MAX_CONNECTIONS + 1)]},
            "more than 1,000 connections",
        ),
    ],
)
def test_sizes_beyond_in_limits_are_refused_where_read(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    """IN-LIMITS: counts, limits, values and sizes past the documented maxima are one
    line naming the file, not a hang."""
    with pytest.raises(TimelineError) as error:
        parse_timeline({**BASE, **change}, write(tmp_path, {}))
    assert str(error.value).startswith(str(tmp_path / "t.json"))
    assert message in str(error.value) and "IN-LIMITS" in str(error.value)
    assert "\n" not in str(error.value)


def test_disk_sources_are_distinct_from_memory() -> None:
    """AL-CLUSTER through a timeline: disk and memory are separate bits per node."""
    document = {
        "nodes": ["a", "b"],
        "connections": [{"name": "p"}],
        "steps": [{"op": "alarm", "source": "disk", "node": "b"}],
    }
    (result,) = run_timeline(parse_timeline(document, "t.json"))
    assert result.state.alarms == alarm_bit(1, DISK)
