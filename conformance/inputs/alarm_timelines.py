"""Alarm timeline files (AL-TIMELINE): what a broker went through — publishes, alarms,
consumers starting, alarms clearing — as steps, run through the alarm model
(``model/alarms/``) with the broker's own work settled after each step.

    {"name": "…", "description": "…", "profile": "3.10.8",
     "nodes": ["rabbit@n1"], "limit": 1,
     "connections": [{"name": "pub"}, {"name": "con"}],
     "steps": [{"op": "publish", "connection": "pub", "count": 10},
               {"op": "alarm", "source": "memory"},
               {"op": "consume", "connection": "con"},
               {"op": "clear", "source": "memory"}]}

Shipped examples: ``spec/alarms/*.json`` (``creditflow alarms run NAME``). Every error
names the file and the problem in one line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from creditflow.conformance.inputs.reading import InputError, checked_name, load_json
from creditflow.conformance.inputs.schemas import boolean
from creditflow.model.alarms.properties import AlarmProperties
from creditflow.model.alarms.rules import (
    DISK,
    MEMORY,
    PROFILE_3_10,
    PROFILES,
    SOURCE_NAMES,
    AlarmConfig,
    AlarmModel,
    AlarmState,
    ConnectionSpec,
    Notice,
    Outcome,
    alarm_bit,
    reported_state,
    watermark_alarm,
)

#: The ops of a timeline step and their fields (with defaults; ``None``: required).
STEP_FIELDS: dict[str, dict[str, Any]] = {
    "publish": {"connection": None, "count": 1},
    "consume": {"connection": None},
    "alarm": {"source": "memory", "node": ""},
    "clear": {"source": "memory", "node": ""},
    "watermark": {"node": "", "value": None},
    "node_down": {"node": ""},
}
CONNECTION_FIELDS = {"name", "node", "capability", "empty_body", "complies"}
TOP_FIELDS = {"name", "description", "profile", "nodes", "limit", "connections", "steps"}
SOURCES = {"memory": MEMORY, "disk": DISK}

#: IN-LIMITS: the most nodes, connections and steps of a timeline, the largest ``count``
#: of a step and of all its publishes together, the largest ``limit`` or watermark
#: ``value``. A run's work is linear in these (AL-SETTLE, AL-ACTIONS, AL-TIMELINE).
MAX_NODES = 1_000
MAX_CONNECTIONS = 1_000
MAX_STEPS = 10_000
MAX_PUBLISHES = 1_000_000
MAX_MEMORY = 10**15


class TimelineError(InputError):
    """A timeline file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class TimelineStep:
    op: str
    params: dict[str, Any]

    def describe(self) -> str:
        p = self.params
        if self.op == "publish":
            return f"{p['connection']} publishes {p['count']}"
        if self.op == "consume":
            return f"{p['connection']} starts consuming"
        if self.op in ("alarm", "clear"):
            return f"{p['source']} alarm {'set' if self.op == 'alarm' else 'cleared'} ({p['node']})"
        if self.op == "watermark":
            return f"watermark {p['value']} on {p['node']}"
        return f"{p['node']} goes down"


@dataclass(frozen=True)
class Timeline:
    name: str
    description: str
    config: AlarmConfig
    steps: tuple[TimelineStep, ...]
    source: str


def timeline_dir() -> Path:
    return Path(str(resources.files("creditflow.spec") / "alarms"))


def timeline_names() -> list[str]:
    return sorted(p.stem for p in timeline_dir().glob("*.json"))


def _fail(source: str, message: str) -> TimelineError:
    return TimelineError(f"{source}: {message}")


def _name(source: str, value: Any) -> str:
    """IN-LIMITS: the timeline's name, a string of at most 1,024 characters."""
    try:
        return checked_name(value, "name")
    except ValueError as exc:
        raise _fail(source, str(exc)) from None


def _int(source: str, where: str, value: Any, least: int, most: int) -> int:
    """An integer in ``[least, most]`` (IN-LIMITS)."""
    if not isinstance(value, int) or isinstance(value, bool) or not least <= value <= most:
        raise _fail(
            source, f"{where} must be an integer in [{least}, {most:,}] (IN-LIMITS), got {value!r}"
        )
    return value


