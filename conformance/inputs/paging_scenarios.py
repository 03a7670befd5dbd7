"""Paging scenario files (PG-SCENARIO): load, validate, and run through the model.

A scenario is a JSON file: a profile, RabbitMQ settings, the queue's durability and a list
of steps (publish, fetch, ack, requeue, target, rates, settle, and the model-only
store/bump/self_bump). Presets ship in ``spec/paging/`` (``creditflow paging NAME``).
Every error names the file and the problem in one line.

    >>> s = load_scenario("small-embedded")
    >>> run = run_scenario(s)
    >>> run.results[-1].settled.len >= 0
    True
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from creditflow.conformance.inputs.reading import InputError, load_json
from creditflow.conformance.inputs.schemas import boolean
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import MAX_NAME_LENGTH
from creditflow.model.paging import operations as paging
from creditflow.model.paging.profile import (
    DEFAULT_PROFILE,
    RABBIT_SETTING_NAMES,
    PagingProfile,
    profile_named,
)
from creditflow.model.paging.state import (
    PERSISTENT_STORE,
    TRANSIENT_STORE,
    Config,
    PagingState,
    Rates,
    Report,
    initial_state,
)

#: Steps a real broker can perform (the others exist only in the model).
BROKER_OPS = ("publish", "fetch", "ack", "requeue", "target", "settle", "rates")
MODEL_ONLY_OPS = ("store", "bump", "self_bump")
STORES = {"persistent": PERSISTENT_STORE, "transient": TRANSIENT_STORE}

_PARAMS: dict[str, dict[str, tuple[type | tuple[type, ...], object]]] = {
    "publish": {
        "count": (int, 1),
        "size": (int, None),
        "sizes": (list, None),  # PG-SIZES: a size pattern, cycled; instead of "size"
        "persistent": (bool, False),
        "props_bytes": (int, paging.DEFAULT_PROPS_BYTES),
    },
    "fetch": {"count": (int, 1), "ack": (bool, True)},
    "ack": {"count": (int, 1), "from": (str, "oldest")},
    "requeue": {"count": (int, 1), "from": (str, "oldest")},
    "target": {"duration": ((int, float, str), None)},
    "rates": {
        "ingress": ((int, float), 0.0),
        "egress": ((int, float), 0.0),
        "ack_ingress": ((int, float), 0.0),
        "ack_egress": ((int, float), 0.0),
    },
    "settle": {},
    "store": {"store": (str, "transient"), "count": (int, 1)},
    "bump": {"store": (str, "transient")},
    "self_bump": {},
}


#: IN-LIMITS: the largest count of one step, message size/properties (bytes), rate
#: (messages/s) or duration (s), the most steps and the largest RabbitMQ setting.
MAX_STEP_COUNT = 100_000
MAX_BYTES = 2**31 - 1
MAX_RATE = 1e9
MAX_STEPS = 10_000
MAX_SETTING = 10**9


class ScenarioError(InputError):
    """A scenario file is unreadable or invalid; the message names the file."""


@dataclass(frozen=True)
class ScenarioStep:
    """One step: an operation, its parameters and whether the system settles after it."""

    op: str
    params: dict[str, Any]
    settle: bool = True

    def message_sizes(self) -> list[int]:
        """A publish step's body size per message: ``size`` each, or the ``sizes``
        pattern cycled over ``count`` messages (PG-SIZES)."""
        p = self.params
        if p.get("sizes") is None:
            return [p["size"]] * p["count"]
        pattern = p["sizes"]
        return [pattern[i % len(pattern)] for i in range(p["count"])]

    def describe(self) -> str:
        p = self.params
        if self.op == "publish":
            kind = "persistent" if p["persistent"] else "transient"
            if p.get("sizes") is not None:
                pattern = "/".join(str(n) for n in p["sizes"])
                return f"publish {p['count']} x {pattern} B {kind}"
            return f"publish {p['count']} x {p['size']} B {kind}"
        if self.op == "fetch":
            return f"fetch {p['count']}" + ("" if p["ack"] else " (no ack)")
        if self.op in ("ack", "requeue"):
            return f"{self.op} {p['count']} {p['from']}"
        if self.op == "target":
            d = p["duration"]
            return f"target {'infinity' if d is None else d}"
        if self.op == "rates":
            return "rates " + ",".join(f"{p[k]:g}" for k in _PARAMS["rates"])
        if self.op == "store":
            return f"store {p['store']} takes {p['count']}"
        if self.op == "bump":
            return f"bump from {p['store']}"
        return self.op


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    config: Config
    steps: tuple[ScenarioStep, ...]
    source: str
    #: the RabbitMQ settings the file sets, by RabbitMQ name (for the broker's app env)
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def profile(self) -> PagingProfile:
        return self.config.profile

    def broker_problem(self) -> str | None:
        """Why this scenario cannot run on a real 3.10.8 broker, or ``None``."""
        if self.profile.version != "3.10.8":
            return f"profile {self.profile.version} (the broker is 3.10.8)"
        for i, step in enumerate(self.steps, 1):
            if step.op in MODEL_ONLY_OPS or not step.settle:
                return f"step {i} ({step.op}) controls msg_store timing, which a broker cannot"
            if step.op == "publish" and step.params["props_bytes"] != paging.DEFAULT_PROPS_BYTES:
                return f"step {i}: props_bytes must be {paging.DEFAULT_PROPS_BYTES} on a broker"
        return None


def scenario_dir() -> Path:
    return Path(str(resources.files("creditflow.spec").joinpath("paging")))


def preset_names() -> list[str]:
    return sorted(p.stem for p in scenario_dir().glob("*.json"))


def _fail(source: str, message: str) -> ScenarioError:
    return ScenarioError(f"{source}: {message}")


def _check_type(source: str, where: str, value: Any, kind: type | tuple[type, ...]) -> None:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if kinds == (bool,):
        try:
            boolean(value)  # IN-BOOL
        except ValueError as exc:
            raise _fail(source, f"{where} {exc}") from None
        return
    if isinstance(value, bool) and bool not in kinds:
        raise _fail(source, f"{where} must be {' or '.join(k.__name__ for k in kinds)}")
    if not isinstance(value, kinds):
        raise _fail(
            source, f"{where} must be {' or '.join(k.__name__ for k in kinds)}, got {value!r}"
        )


def _parse_step(source: str, index: int, raw: Any) -> ScenarioStep:
    where = f"step {index}"
    if not isinstance(raw, dict) or "op" not in raw:
        raise _fail(source, f"{where} must be an object with an 'op'")
    op = raw["op"]
    if not isinstance(op, str) or op not in _PARAMS:  # a list or object is no op name
        raise _fail(source, f"{where}: unknown op {op!r} (known: {', '.join(_PARAMS)})")
    spec = _PARAMS[op]
    unknown = sorted(set(raw) - set(spec) - {"op", "settle", "note"})
    if unknown:
        raise _fail(source, f"{where} ({op}): unknown field(s) {', '.join(unknown)}")
    params: dict[str, Any] = {}
    for name, (kind, default) in spec.items():
        if name in raw:
            _check_type(source, f"{where} ({op}) {name}", raw[name], kind)
            params[name] = raw[name]
        elif op == "publish" and name in ("size", "sizes"):
            params[name] = None  # exactly one of the two: _check_sizes
        elif default is None and not (op == "target" and name == "duration"):
            raise _fail(source, f"{where} ({op}): missing {name!r}")
        else:
            params[name] = default
    if op == "publish":
        _check_sizes(source, where, params)
    for name in ("count", "size", "props_bytes"):
        if params.get(name) is not None and params[name] < (1 if name == "count" else 0):
            raise _fail(source, f"{where} ({op}): {name} must be >= {1 if name == 'count' else 0}")
        top = MAX_STEP_COUNT if name == "count" else MAX_BYTES
        if params.get(name) is not None and params[name] > top:
            raise _fail(
                source,
                f"{where} ({op}): {name} {params[name]} exceeds the maximum {top} (IN-LIMITS)",
            )
    if op in ("ack", "requeue") and params["from"] not in ("oldest", "newest"):
        raise _fail(source, f"{where} ({op}): from must be 'oldest' or 'newest'")
    if op in ("store", "bump") and params["store"] not in STORES:
        raise _fail(source, f"{where} ({op}): store must be 'persistent' or 'transient'")
    if op == "target":
        d = params["duration"]
        if d is None or d == "infinity":
            params["duration"] = None
        elif isinstance(d, str) or not 0 <= d <= MAX_RATE:
            raise _fail(
                source,
                f"{where} (target): duration must be a number in "
                f"[0, {MAX_RATE:g}] or 'infinity' (IN-FINITE, IN-LIMITS)",
            )
    if op == "rates":
        for name in spec:
            if not 0 <= params[name] <= MAX_RATE:  # also false for NaN (IN-FINITE)
                raise _fail(
                    source,
                    f"{where} (rates): {name} must be a number in "
                    f"[0, {MAX_RATE:g}] (IN-FINITE, IN-LIMITS)",
                )
            params[name] = float(params[name])
    settle = raw.get("settle", op not in MODEL_ONLY_OPS)
    _check_type(source, f"{where}: settle", settle, bool)
    return ScenarioStep(op, params, settle)


def _check_sizes(source: str, where: str, params: dict[str, Any]) -> None:
    """PG-SIZES: a publish step gives ``size`` or a non-empty ``sizes`` list of sizes
    (integers >= 0), not both."""
    size, sizes = params["size"], params["sizes"]
    if (size is None) == (sizes is None):
        raise _fail(source, f"{where} (publish): give exactly one of 'size' or 'sizes'")
    if sizes is not None and (
        not sizes
        or len(sizes) > MAX_STEP_COUNT
        or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_BYTES for n in sizes
        )
    ):
        raise _fail(
            source,
            f"{where} (publish): sizes must be a non-empty list of "
            f"integers in [0, {MAX_BYTES}] (IN-LIMITS), got {str(sizes)[:60]}",
        )


def _parse_settings(source: str, profile: PagingProfile, raw: Any) -> tuple[PagingProfile, dict]:
    if not isinstance(raw, dict):
        raise _fail(source, "settings must be an object")
    overrides: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in RABBIT_SETTING_NAMES:
            raise _fail(
                source,
                f"unknown setting {name!r} (known: {', '.join(sorted(RABBIT_SETTING_NAMES))})",
            )
        if name == "msg_store_credit_disc_bound":
            if (
                not isinstance(value, list)
                or len(value) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
                or not (1 <= value[0] <= MAX_SETTING and 1 <= value[1] <= MAX_SETTING)
            ):
                raise _fail(source, f"{name} must be [initial, more_after], both >= 1")
            overrides["store_credit"] = CreditSpec(*value)
        else:
            if (
                not isinstance(value, int)
                or isinstance(value, bool)
                or not 1 <= value <= MAX_SETTING
            ):
                raise _fail(source, f"{name} must be an integer in [1, {MAX_SETTING}] (IN-LIMITS)")
            overrides[RABBIT_SETTING_NAMES[name]] = value
    return profile.with_settings(**overrides), dict(raw)


def parse_scenario(data: Any, source: str) -> Scenario:
    """Validate a decoded scenario document (``ScenarioError`` naming ``source``)."""
    if not isinstance(data, dict):
        raise _fail(source, "a scenario must be a JSON object")
    unknown = sorted(set(data) - {"name", "description", "profile", "settings", "queue", "steps"})
    if unknown:
        raise _fail(source, f"unknown top-level field(s) {', '.join(unknown)}")
    try:
        profile = profile_named(data.get("profile", DEFAULT_PROFILE.version))
    except ValueError as exc:
        raise _fail(source, str(exc)) from None
    profile, settings = _parse_settings(source, profile, data.get("settings", {}))
    queue = data.get("queue", {})
    if not isinstance(queue, dict) or set(queue) - {"durable"}:
        raise _fail(source, "queue must be an object with at most 'durable'")
    durable = queue.get("durable", True)
    _check_type(source, "queue.durable", durable, bool)
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise _fail(source, "steps must be a non-empty list")
    if len(raw_steps) > MAX_STEPS:
        raise _fail(source, f"more than {MAX_STEPS} steps (IN-LIMITS)")
    steps = tuple(_parse_step(source, i, raw) for i, raw in enumerate(raw_steps, 1))
    name = data.get("name", Path(source).stem)
    if not isinstance(name, str) or not name or len(name) > MAX_NAME_LENGTH:
        raise _fail(
            source, f"name must be a non-empty string of at most {MAX_NAME_LENGTH} characters"
        )
    description = data.get("description", "")
    if not isinstance(description, str):
        raise _fail(source, "description must be a string")
    return Scenario(
        name=name,
        description=description,
        config=Config(profile=profile, durable=durable),
        steps=steps,
        source=source,
        settings=settings,
    )


def load_scenario(path_or_name: str | Path) -> Scenario:
    """Load a scenario file, or a preset by name."""
    path = Path(path_or_name)
    if not path.exists() and not path.suffix and str(path_or_name) in preset_names():
        path = scenario_dir() / f"{path_or_name}.json"
    source = str(path_or_name)
    if not path.exists():
        raise _fail(source, f"no such file or preset (presets: {', '.join(preset_names())})")
    try:
        data = load_json(path, source)
    except InputError as exc:
        raise ScenarioError(str(exc)) from None
    return parse_scenario(data, source)


# -- running through the model -----------------------------------------------------------


@dataclass
class StepResult:
    """A step's effect in the model: the state after its own transition (``after``)
    and after settling (``settled``; the same state when the step does not settle)."""

    index: int
    step: ScenarioStep
    after: PagingState
    settled: PagingState
    reports: list[Report]
    #: seq ids delivered by a fetch step, in order
    delivered: list[int] = field(default_factory=list)


@dataclass
class ScenarioRun:
    scenario: Scenario
    initial: PagingState
    results: list[StepResult]


class Deliveries:
    """The client's outstanding deliveries (awaiting ack), in delivery order."""

    def __init__(self) -> None:
        self.outstanding: list[Any] = []

    def pick(self, count: int, which: str) -> list[Any]:
        chosen = self.outstanding[:count] if which == "oldest" else self.outstanding[-count:][::-1]
        for tag in chosen:
            self.outstanding.remove(tag)
        return chosen


