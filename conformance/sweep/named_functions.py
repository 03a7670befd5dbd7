"""Functions a sweep names as ``package.module:function`` (SW-CHECKER, SW-REPLAY)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def import_named_function(target: str, what: str, error: type[Exception]) -> Callable[..., Any]:
    """The function ``target`` (``package.module:function``) names, imported for
    ``what`` (such as ``checker 'x'``); ``error`` with a one-line message when it cannot
    be imported or is not callable."""
    module_name, _, attr = target.partition(":")
    try:
        function = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise error(f"{what}: cannot load {target} ({exc})") from None
    if not callable(function):
        raise error(f"{what}: {target} is not callable")
    return function
