"""START-LAZY: what starting the command line and an adapter subprocess imports.

Structural, not timed (benchmarks/startup_bench.py times it): each check runs in a fresh
interpreter and looks at ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.cli.root import COMMANDS, LazyPolicyGroup, presets
from creditflow.conformance.inputs.amqp_topologies import amqp_preset_names
from creditflow.conformance.inputs.graphs import load_graph, preset_names

HEAVY = ("pydantic", "rich", "networkx", "numpy", "z3", "hypothesis", "pyspark", "pika")


def loaded_after(code: str) -> list[str]:
    """The heavy libraries and creditflow modules a fresh interpreter holds after ``code``."""
    probe = (
        "import sys, json, contextlib, io\n"
        f"{code}\n"
        "print(json.dumps(sorted(m for m in sys.modules"
        f" if m.split('.')[0] in {HEAVY!r} or m.startswith('creditflow.'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return json.loads(out.splitlines()[-1])


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in HEAVY]


RUN_CLI = (
    "from creditflow.conformance.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    main({args!r}, standalone_mode=False)"
)


@pytest.mark.parametrize("args", [["--help"], ["presets"]])
def test_help_and_presets_load_no_command_module_nor_heavy_library(args):
    modules = loaded_after(RUN_CLI.format(args=args))
    assert heavy(modules) == []
    commands = {m for m in modules if m.startswith("creditflow.conformance.cli.")}
    assert commands == {
        "creditflow.conformance.cli.root",
        "creditflow.conformance.cli.common",
    }


def test_a_command_loads_its_own_module_only():
    modules = loaded_after(RUN_CLI.format(args=["adapters"]))
    assert "creditflow.conformance.cli.conform" in modules
    assert "creditflow.conformance.cli.prove" not in modules
    assert "z3" not in modules


@pytest.mark.parametrize(
    "module",
    [
        "creditflow.adapters.reference.server",
        "creditflow.adapters.python_template",
        "creditflow.adapters.mutants.block_off_by_one",
    ],
)
def test_adapter_subprocesses_load_no_heavy_library(module):
    assert heavy(loaded_after(f"import {module}")) == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_lazy_command_is_what_its_module_defines(name):
    command = COMMANDS[name].load()
    assert command.name == name
    stand_in = click.Command(name, help=COMMANDS[name].summary)
    for limit in (20, 45, 70, 1000):
        assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), (
            f"COMMANDS[{name!r}].summary in cli/root.py must be the first sentence of the "
            f"command's help: {command.get_short_help_str(10_000)!r}"
        )


@pytest.mark.parametrize("width", [60, 80, 100])
def test_the_root_help_lists_commands_as_click_does_with_all_loaded(width):
    group = LazyPolicyGroup("creditflow", lazy=COMMANDS, commands=[presets])
    ctx = click.Context(group)
    lazy = click.HelpFormatter(width=width)
    group.format_commands(ctx, lazy)
    assert group.commands.keys() == {"presets"}  # listing loaded nothing
    for name in group.list_commands(ctx):
        group.get_command(ctx, name)
    loaded = click.HelpFormatter(width=width)
    click.Group.format_commands(group, ctx, loaded)
    assert len(group.commands) == len(COMMANDS) + 1
    assert lazy.getvalue() == loaded.getvalue()
    assert "synth" in lazy.getvalue()


def test_presets_prints_each_loaded_graphs_description():
    out = CliRunner().invoke(main, ["presets"]).output.splitlines()
    names = preset_names()
    assert out[: len(names)] == [f"{name:18} {load_graph(name).description}" for name in names]
    # then every other family's under a heading (FAM-REGISTRY), AMQP's first (AMQ-PRESETS)
    rest = out[len(names) :]
    assert rest[0].startswith("amqp presets: AMQP 1.0")
    assert [x.split()[0] for x in rest[1 : 1 + len(amqp_preset_names())]] == amqp_preset_names()
    headings = [x.split()[0] for x in rest if not x.startswith(" ")]
    assert headings == ["amqp", "paging", "accounts", "alarms", "http2"]