def apply_step(
    cfg: Config, st: PagingState, step: ScenarioStep, deliveries: Deliveries
) -> tuple[PagingState, list[Report], list[int]]:
    """Apply one scenario step's own transition(s) (no settling)."""
    p = step.params
    reports: list[Report] = []
    delivered: list[int] = []
    if step.op == "publish" and p.get("sizes") is not None:
        done = paging.basic_publish_sizes(  # PG-SIZES: one message per size, in order
            cfg, st, step.message_sizes(), p["persistent"], p["props_bytes"]
        )
        st, reports = done.state, list(done.reports)
    elif step.op == "publish":
        done = paging.basic_publish(
            cfg, st, p["size"], p["persistent"], p["props_bytes"], count=p["count"]
        )
        st, reports = done.state, list(done.reports)
    elif step.op == "fetch":
        done = paging.basic_get(cfg, st, p["ack"], count=p["count"])
        st, reports, delivered = done.state, list(done.reports), list(done.delivered)
        if p["ack"]:
            deliveries.outstanding.extend(delivered)
    elif step.op in ("ack", "requeue"):
        fn = paging.basic_ack if step.op == "ack" else paging.basic_reject
        done = fn(cfg, st, deliveries.pick(p["count"], p["from"]))
        st, reports = done.state, list(done.reports)
    elif step.op == "target":
        s = paging.set_ram_duration_target(cfg, st, p["duration"])
        st, reports = s.state, [s.report]
    elif step.op == "rates":
        rates = Rates(p["ingress"], p["egress"], p["ack_ingress"], p["ack_egress"])
        s = paging.set_rates(cfg, st, rates)
        st, reports = s.state, [s.report]
    elif step.op == "store":
        s = paging.store_take(cfg, st, STORES[p["store"]], p["count"])
        st, reports = s.state, [s.report]
    elif step.op == "bump":
        s = paging.handle_bump_credit(cfg, st, STORES[p["store"]])
        st, reports = s.state, [s.report]
    elif step.op == "self_bump":
        s = paging.handle_bump_reduce_memory_use(cfg, st)
        st, reports = s.state, [s.report]
    elif step.op == "settle":
        pass
    else:  # pragma: no cover - parse_scenario rejects unknown ops
        raise ValueError(step.op)
    return st, reports, delivered


def run_scenario(scenario: Scenario, rates_before: dict[int, Rates] | None = None) -> ScenarioRun:
    """Run every step through the model (PG-SCENARIO). ``rates_before[i]`` (1-based),
    when given, sets the rates before step ``i`` (a broker's measured rates)."""
    return ScenarioRun(scenario, initial_state(), list(iter_scenario(scenario, rates_before)))


def iter_scenario(
    scenario: Scenario, rates_before: dict[int, Rates] | None = None
) -> Iterator[StepResult]:
    """The steps' results one at a time, keeping none (PG-STREAM): what
    ``paging --json`` streams."""
    cfg = scenario.config
    st = initial_state()
    deliveries = Deliveries()
    for i, step in enumerate(scenario.steps, 1):
        if rates_before and i in rates_before and step.op != "rates":
            st = paging.set_rates(cfg, st, rates_before[i]).state
        after, reports, delivered = apply_step(cfg, st, step, deliveries)
        settled = after
        if step.settle:
            s = paging.settle(cfg, after)
            settled = s.state
            reports.append(s.report)
        yield StepResult(i, step, after, settled, reports, delivered)
        st = settled
