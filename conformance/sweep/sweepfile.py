"""Reading a sweep file (SW-FILE): TOML, validated completely before anything runs.

Every problem is a :class:`SweepFileError` whose message is one line naming the file,
the place in it and the problem. A bare name such as ``example`` is a sweep file
shipped in ``spec/sweeps/``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from creditflow.conformance.inputs.plugins import CHECKER_GROUP, PluginError, check_plugin
from creditflow.conformance.inputs.reading import InputError, parse_toml, read_text
from creditflow.conformance.inputs.schemas import boolean
from creditflow.conformance.sweep.amqp import AMQP_CHECKER
from creditflow.conformance.sweep.checkers import (
    BUILTIN,
    CheckerError,
    is_registered,
    resolve_checker,
)
from creditflow.conformance.sweep.families import FAMILY_KINDS, FamilyKind, ParamError
from creditflow.model.network.graph import MAX_CREDIT, MAX_PUBLISHES
from creditflow.spec import spec_dir

VARIANTS = ("faithful", "all-check")
DEFAULT_MAX_STATES = 200_000
DEFAULT_MAX_SECONDS = 60.0

TOP_KEYS = frozenset({"name", "seed", "description", "budget", "settings", "family"})
BUDGET_KEYS = frozenset({"max_states", "max_seconds"})
SETTING_KEYS = frozenset({"credits", "variants", "publishes", "checkers"})
CREDIT_KEYS = frozenset({"specs", "grid", "random"})


class SweepFileError(InputError):
    """A sweep file that cannot be used; ``str()`` is one line naming the file."""


@dataclass(frozen=True)
class RandomCredits:
    """SW-CREDITS: ``count`` draws of ``I`` from ``initial`` and ``M`` from ``more_after``
    (capped at ``I``); one spec for every edge, or one per edge when ``per_edge``."""

    count: int
    initial: tuple[int, int]
    more_after: tuple[int, int]
    per_edge: bool = False


@dataclass(frozen=True)
class CreditChoices:
    """SW-CREDITS: explicit specs, plus a grid (every ``I`` x every ``M``), plus random draws."""

    specs: tuple[tuple[int, int], ...] = ()
    random: RandomCredits | None = None


@dataclass(frozen=True)
class Settings:
    credits: CreditChoices
    variants: tuple[str, ...]
    publishes: tuple[int, ...]
    checkers: tuple[str, ...]


@dataclass(frozen=True)
class Budget:
    """SW-BUDGET: per case, a state budget (EXP-BUDGET) and a wall-clock budget."""

    max_states: int = DEFAULT_MAX_STATES
    max_seconds: float = DEFAULT_MAX_SECONDS


@dataclass(frozen=True)
class FamilySpec:
    name: str
    kind: FamilyKind
    #: each parameter's values to sweep over, in the kind's parameter order
    choices: tuple[tuple[str, tuple[Any, ...]], ...]
    instances: int
    settings: Settings


@dataclass(frozen=True)
class SweepSpec:
    name: str
    seed: int
    description: str
    budget: Budget
    families: tuple[FamilySpec, ...]
    path: str
    text: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]


DEFAULT_SETTINGS = Settings(
    credits=CreditChoices(specs=((1, 1), (2, 1), (3, 1))),
    variants=("faithful",),
    publishes=(3,),
    checkers=("explore",),
)


def sweeps_dir() -> Path:
    return spec_dir() / "sweeps"


def shipped_sweep_names() -> list[str]:
    return sorted(p.stem for p in sweeps_dir().glob("*.toml"))


def load_sweep(name_or_path: str | Path, plugins: Iterable[str] = ()) -> SweepSpec:
    """A sweep file path, or the name of a shipped sweep file when no such file exists.
    ``plugins``: the plug-ins the command line approves (IN-PLUGIN)."""
    path = Path(name_or_path)
    if not path.is_file():
        if path.suffix or "/" in str(name_or_path):
            raise SweepFileError(f"{name_or_path}: no such file")
        shipped = sweeps_dir() / f"{name_or_path}.toml"
        if not shipped.is_file():
            raise SweepFileError(
                f"{name_or_path}: no such sweep file or shipped sweep "
                f"(shipped: {', '.join(shipped_sweep_names())})"
            )
        path = shipped
    if path.suffix.lower() in (".yaml", ".yml"):
        raise SweepFileError(f"{path}: sweep files are TOML (write it as {path.stem}.toml)")
    try:
        text = read_text(path)
    except InputError as exc:
        raise SweepFileError(str(exc)) from None
    return parse_sweep(text, str(path), default_name=path.stem, plugins=plugins)


def parse_sweep(
    text: str, where: str = "sweep", default_name: str = "sweep", plugins: Iterable[str] = ()
) -> SweepSpec:
    """SW-FILE: parse (IN-DEPTH, IN-INT, IN-FINITE) and validate a sweep file's text;
    every value checked against what the Parquet row will store (SW-ROW-TYPES) and every
    plug-in against the command line's approval (IN-PLUGIN)."""
    try:
        data = parse_toml(text, where)
    except InputError as exc:
        raise SweepFileError(str(exc)) from None
    token = _approved.set(tuple(plugins))
    try:
        return _sweep(data, text, where, default_name)
    except _Invalid as exc:
        raise SweepFileError(f"{where}: {exc}") from None
    finally:
        _approved.reset(token)


