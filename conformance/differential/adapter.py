"""What every adapter offers the checker, and how an adapter fails (AD-FAILURE)."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from creditflow.conformance.differential.protocol import OP_KINDS, Observation, Op
from creditflow.model.credit.spec import CreditSpec

#: AD-FAILURE kinds.
CRASH, HANG, PROTOCOL, REFUSED, MISSING = "crash", "hang", "protocol error", "refused", "missing"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str, limit: int = 2000) -> str:
    """AD-TRANSPORT-STDERR: ``text`` (from an adapter) safe to echo on a terminal as part
    of one line: control characters, terminal escapes (ESC, CSI) and line breaks shown
    as ``\\xNN`` escapes, at most ``limit`` characters."""
    shown = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


class AdapterFailure(Exception):
    """The implementation failed rather than diverged (exit 3): it crashed, hung past
    the timeout, broke the protocol, refused a well-formed request, or is not installed.
    ``str()`` is one printable line naming the adapter and the problem
    (AD-TRANSPORT-STDERR: whatever the adapter wrote is escaped and bounded)."""

    def __init__(self, adapter: str, kind: str, message: str) -> None:
        adapter, message = printable(adapter, 200), printable(message)
        super().__init__(f"adapter {adapter}: {kind}: {message}")
        self.adapter = adapter
        self.kind = kind
        self.message = message


def hello_ops_problem(info: dict[str, Any]) -> str | None:
    """What is wrong with ``hello``'s ``ops`` member (AD-CAPABILITIES), or ``None``."""
    ops = info.get("ops")
    if ops is None:
        return None
    if not isinstance(ops, list) or not all(isinstance(o, str) for o in ops):
        return f'hello "ops" must be a list of op names, got {ops!r}'
    unknown = sorted(set(ops) - set(OP_KINDS))
    if unknown:
        return f'hello "ops" names ops the protocol does not define: {", ".join(unknown)}'
    if "state" not in ops:
        return 'hello "ops" must include "state" (AD-CAPABILITIES)'
    return None


class Adapter(ABC):
    """An implementation of the ``credit_flow`` family (AD-OPS) the checker can drive."""

    #: A short name for reports and file names (``reference``, ``rabbitmq``, ...).
    name: str = "adapter"
    #: The ``hello`` response (AD-HELLO).
    info: dict[str, Any]

    @abstractmethod
    def reset(self, spec: CreditSpec) -> None:
        """AD-RESET: forget every process; ``spec`` is the default credit spec."""

    @abstractmethod
    def run(self, ops: Sequence[Op]) -> list[Observation]:
        """Execute ``ops`` in order and return one observation per op (AD-RESPONSE).
        Raises :class:`AdapterFailure`."""

    def close(self) -> None:  # noqa: B027 - most adapters have nothing to release
        """Release the implementation (stop its process)."""

    @property
    def supported_ops(self) -> tuple[str, ...]:
        """The ops the implementation offers (AD-CAPABILITIES): ``hello``'s ``ops``, in
        protocol order; every op of AD-OPS when ``hello`` does not say."""
        declared = getattr(self, "info", {}).get("ops")
        if declared is None:
            return OP_KINDS
        return tuple(k for k in OP_KINDS if k in declared)

    @property
    def missing_ops(self) -> tuple[str, ...]:
        """The ops of AD-OPS the implementation does not offer (AD-CAPABILITIES)."""
        return tuple(k for k in OP_KINDS if k not in self.supported_ops)

    @property
    def description(self) -> str:
        """What the implementation says it is (its ``hello`` name)."""
        return str(self.info.get("name", self.name))

    def __enter__(self) -> Adapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
