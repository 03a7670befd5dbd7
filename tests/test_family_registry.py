"""The family interface and its registry (FAM-INTERFACE, FAM-REGISTRY, FAM-OPTIONS)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from creditflow.conformance.cli.common import refuse_options_not_taken
from creditflow.conformance.family import registry
from creditflow.conformance.family.interface import Family, Part


def toy(name: str = "toy", options: frozenset[str] = frozenset({"depth"})) -> Family:
    return Family(
        name=name,
        title="a toy",
        spec_files=(),
        property_ids=("PROP-TOY",),
        options={"check": options},
        reader=Part("builtins:len"),
        checking=Part("builtins:len"),
    )


def test_every_builtin_family_loads_as_a_family_with_its_required_parts():
    """FAM-REGISTRY / FAM-INTERFACE: each built-in name gives a Family whose required
    parts are named as ``module:ATTRIBUTE``."""
    assert "amqp" in registry.names()
    for family in registry.families():
        assert isinstance(family, Family)
        for part in (family.reader, family.checking):
            module, _, attribute = part.target.partition(":")
            assert module and attribute, part


def test_an_unknown_family_is_one_line_naming_the_known_ones():
    with pytest.raises(registry.UnknownFamily) as caught:
        registry.get("no-such-family")
    assert "\n" not in str(caught.value) and "amqp" in str(caught.value)


def test_a_registered_family_is_found_and_then_forgotten():
    registry.register(toy())
    try:
        assert registry.get("toy").property_ids == ("PROP-TOY",)
        assert "toy" in registry.names()
        assert registry.get("toy").reader.load() is len  # Part loads lazily, by name
    finally:
        registry.unregister("toy")
    assert "toy" not in registry.names()


@click.command()
@click.argument("graph")
@click.option("--depth", type=int, default=3)
@click.option("--credit", default=None)
@click.option("--json", "as_json", is_flag=True)
def _command(graph: str, depth: int, credit: str | None, as_json: bool) -> None:
    refuse_options_not_taken(click.get_current_context(), toy(), "check")
    click.echo("ran")


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["g"], 0, "ran"),
        (["g", "--depth", "5"], 0, "ran"),
        (["g", "--credit", "2,1"], 2, "check --credit: not an option of the toy family"),
    ],
)
def test_an_option_the_family_does_not_take_is_refused_never_ignored(args, code, text):
    """FAM-OPTIONS: a set option the family does not declare exits 2 in one line; the
    family's own options and the universal ones pass."""
    result = CliRunner().invoke(_command, args)
    assert result.exit_code == code, result.output
    assert text in result.output
    if code:
        assert "FAM-OPTIONS" in result.output and "--depth" in result.output


def test_every_part_a_family_declares_loads():
    """FAM-INTERFACE: a part named in a family record is one that exists (an optional
    part declared is loadable, never a dangling ``module:ATTRIBUTE``; FAM-SWEEP's
    dimensions are names)."""
    for family in registry.families():
        for name in ("reader", "checking", "codec", "every_supply", "synthesis", "alphabet"):
            part = getattr(family, name)
            if part is not None:
                assert part.load() is not None, (family.name, name)
        if family.sweep is not None:
            dims = family.sweep.load().dimensions
            assert dims and all(isinstance(d, str) for d in dims), family.name