#: IN-PLUGIN: the plug-ins the current parse may load (set by :func:`parse_sweep`).
_approved: ContextVar[tuple[str, ...]] = ContextVar("approved_plugins", default=())


class _Invalid(ValueError):
    pass


def _unknown(table: Mapping[str, Any], allowed: frozenset[str], what: str) -> None:
    for key in table:
        if key not in allowed:
            raise _Invalid(f"{what}: unknown key {key!r} (allowed: {', '.join(sorted(allowed))})")


#: SW-ROW-TYPES / IN-LIMITS: the largest value of each integer a sweep file sets. Each
#: fits the Parquet column it lands in (credits and publishes: int32; max_states, seed:
#: int64), so a file that validates cannot fail at commit.
MAX_SWEEP_CREDIT = MAX_CREDIT
MAX_SWEEP_PUBLISHES = MAX_PUBLISHES
MAX_INSTANCES = 100_000
MAX_RANDOM_COUNT = 100_000
MAX_BUDGET_STATES = 10**12
MAX_BUDGET_SECONDS = 86_400.0
MAX_SEED = 2**63 - 1


def _int(value: Any, what: str, minimum: int = 0, maximum: int = MAX_SWEEP_CREDIT) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Invalid(f"{what} must be an integer, got {value!r}")
    if value < minimum:
        raise _Invalid(f"{what} must be >= {minimum}, got {value}")
    if value > maximum:
        raise _Invalid(f"{what} must be <= {maximum}, got {value} (SW-ROW-TYPES)")
    return value


def _ints(
    value: Any, what: str, minimum: int = 0, maximum: int = MAX_SWEEP_CREDIT
) -> tuple[int, ...]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise _Invalid(f"{what} must not be empty")
    return tuple(_int(v, what, minimum, maximum) for v in values)


def _range(value: Any, what: str) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise _Invalid(f"{what} must be [low, high], got {value!r}")
    lo, hi = _int(value[0], what), _int(value[1], what)
    if lo > hi:
        raise _Invalid(f"{what}: low {lo} exceeds high {hi}")
    return lo, hi


