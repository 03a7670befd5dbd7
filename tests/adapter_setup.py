"""Setting up the adapters the tests drive: an AMQP adapter started for a module's tests
and closed after them, and a release faked as installed in the adapters' cache folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from creditflow.adapters.registry import amqp_adapter_factory
from creditflow.conformance.families.amqp.protocol import AmqpAdapter

AdapterT = TypeVar("AdapterT", bound=AmqpAdapter)


def started_amqp_adapter(name: str, kind: type[AdapterT]) -> Iterator[AdapterT]:
    """The registry's adapter ``name`` (asserted to be a ``kind``), closed once the
    caller is done with it; for ``yield from`` in a fixture."""
    adapter = amqp_adapter_factory(name)()
    assert isinstance(adapter, kind)
    try:
        yield adapter
    finally:
        adapter.close()


def fake_installed_release(
    cache: Path, monkeypatch: pytest.MonkeyPatch, family: str, release: str, version: str
) -> Path:
    """Make ``cache`` the adapters' cache folder (CREDITFLOW_CACHE) with ``release`` at
    ``version`` of ``family`` installed in it (a completed install's marker); its folder."""
    monkeypatch.setenv("CREDITFLOW_CACHE", str(cache))
    folder = cache / family / f"{release}-{version}"
    folder.mkdir(parents=True)
    (folder / ".installed").write_text(f"{version}\n")
    return folder