def _str(source: str, where: str, value: Any, choices: list[str] | None = None) -> str:
    if not isinstance(value, str) or (choices is not None and value not in choices):
        known = f" (one of {', '.join(choices)})" if choices else ""
        raise _fail(source, f"{where} must be a string{known}, got {value!r}")
    return value


def _step(
    source: str, index: int, raw: Any, nodes: list[str], conns: list[str], profile: str
) -> TimelineStep:
    where = f"step {index}"
    if not isinstance(raw, dict) or raw.get("op") not in STEP_FIELDS:
        raise _fail(source, f"{where} must be an object with an op: {', '.join(STEP_FIELDS)}")
    op = raw["op"]
    unknown = sorted(set(raw) - set(STEP_FIELDS[op]) - {"op", "note"})
    if unknown:
        raise _fail(source, f"{where} ({op}): unknown field(s) {', '.join(unknown)}")
    params: dict[str, Any] = {}
    for name, default in STEP_FIELDS[op].items():
        if name not in raw and default is None:
            raise _fail(source, f"{where} ({op}): missing {name!r}")
        value = raw.get(name, default)
        if name == "connection":
            value = _str(source, f"{where} ({op}) connection", value, conns)
        elif name == "node":
            value = _str(source, f"{where} ({op}) node", value or nodes[0], nodes)
        elif name == "source":
            value = _str(source, f"{where} ({op}) source", value, list(SOURCES))
            if value == "disk" and profile != PROFILE_3_10:
                raise _fail(source, f"{where} ({op}): the {profile} profile has no disk alarms")
        elif name == "count":
            value = _int(source, f"{where} ({op}) count", value, 1, MAX_PUBLISHES)
        elif name == "value":
            value = _int(source, f"{where} ({op}) value", value, 0, MAX_MEMORY)
        params[name] = value
    return TimelineStep(op, params)


def parse_timeline(data: Any, source: str) -> Timeline:
    """Validate a timeline document (AL-TIMELINE)."""
    if not isinstance(data, dict):
        raise _fail(source, "a timeline must be a JSON object")
    unknown = sorted(set(data) - TOP_FIELDS)
    if unknown:
        raise _fail(source, f"unknown field(s) {', '.join(unknown)}")
    profile = _str(source, "profile", data.get("profile", PROFILE_3_10), list(PROFILES))
    nodes = data.get("nodes", ["rabbit@n1"])
    if not isinstance(nodes, list) or not nodes or len(set(map(str, nodes))) != len(nodes):
        raise _fail(source, "nodes must be a non-empty list of distinct names")
    if len(nodes) > MAX_NODES:
        raise _fail(source, f"more than {MAX_NODES:,} nodes (IN-LIMITS)")
    nodes = [_str(source, "a node", n) for n in nodes]
    limit = _int(source, "limit", data.get("limit", 1), 0, MAX_MEMORY)
    raw_conns = data.get("connections")
    if not isinstance(raw_conns, list) or not raw_conns:
        raise _fail(source, "connections must be a non-empty list of objects with a name")
    if len(raw_conns) > MAX_CONNECTIONS:
        raise _fail(source, f"more than {MAX_CONNECTIONS:,} connections (IN-LIMITS)")
    names: list[str] = []
    for i, c in enumerate(raw_conns, 1):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str) or c["name"] in names:
            raise _fail(source, f"connection {i} must be an object with a new name")
        bad = sorted(set(c) - CONNECTION_FIELDS)
        if bad:
            raise _fail(source, f"connection {c['name']}: unknown field(s) {', '.join(bad)}")
        names.append(c["name"])
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise _fail(source, "steps must be a non-empty list")
    if len(raw_steps) > MAX_STEPS:
        raise _fail(source, f"more than {MAX_STEPS:,} steps (IN-LIMITS)")
    steps = tuple(_step(source, i, s, nodes, names, profile) for i, s in enumerate(raw_steps, 1))
    published = sum(s.params["count"] for s in steps if s.op == "publish")
    if published > MAX_PUBLISHES:
        raise _fail(
            source, f"{published:,} publishes in all, more than {MAX_PUBLISHES:,} (IN-LIMITS)"
        )
    specs = []
    for c in raw_conns:
        node = _str(source, f"connection {c['name']} node", c.get("node", nodes[0]), nodes)
        flags = {}
        for flag in ("capability", "empty_body", "complies"):
            if flag in c:
                try:
                    flags[flag] = boolean(c[flag])  # IN-BOOL
                except ValueError as exc:
                    raise _fail(source, f"connection {c['name']}: {flag} {exc}") from None
        # The supply is what the timeline publishes; a consume step makes a consumer
        # that starts when told.
        publishes = sum(
            s.params["count"]
            for s in steps
            if s.op == "publish" and s.params["connection"] == c["name"]
        )
        consumes = any(s.op == "consume" and s.params["connection"] == c["name"] for s in steps)
        specs.append(
            ConnectionSpec(
                c["name"],
                node=nodes.index(node),
                publishes=publishes,
                consumes=consumes,
                starts_later=consumes,
                **flags,
            )
        )
    max_used = limit + 1
    disk = any(s.op in ("alarm", "clear") and s.params["source"] == "disk" for s in steps)
    config = AlarmConfig(
        tuple(specs),
        nodes=tuple(nodes),
        limit=limit,
        max_used=max_used,
        disk=disk,
        node_down=any(s.op == "node_down" for s in steps),
        # AL-ACTIONS: the values are configured; an action names one by its position
        watermarks=tuple(sorted({s.params["value"] for s in steps if s.op == "watermark"})),
        profile=profile,
        name=_name(source, data.get("name", Path(source).stem)),
        description=str(data.get("description", "")),
    )
    return Timeline(config.name, config.description, config, steps, source)