def _credits(value: Any, what: str) -> CreditChoices:
    if not isinstance(value, dict):
        raise _Invalid(f"{what} must be a table with specs, grid and/or random")
    _unknown(value, CREDIT_KEYS, what)
    if not value:
        raise _Invalid(f"{what} needs specs, grid or random")
    specs: list[tuple[int, int]] = []
    for i, spec in enumerate(value.get("specs", [])):
        if not isinstance(spec, list) or len(spec) != 2:
            raise _Invalid(f"{what}.specs[{i}] must be [InitialCredit, MoreCreditAfter]")
        specs.append((_int(spec[0], f"{what}.specs[{i}]"), _int(spec[1], f"{what}.specs[{i}]")))
    if "grid" in value:
        grid = value["grid"]
        if not isinstance(grid, dict):
            raise _Invalid(f"{what}.grid must be a table with initial and more_after")
        _unknown(grid, frozenset({"initial", "more_after"}), f"{what}.grid")
        if "initial" not in grid or "more_after" not in grid:
            raise _Invalid(f"{what}.grid needs initial and more_after")
        for i in _ints(grid["initial"], f"{what}.grid.initial"):
            for m in _ints(grid["more_after"], f"{what}.grid.more_after"):
                specs.append((i, m))
    random_credits = None
    if "random" in value:
        r = value["random"]
        if not isinstance(r, dict):
            raise _Invalid(f"{what}.random must be a table")
        _unknown(r, frozenset({"count", "initial", "more_after", "per_edge"}), f"{what}.random")
        for key in ("count", "initial", "more_after"):
            if key not in r:
                raise _Invalid(f"{what}.random needs {key}")
        try:
            per_edge = boolean(r.get("per_edge", False))  # IN-BOOL
        except ValueError as exc:
            raise _Invalid(f"{what}.random.per_edge {exc}") from None
        random_credits = RandomCredits(
            count=_int(r["count"], f"{what}.random.count", 1, MAX_RANDOM_COUNT),
            initial=_range(r["initial"], f"{what}.random.initial"),
            more_after=_range(r["more_after"], f"{what}.random.more_after"),
            per_edge=per_edge,
        )
    if not specs and random_credits is None:
        raise _Invalid(f"{what} gives no credit spec")
    return CreditChoices(specs=tuple(dict.fromkeys(specs)), random=random_credits)


def _strings(value: Any, what: str, allowed: tuple[str, ...] | None = None) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, str) and v for v in values):
        raise _Invalid(f"{what} must be a non-empty string or list of strings")
    if allowed is not None:
        for v in values:
            if v not in allowed:
                raise _Invalid(f"{what}: unknown value {v!r} (allowed: {', '.join(allowed)})")
    return tuple(dict.fromkeys(values))


def _settings(table: Mapping[str, Any], base: Settings, what: str) -> Settings:

    credits = _credits(table["credits"], f"{what}.credits") if "credits" in table else base.credits
    variants = (
        _strings(table["variants"], f"{what}.variants", VARIANTS)
        if "variants" in table
        else base.variants
    )
    publishes = (
        tuple(dict.fromkeys(_ints(table["publishes"], f"{what}.publishes", 0, MAX_SWEEP_PUBLISHES)))
        if "publishes" in table
        else base.publishes
    )
    checkers = (
        _strings(table["checkers"], f"{what}.checkers") if "checkers" in table else (base.checkers)
    )
    for name in checkers:
        if name not in BUILTIN and not is_registered(name):
            try:
                check_plugin(name, _approved.get(), CHECKER_GROUP, "checker")
            except PluginError as exc:
                raise _Invalid(f"{what}.checkers: {exc}") from None
        try:
            resolve_checker(name)
        except CheckerError as exc:
            raise _Invalid(f"{what}.checkers: {exc}") from None
    return Settings(credits, variants, publishes, checkers)


def _family(table: Any, index: int, settings: Settings, names: set[str]) -> FamilySpec:
    what = f"family[{index}]"
    if not isinstance(table, dict):
        raise _Invalid(f"{what} must be a table ([[family]])")
    kind_name = table.get("kind")
    if not isinstance(kind_name, str) or kind_name not in FAMILY_KINDS:
        raise _Invalid(f"{what}: kind must be one of {', '.join(FAMILY_KINDS)}, got {kind_name!r}")
    kind = FAMILY_KINDS[kind_name]
    name = table.get("name", kind_name)
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_." for c in name):
        raise _Invalid(f"{what}: name must be letters, digits, '-', '_' or '.', got {name!r}")
    if name in names:
        raise _Invalid(f"{what}: a family named {name!r} already exists (give each a name)")
    names.add(name)
    what = f"family[{index}] ({name})"
    param_names = {p.name for p in kind.params}
    _unknown(table, frozenset({"kind", "name", "instances"}) | SETTING_KEYS | param_names, what)
    choices = []
    for p in kind.params:
        raw = table.get(p.name, p.default)
        if p.list_valued:
            values = raw if isinstance(raw, list) and raw and isinstance(raw[0], list) else [raw]
        else:
            values = raw if isinstance(raw, list) else [raw]
        if not values:
            raise _Invalid(f"{what}.{p.name} must not be empty")
        checked = []
        for v in values:
            try:
                checked.append(p.check(v))
            except ParamError as exc:
                raise _Invalid(f"{what}.{p.name} {exc}") from None
        choices.append((p.name, tuple(dict.fromkeys(checked))))
    instances = _int(table.get("instances", 1), f"{what}.instances", 1, MAX_INSTANCES)
    family_settings = _settings(table, settings, what)
    if kind.model == "amqp":
        family_settings = _amqp_settings(table, family_settings, what)
    elif AMQP_CHECKER in family_settings.checkers:
        raise _Invalid(f"{what}.checkers: {AMQP_CHECKER!r} checks AMQP families only (SW-AMQP)")
    spec = FamilySpec(name, kind, tuple(choices), instances, family_settings)
    for point in parameter_points(spec):
        try:
            kind.check_point(point)
        except ParamError as exc:
            raise _Invalid(f"{what}: {exc}") from None
    return spec


