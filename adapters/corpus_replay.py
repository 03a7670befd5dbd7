"""Replay functions backed by adapters for ``creditflow replay-corpus`` (SW-REPLAY):
``adapter:NAME`` replays each trace against the named adapter, one adapter kept open
per executor process and restarted after it fails.

The sweep's corpus job sits below the adapters and knows replay functions only by
name; the command line hands it :func:`resolve`, which knows the adapters as well.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from creditflow.adapters.registry import UnknownAdapter, adapter_factory
from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.differential.replay import replay_trace
from creditflow.conformance.differential.traces import load_trace
from creditflow.conformance.sweep.replay import (
    ADAPTER_PREFIX,
    ReplayError,
    ReplayFn,
    resolve_replay,
)

_open_adapters: dict[str, Any] = {}


@dataclass
class AdapterReplayed:
    """What an adapter replay returns (SW-REPLAY's ``ok``/``message``/``steps``)."""

    ok: bool
    status: str
    steps: int
    message: str = ""


def adapter_replay(adapter_name: str) -> ReplayFn:
    """SW-REPLAY: replay a trace file against the named adapter. A failing adapter raises
    ``AdapterFailure`` (an ``error`` row) and is restarted for the next trace."""
    try:
        factory = adapter_factory(adapter_name)
    except UnknownAdapter as exc:
        raise ReplayError(str(exc)) from None

    def replay(path: str) -> AdapterReplayed:
        loaded = load_trace(path)
        adapter = _open_adapters.get(adapter_name)
        if adapter is None:
            adapter = _open_adapters[adapter_name] = factory()
        try:
            outcome = replay_trace(adapter, loaded)
        except AdapterFailure:
            _open_adapters.pop(adapter_name, None)
            with contextlib.suppress(Exception):
                adapter.close()
            raise
        message = ""
        if outcome.divergence is not None:
            d = outcome.divergence
            fields = ", ".join(
                f"{f.field}: model {f.model!r}, implementation {f.implementation!r}"
                for f in d.diffs
            )
            message = f"after op {d.index + 1} ({d.op}): {fields}"
        return AdapterReplayed(outcome.ok, outcome.status, len(loaded.trace.ops), message)

    return replay


def resolve(name: str) -> ReplayFn:
    """SW-REPLAY: ``adapter:NAME`` here; every other name as
    :func:`~creditflow.conformance.sweep.replay.resolve_replay` resolves it."""
    if name.startswith(ADAPTER_PREFIX):
        return adapter_replay(name.removeprefix(ADAPTER_PREFIX))
    return resolve_replay(name)
