"""Expectations files (AD-EXPECTATIONS): the known divergences of one implementation,
so that a corpus can gate CI before the implementation is perfect (test262 style).

    {"adapter": "rabbitmq", "description": "...",
     "known_divergences": {"<trace name>": "<why>", ...}}

A trace's name is its file name without ``.itf.json``. A listed trace that diverges is
an expected failure; a listed trace that passes is an *unexpected pass* and fails the
run, so that the file is kept true.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path


class ExpectationsError(ValueError):
    """An expectations file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class Expectations:
    adapter: str = ""
    known: dict[str, str] = field(default_factory=dict)
    path: Path | None = None

    def reason(self, trace_name: str) -> str | None:
        return self.known.get(trace_name)


def load_expectations(path: str | Path) -> Expectations:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ExpectationsError(f"{path}: cannot read ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ExpectationsError(f"{path}: not valid JSON ({exc})") from None
    known = data.get("known_divergences") if isinstance(data, dict) else None
    if not isinstance(known, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in known.items()
    ):
        raise ExpectationsError(
            f'{path}: expected {{"known_divergences": {{"<trace name>": "<why>", ...}}}}'
        )
    return Expectations(str(data.get("adapter", "")), dict(known), path)


def shipped_expectations(name: str) -> Path:
    """A shipped expectations file (package data), e.g. ``rabbitmq-3.10.8``."""
    return Path(str(resources.files("creditflow.conformance") / "expectations" / f"{name}.json"))
