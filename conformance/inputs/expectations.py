"""Expectations files (AD-EXPECTATIONS): the known divergences of one implementation,
so that a corpus can gate CI before the implementation is perfect (test262 style).

    {"adapter": "rabbitmq", "description": "...",
     "known_divergences": {"<trace name>": "<why>", ...}}

A trace's name is its file name without ``.itf.json``. A listed trace that diverges is
an expected failure; a listed trace that passes is an *unexpected pass* and fails the
run, so that the file is kept true.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from creditflow.conformance.inputs import schemas
from creditflow.conformance.inputs.reading import InputError, load_json
from creditflow.conformance.inputs.schemas import validate


class ExpectationsError(InputError):
    """An expectations file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class Expectations:
    adapter: str = ""
    known: dict[str, str] = field(default_factory=dict)
    path: Path | None = None

    def reason(self, trace_name: str) -> str | None:
        return self.known.get(trace_name)


def load_expectations(path: str | Path) -> Expectations:
    """AD-EXPECTATIONS, IN-SCHEMA: read an expectations file; one-line
    :class:`ExpectationsError` naming the file and the JSON path of a problem."""
    path = Path(path)
    try:
        data = load_json(path)
        if not isinstance(data, dict):
            raise InputError(
                str(path), 'expected {"known_divergences": {"<trace name>": "<why>", ...}}'
            )
        doc = validate(schemas.Expectations, data, str(path))
        for name in doc.known_divergences:
            if not is_trace_name(name):
                raise InputError(
                    str(path),
                    f"{name!r} is not a trace name (a file name without .itf.json: no '/', "
                    "NUL, '.' or '..'; AD-EXPECTATIONS-NAME)",
                    "known_divergences",
                )
    except InputError as exc:
        raise ExpectationsError(str(exc)) from None
    return Expectations(doc.adapter, dict(doc.known_divergences), path)


def is_trace_name(name: str) -> bool:
    """AD-EXPECTATIONS-NAME: whether ``name`` can be a trace's file name without its
    suffix (it is matched exactly, never as a pattern)."""
    return bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name


def shipped_expectations(name: str) -> Path:
    """A shipped expectations file (package data), e.g. ``rabbitmq-3.10.8``."""
    return Path(str(resources.files("creditflow.conformance") / "expectations" / f"{name}.json"))
