"""The shared mechanisms, attacked for every family of the registry (FAM-REGISTRY,
FAM-OPTIONS, FAM-DEADLINE): each family's parts load and give a transition system the
one explorer searches; every option of ``check``/``prove``/``synth`` a routed family does
not take is refused in one line with exit 2; a tiny ``--timeout`` makes ``prove`` and
``synth`` stop with exit 4 (the ``--json`` document printed), never "proved"; the
credit_flow family's options table is the NET commands' own parameters."""

from __future__ import annotations

import json
import time

import click
import pytest
from click.testing import CliRunner

from creditflow.conformance.cli.app import check
from creditflow.conformance.cli.common import UNIVERSAL_OPTIONS
from creditflow.conformance.cli.prove import prove, synth
from creditflow.conformance.cli.root import main
from creditflow.conformance.explore.explorer import explore_first, with_deadline
from creditflow.conformance.family import registry
from creditflow.conformance.family.interface import Family

FAMILIES = list(registry.families())
COMMANDS: dict[str, click.Command] = {"check": check, "prove": prove, "synth": synth}
#: the families ``check``/``prove``/``synth`` route to by their reader's ``find``
ROUTED = [f for f in FAMILIES if hasattr(f.reader.load(), "find")]


def _ids(families: list[Family]) -> list[str]:
    return [f.name for f in families]


def test_the_registry_holds_every_builtin_family():
    assert set(registry.names()) >= {"amqp", "credit_flow", "paging", "accounts", "alarms"}


@pytest.mark.parametrize("family", FAMILIES, ids=_ids(FAMILIES))
def test_every_family_has_a_reader_and_a_checking_part(family):
    """FAM-INTERFACE, FAM-READER, FAM-CHECKING: the required parts load and offer their
    protocol's members (a reader names the family of its documents and its presets)."""
    reader, checking = family.reader.load(), family.checking.load()
    assert reader.document_family == family.name
    assert list(reader.preset_names())
    for member in ("system", "symmetry", "supply"):
        assert callable(getattr(checking, member))
    for command, taken in family.options.items():
        assert command in COMMANDS or command == "show"
        assert all(isinstance(o, str) for o in taken)


def test_the_net_and_amqp_systems_are_searched_by_the_one_explorer():
    """FAM-CHECKING: a preset of each family that ``check`` routes, explored."""
    net = registry.get("credit_flow")
    graph = net.reader.load().read("cycle2", {})
    found = explore_first(net.checking.load().system(graph, {}), max_states=10_000)
    assert found.index is not None  # cycle2 deadlocks (PROP-NO-DEADLOCK)
    amqp = registry.get("amqp")
    inp = amqp.reader.load().read("ring-one-held", {})
    found = explore_first(amqp.checking.load().system(inp, {}), max_states=10_000)
    assert found.index is not None and found.property_ids == ("PROP-NO-DEADLOCK",)


def test_credit_flows_options_are_the_net_commands_parameters():
    """FAM-OPTIONS: the default family takes every option the commands declare (but
    synth's --minimise, AMQP's), so its table cannot drift from the commands."""
    net = registry.get("credit_flow")
    for name, command in COMMANDS.items():
        declared = {p.name for p in command.params if p.name} - UNIVERSAL_OPTIONS - {"minimise"}
        assert declared == set(net.options[name]), name


def _value(param: click.Parameter) -> list[str]:
    """A command-line spelling of ``param`` with a value click accepts."""
    opt = param.opts[0]
    if isinstance(param, click.Option) and param.is_flag:
        return [param.secondary_opts[0]] if param.secondary_opts else [opt]
    if param.nargs == 3:
        return [opt, "a", "b", "3,1"]
    if param.nargs == 2:
        return [opt, "a", "3,1"]
    if isinstance(param.type, click.Choice):
        choices = list(param.type.choices)
        return [opt, str(choices[-1])]
    samples = {"credit": "3,1", "edge_credit": "a->b=3,1", "role_credit": "msg_store=3,1"}
    if param.name in samples:
        return [opt, samples[param.name]]
    return [opt, "2"]


def _not_taken(family: Family, command: str) -> list[click.Parameter]:
    taken = family.options.get(command, frozenset())
    return [
        p
        for p in COMMANDS[command].params
        if isinstance(p, click.Option)
        and p.name not in taken
        and p.name not in UNIVERSAL_OPTIONS
        and p.name != "config"  # a path that must exist: taken by every routed family
    ]