def _amqp_settings(table: Mapping[str, Any], settings: Settings, what: str) -> Settings:
    """SW-AMQP: an AMQP family's credits and window are its parameters, not the NET
    ``credits`` and ``variants`` (refused in its table, not inherited); its checker is
    ``amqp`` unless its table names checkers, which must then be ``amqp``."""
    for key in ("credits", "variants"):
        if key in table:
            raise _Invalid(
                f"{what}.{key}: not used by kind amqp (give credit_policy, credit_window, "
                "session_policy, session_window, … instead; SW-AMQP)"
            )
    checkers = settings.checkers if "checkers" in table else (AMQP_CHECKER,)
    for name in checkers:
        if name != AMQP_CHECKER:
            raise _Invalid(
                f"{what}.checkers: kind amqp is checked by {AMQP_CHECKER!r} only, got {name!r}"
            )
    return Settings(CreditChoices(), ("amqp",), settings.publishes, checkers)


def parameter_points(family: FamilySpec) -> list[dict[str, Any]]:
    """Every combination of the family's parameter values, in file order."""
    points: list[dict[str, Any]] = [{}]
    for name, values in family.choices:
        points = [{**p, name: v} for p in points for v in values]
    return points


def _sweep(data: Mapping[str, Any], text: str, where: str, default_name: str) -> SweepSpec:
    _unknown(data, TOP_KEYS, "top level")
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name:
        raise _Invalid(f"name must be a non-empty string, got {name!r}")
    seed = _int(data.get("seed", 0), "seed", 0, MAX_SEED)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise _Invalid("description must be a string")
    budget_table = data.get("budget", {})
    if not isinstance(budget_table, dict):
        raise _Invalid("budget must be a table")
    _unknown(budget_table, BUDGET_KEYS, "budget")
    max_seconds = budget_table.get("max_seconds", DEFAULT_MAX_SECONDS)
    if (
        isinstance(max_seconds, bool)
        or not isinstance(max_seconds, (int, float))
        or not (0 < max_seconds <= MAX_BUDGET_SECONDS)
    ):
        raise _Invalid(
            f"budget.max_seconds must be a number in (0, {MAX_BUDGET_SECONDS:g}], "
            f"got {max_seconds!r}"
        )
    budget = Budget(
        max_states=_int(
            budget_table.get("max_states", DEFAULT_MAX_STATES),
            "budget.max_states",
            1,
            MAX_BUDGET_STATES,
        ),
        max_seconds=float(max_seconds),
    )
    settings_table = data.get("settings", {})
    if not isinstance(settings_table, dict):
        raise _Invalid("settings must be a table")
    _unknown(settings_table, SETTING_KEYS, "settings")
    settings = _settings(settings_table, DEFAULT_SETTINGS, "settings")
    families_raw = data.get("family")
    if not isinstance(families_raw, list) or not families_raw:
        raise _Invalid("no families: add at least one [[family]] table with a kind")
    names: set[str] = set()
    families = tuple(_family(t, i, settings, names) for i, t in enumerate(families_raw))
    return SweepSpec(name, seed, description, budget, families, where, text)
