"""Plug-ins named in data files, approved only from outside the file (IN-PLUGIN).

A data file (a sweep file's ``checkers``) may name a plug-in as ``package.module:function``
or by the name of an installed entry point. Naming it is never enough to run it: the
plug-in is usable only when

* the command line approves it (``--plugin package.module`` or
  ``--plugin package.module:function``), or
* an installed distribution declares it as an entry point of the plug-in's group
  (``creditflow.checkers``): installing a package is an explicit act.

:func:`check_plugin` decides this from the name alone; it imports nothing, so a data file
naming ``os:system`` gets one line and exit 2 with no module loaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import metadata

#: IN-PLUGIN: the entry-point group of sweep checkers.
CHECKER_GROUP = "creditflow.checkers"


class PluginError(ValueError):
    """A plug-in a data file may not use (IN-PLUGIN); ``str()`` is one line."""


def installed(group: str) -> dict[str, str]:
    """IN-PLUGIN: the entry points of ``group``, name -> ``module:attr`` (nothing imported)."""
    return {ep.name: ep.value for ep in metadata.entry_points(group=group)}


def is_approved(target: str, approved: Iterable[str]) -> bool:
    """IN-PLUGIN: ``module:function`` is approved by its exact name or by its module (or
    any parent package of it) on the command line."""
    module = target.partition(":")[0]
    return any(name in (target, module) or module.startswith(name + ".") for name in approved)


def check_plugin(name: str, approved: Iterable[str], group: str, what: str) -> str:
    """IN-PLUGIN: the ``module:function`` a data file's ``name`` may load, or
    :class:`PluginError`. Imports nothing."""
    entry = installed(group).get(name)
    if entry is not None:
        return entry
    if ":" not in name:
        raise PluginError(f"unknown {what} {name!r}")
    if not is_approved(name, approved):
        module = name.partition(":")[0]
        raise PluginError(
            f"{what} {name!r} is a plug-in named by the file; approve it on the command "
            f"line with --plugin {module} (IN-PLUGIN)"
        )
    return name
