"""Findings of ``conform`` (spec/conformance-findings.md, FIND-*): one record every family's
conform driver returns for each distinct way an implementation parts from the model.

A finding names the rule it breaks and that rule's class (FIND-CLASS): ``must`` (a MUST
of the protocol, with its section), ``should`` (a SHOULD), ``contract`` (the
implementation's own documented contract) or ``policy`` (a choice the protocol leaves
open that the model made). Only ``must`` and ``contract`` fail a run by default;
``--strict`` fails on every class (FIND-EXIT). Its ``signature`` is stable across runs
and releases (FIND-SIGNATURE): the rule, the op and the field where the run first parts
from the model, so the version matrix and the expectations files key on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from creditflow.conformance import exit_codes

#: FIND-CLASS: the classes, strongest first.
FindingClass = Literal["must", "should", "contract", "policy"]
CLASSES: tuple[FindingClass, ...] = ("must", "should", "contract", "policy")
#: FIND-EXIT: the classes that fail a run without ``--strict``.
FAILING: frozenset[str] = frozenset({"must", "contract"})
#: FIND-EXIT: the exit code of each verdict a conform driver gives (a divergence and an
#: unexpected pass fail the run; a property violated with the model agreeing, AMQP's)
VERDICT_EXIT_CODES: dict[str, int] = {
    "conformant": exit_codes.OK,
    "divergence": exit_codes.DIVERGENCE,
    "unexpected-pass": exit_codes.DIVERGENCE,
    "adapter-failure": exit_codes.ADAPTER_FAILURE,
    "property-violated": exit_codes.VIOLATION,
}


@dataclass(frozen=True)
class Rule:
    """A rule a finding can break (FIND-RULE): our rule id, its class, and where the
    obligation is written (a protocol section, or the implementation's documentation)."""

    id: str
    klass: FindingClass
    source: str

    def __post_init__(self) -> None:
        if self.klass not in CLASSES:
            raise ValueError(f"rule {self.id}: class {self.klass!r} is none of {CLASSES}")


@dataclass(frozen=True)
class Finding:
    """One distinct finding (FIND-RECORD): the rule and class, the stable signature, the
    shortest witness found (the ops, as text), the trace written for it (FIND-TRACE:
    written before the finding is reported) and the phase that found it."""

    id: str
    rule: Rule
    signature: str
    witness: tuple[str, ...]
    trace: str | None = None
    found_by: str | None = None
    detail: tuple[str, ...] = ()

    @property
    def klass(self) -> FindingClass:
        return self.rule.klass

    def fails(self, strict: bool = False) -> bool:
        """FIND-EXIT: whether this finding fails the run."""
        return strict or self.klass in FAILING

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rule": self.rule.id,
            "class": self.klass,
            "source": self.rule.source,
            "signature": self.signature,
            "witness": list(self.witness),
            "trace": self.trace,
            "found_by": self.found_by,
            "detail": list(self.detail),
        }


def signature_text(rule: str, op: str, fields: Iterable[str]) -> str:
    """FIND-SIGNATURE: ``rule @ op: field, field`` with the fields sorted, so the same
    parting from the model reads the same in every run and release."""
    parts = sorted(set(fields))
    return f"{rule} @ {op}" + (f": {', '.join(parts)}" if parts else "")


def finding_id(signature: str) -> str:
    """FIND-SIGNATURE: a short id derived from the signature alone (stable across runs)."""
    import hashlib

    return hashlib.sha256(signature.encode()).hexdigest()[:10]


def failing(findings: Sequence[Finding], strict: bool = False) -> tuple[Finding, ...]:
    """FIND-EXIT: the findings that fail the run."""
    return tuple(f for f in findings if f.fails(strict))