CASES = [(f, c, p) for f in ROUTED for c in COMMANDS for p in _not_taken(f, c)]


@pytest.mark.parametrize(
    ("family", "command", "param"),
    CASES,
    ids=[f"{f.name}-{c}-{p.name}" for f, c, p in CASES],
)
def test_an_option_the_family_does_not_take_is_refused(family, command, param):
    """FAM-OPTIONS: one line, exit 2, naming the option and the family — never ignored."""
    preset = family.reader.load().preset_names()[0]
    result = CliRunner().invoke(main, [command, preset, *_value(param)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert "(FAM-OPTIONS)" in result.output and family.name in result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1


PROVING = [f for f in ROUTED if f.every_supply is not None]


@pytest.mark.parametrize("family", PROVING, ids=_ids(PROVING))
def test_prove_stops_at_a_tiny_timeout_with_exit_4_and_its_json(family):
    """FAM-DEADLINE: ``prove --timeout 0.01`` stops and says so (exit 4), never proved."""
    preset = (
        "rabbitmq4-consume" if family.name == "amqp" else family.reader.load().preset_names()[0]
    )
    result = CliRunner().invoke(main, ["prove", preset, "--timeout", "0.01", "--json"])
    assert result.exit_code == 4, result.output
    doc = json.loads(result.output.strip().splitlines()[-1])
    assert doc["exit_code"] == 4 and "not established" in doc["claim"]


SYNTHESISING = [f for f in ROUTED if f.synthesis is not None]


@pytest.mark.parametrize("family", SYNTHESISING, ids=_ids(SYNTHESISING))
def test_synth_stops_at_a_tiny_timeout_with_exit_4_and_its_json(family):
    """FAM-DEADLINE: ``synth --timeout 0.01`` on a big range stops (exit 4) with its
    document, however large --max-credit is."""
    preset = (
        "rabbitmq4-consume" if family.name == "amqp" else family.reader.load().preset_names()[0]
    )
    args = ["synth", preset, "--timeout", "0.01", "--max-credit", str(10**17), "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 4, result.output
    doc = json.loads(result.output.strip().splitlines()[-1])
    assert doc["status"] == "unknown" and doc["exit_code"] == 4


@pytest.mark.parametrize("family", PROVING, ids=_ids(PROVING))
def test_check_no_prove_explores_and_does_not_prove(family):
    """``check --no-prove``: the exploration alone; every supply is then not
    established (exit 4), and no proof is in the document."""
    preset = (
        "rabbitmq4-publish" if family.name == "amqp" else family.reader.load().preset_names()[0]
    )
    result = CliRunner().invoke(main, ["check", preset, "--no-prove", "--json"])
    doc = json.loads(result.output.strip().splitlines()[-1])
    assert result.exit_code == 4 and doc.get("proof") is None
    proved = CliRunner().invoke(main, ["check", preset, "--json"])
    assert json.loads(proved.output.strip().splitlines()[-1]).get("proof") is not None


class _WideSystem:
    """A state with 20,000 successors, each with one more: one expansion stores them all."""

    process_names = ("p",)
    property_ids = ()
    deadlock_property = "PROP-NO-DEADLOCK"

    def initial(self) -> int:
        return -1

    def successors(self, s: int):
        return (
            [(0, k) for k in range(20_000)] if s < 0 else ([(0, s + 20_000)] if s < 60_000 else [])
        )

    def describe(self, action: int) -> str:
        return "step"

    def violations(self, s: int) -> tuple[str, ...]:
        return ()

    def blocked_mask(self, s: int) -> int:
        return 0

    def pending_work(self, s: int) -> bool:
        return False


def test_a_deadline_is_looked_at_after_one_wide_expansion():
    """FAM-DEADLINE (PROGRESS_MASK, PROGRESS_STATES): a state whose one expansion stores
    thousands of states is followed by a look at the deadline, not 64 expansions later
    (an HTTP/2 last frame of any size: ``prove upload --timeout 0.3`` ran 1.5–4.6 s)."""
    from creditflow.conformance.explore.explorer import DeadlinePassed, explore

    calls: list[tuple[int, int]] = []
    explore(_WideSystem(), progress=lambda found, done: calls.append((found, done)))
    assert calls[0] == (20_001, 1)  # after the first, wide expansion
    with pytest.raises(DeadlinePassed):
        explore(_WideSystem(), progress=with_deadline(None, time.monotonic() - 1))