def load_timeline(path_or_name: str | Path) -> Timeline:
    """A timeline file, or a shipped one by name; :class:`TimelineError` names the file."""
    path = Path(path_or_name)
    if not path.is_file() and str(path_or_name) in timeline_names():
        path = timeline_dir() / f"{path_or_name}.json"
    if not path.is_file():
        known = ", ".join(timeline_names())
        raise TimelineError(f"{path}: no such file; shipped timelines: {known}")
    try:
        data = load_json(path)  # IN-READ, IN-DEPTH, IN-INT, IN-FINITE, IN-DUPLICATE
    except InputError as exc:
        raise TimelineError(str(exc)) from None
    return parse_timeline(data, str(path))


# -- running through the model -----------------------------------------------------------


@dataclass
class TimelineResult:
    """One step's effect (AL-TIMELINE): the state once the broker settled, the frames
    each client received during the step, and the AL properties it violated."""

    index: int
    step: TimelineStep
    state: AlarmState
    notices: list[Notice] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)


class TimelineStuck(ValueError):
    """A step the model cannot take in that state (e.g. a 2008 complying client told to
    stop publishing); the message names the file and the step."""


def _actions(step: TimelineStep) -> Iterator[tuple[str, str, int | None]]:
    """The model actions of one step, (kind, target, value); ``_memory`` stands for
    moving a node's memory use across its watermark and the check that follows."""
    p = step.params
    if step.op == "publish":
        for _ in range(p["count"]):
            yield "publish", p["connection"], None
    elif step.op == "consume":
        yield "consume", p["connection"], None
    elif step.op == "watermark":
        yield "set_watermark", p["node"], p["value"]
    elif step.op == "node_down":
        yield "node_down", p["node"], None
    elif p["source"] == "disk":
        yield ("disk_set" if step.op == "alarm" else "disk_clear"), p["node"], None
    else:
        # Memory: use rises above (falls to) the node's watermark, then the periodic
        # check runs (AL-MEMORY, AL-WATERMARK).
        yield "_memory", p["node"], None


class _Runner:
    """Applies model actions for one timeline, collecting frames and violations."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.model = AlarmModel(timeline.config)
        self.props = AlarmProperties(self.model)
        self.state = self.model.initial()

    def act(self, action: int, result: TimelineResult, check_enabled: bool = True) -> None:
        model = self.model
        if check_enabled and not model.is_enabled(self.state, action):
            raise TimelineStuck(
                f"{self.timeline.source}: step {result.index} ({result.step.describe()}): "
                f"{model.describe(action)} is not possible in the model here"
            )
        self.record(model.apply(self.state, action), action, result)

    def record(self, outcome: Outcome, action: int | None, result: TimelineResult) -> None:
        """Take ``outcome`` (of ``action``; ``None``: a memory move, which no step
        property judges) and note its frames and violations."""
        if action is not None:
            result.violations += [
                v
                for v in self.props.step_violations(self.state, action, outcome)
                if v not in result.violations
            ]
        result.notices.extend(outcome.notices)
        self.state = outcome.state

    def settle(self, result: TimelineResult) -> None:
        """The broker's own steps (reading frames, delivering) until none is enabled;
        they end within the state's work bound (AL-SETTLE)."""
        for _ in range(self.model.broker_work(self.state) + 1):
            action = next(self.model.broker_enabled(self.state), None)
            if action is None:
                return
            self.act(action, result, check_enabled=False)
        raise AssertionError("AL-SETTLE: broker steps outlasted their bound")


