"""The registry of families (FAM-REGISTRY): the built-in ones by name, those installed as
entry points of the ``creditflow.families`` group, and any registered at run time (a test's
toy family). Nothing is imported until a family is asked for (START-LAZY)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from importlib import metadata

from creditflow.conformance.family.interface import Family

#: FAM-REGISTRY: the entry-point group of installed families
GROUP = "creditflow.families"

#: the built-in families, name -> ``module:ATTRIBUTE`` of their :class:`Family`
BUILTIN: dict[str, str] = {
    "amqp": "creditflow.conformance.families.amqp:FAMILY",
    "credit_flow": "creditflow.conformance.families.network:FAMILY",
    "paging": "creditflow.conformance.families.paging:FAMILY",
    "accounts": "creditflow.conformance.families.accounts:FAMILY",
    "alarms": "creditflow.conformance.families.alarms:FAMILY",
    "http2": "creditflow.conformance.families.http2:FAMILY",
}

_registered: dict[str, Family] = {}


class UnknownFamily(LookupError):
    """No family of that name (one line)."""


def register(family: Family) -> None:
    """Add ``family`` for this process (a test's toy family); replaces one of that name."""
    _registered[family.name] = family


def unregister(name: str) -> None:
    _registered.pop(name, None)


def names() -> list[str]:
    """Every family's name: built in, installed, registered."""
    installed = [ep.name for ep in metadata.entry_points(group=GROUP)]
    return list(dict.fromkeys([*BUILTIN, *installed, *_registered]))


def get(name: str) -> Family:
    """The family called ``name``, or :class:`UnknownFamily`."""
    if name in _registered:
        return _registered[name]
    target = BUILTIN.get(name)
    if target is None:
        target = next(
            (ep.value for ep in metadata.entry_points(group=GROUP) if ep.name == name), None
        )
    if target is None:
        raise UnknownFamily(f"unknown family {name!r} (families: {', '.join(names())})")
    module, _, attribute = target.partition(":")
    family = getattr(importlib.import_module(module), attribute)
    if not isinstance(family, Family):
        raise UnknownFamily(f"{target} is not a Family")
    return family


def families() -> Iterator[Family]:
    for name in names():
        yield get(name)