def run_timeline(timeline: Timeline) -> Iterator[TimelineResult]:
    """Run every step through the model, settling the broker's own work (reading
    frames, delivering) after each action (AL-TIMELINE); one result per step."""
    runner = _Runner(timeline)
    model, nodes = runner.model, timeline.config.nodes
    for index, step in enumerate(timeline.steps, 1):
        result = TimelineResult(index, step, runner.state)
        for kind, target, value in _actions(step):
            if kind == "_memory":
                n = nodes.index(target)
                on = step.op == "alarm"
                limit = runner.state.limit[n]
                if watermark_alarm(runner.state.used[n], limit) != on:
                    # AL-MEMORY: just above the watermark, or down to it, in one move
                    runner.record(model.mem_to(runner.state, n, limit + on), None, result)
                if bool(runner.state.alarms & alarm_bit(n, MEMORY)) != on:
                    runner.act(model.encode("tick", target), result)
            else:
                runner.act(model.encode(kind, target, value), result)
            runner.settle(result)
        result.violations += [
            v for v in runner.props.violations(runner.state) if v not in result.violations
        ]
        result.state = runner.state
        yield result


@dataclass(frozen=True, slots=True)
class AlarmStateView:
    """A state as ``alarms run`` shows it (OUT-TYPED-RESULT): the alarms raised (source
    @ node), each connection's reported state (AL-REPORTED-STATE), the messages each
    consumer consumed, the frames each publisher wrote that the broker has not read,
    and the queue's length."""

    alarms: tuple[str, ...]
    connections: dict[str, str]
    consumed: dict[str, int]
    unread_frames: dict[str, int]
    queued: int

    def to_json(self) -> dict[str, Any]:
        return {
            "alarms": list(self.alarms),
            "connections": dict(self.connections),
            "consumed": dict(self.consumed),
            "unread_frames": dict(self.unread_frames),
            "queued": self.queued,
        }


@dataclass(frozen=True, slots=True)
class TimelineRow:
    """One step of ``alarms run`` as printed (AL-TIMELINE, OUT-TYPED-RESULT): the step,
    the frames the clients received during it, the settled state and the AL properties
    it violated."""

    index: int
    step: str
    frames: tuple[Notice, ...]
    view: AlarmStateView
    violations: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA: a step line of ``alarms run --json`` (alarms-run.json)."""
        return {
            "index": self.index,
            "step": self.step,
            "frames": [[n.connection, n.method, n.reason] for n in self.frames],
            **self.view.to_json(),
            "violations": list(self.violations),
        }


def state_view(timeline: Timeline, state: AlarmState) -> AlarmStateView:
    """A state as the row ``alarms run`` prints (AL-REPORTED-STATE per connection)."""
    nodes = timeline.config.nodes
    specs = timeline.config.connections
    return AlarmStateView(
        alarms=tuple(
            f"{SOURCE_NAMES[s]}@{nodes[n]}"
            for n in range(len(nodes))
            for s in (MEMORY, DISK)
            if state.alarms & alarm_bit(n, s)
        ),
        connections={s.name: reported_state(c) for s, c in zip(specs, state.conns, strict=True)},
        consumed={
            s.name: c.consumed for s, c in zip(specs, state.conns, strict=True) if s.consumes
        },
        unread_frames={
            s.name: c.written - c.read
            for s, c in zip(specs, state.conns, strict=True)
            if s.publishes
        },
        queued=state.queue,
    )


def timeline_row(timeline: Timeline, result: TimelineResult) -> TimelineRow:
    """The printed row of one step of ``timeline`` (AL-TIMELINE)."""
    return TimelineRow(
        index=result.index,
        step=result.step.describe(),
        frames=tuple(result.notices),
        view=state_view(timeline, result.state),
        violations=tuple(result.violations),
    )
