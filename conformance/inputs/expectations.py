"""Expectations files (AD-EXPECTATIONS): the known divergences of one implementation,
so that a corpus can gate CI before the implementation is perfect (test262 style).

    {"adapter": "rabbitmq", "description": "...",
     "known_divergences": {"<trace name>": "<why>", ...}}

A trace's name is its file name without ``.itf.json``. A listed trace that diverges is
an expected failure; a listed trace that passes is an *unexpected pass* and fails the
run, so that the file is kept true.

What a listed trace stands for is its divergence's :class:`Signature`
(AD-EXPECTATIONS-MATCH): the op kind and, for each field that differs, how it differs
relative to the op's peer. :func:`match` is the one rule by which ``conform``, ``replay``
and the pytest plugin decide that a divergence is a known one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

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


# -- what a known divergence matches (AD-EXPECTATIONS-MATCH) ------------------------------

#: The state fields that are maps from a peer to a number (AD-RESPONSE).
MAP_FIELDS = ("credit_from", "credit_to")


@dataclass(frozen=True, order=True)
class Signature:
    """AD-EXPECTATIONS-MATCH: one divergence, as precisely as it can be said without the
    process names: the op kind, and the set of ways the fields differ, each relative to
    the op's ``peer`` (``peer``) or any other process (``other``) — e.g.
    ``credit_to: peer entry kept`` (the implementation has an entry the model has not)."""

    op: str
    differences: frozenset[str]

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(d.split(":", 1)[0] for d in self.differences)

    def __str__(self) -> str:
        return f"{self.op}: {'; '.join(sorted(self.differences))}"


def signature(op: str, peer: str | None, diffs: Iterable[tuple[str, Any, Any]]) -> Signature:
    """AD-EXPECTATIONS-MATCH: the signature of a divergence at an ``op`` on ``peer``
    whose differing fields are ``diffs`` (field, the model's value, the
    implementation's value). Maps are compared entry by entry (``entry kept`` /
    ``entry missing`` / ``higher`` / ``lower``), ``blocked`` occurrence by occurrence,
    and the grants (``emitted`` and ``deferred`` together: a grant held back in a
    blocked process is the same grant) as a multiset per addressee, then by amount,
    then by whether they were sent or held back, then by order."""

    def role(name: object) -> str:
        return "peer" if name == peer else "other"

    out: set[str] = set()
    grants: dict[str, tuple[list[Any], list[Any]]] = {}
    for name, model, impl in diffs:
        if name in MAP_FIELDS:
            m, i = dict(model), dict(impl)
            for key in m.keys() | i.keys():
                if key not in i:
                    out.add(f"{name}: {role(key)} entry missing")
                elif key not in m:
                    out.add(f"{name}: {role(key)} entry kept")
                elif i[key] != m[key]:
                    how = "higher" if i[key] > m[key] else "lower"
                    out.add(f"{name}: {role(key)} {how}")
        elif name == "blocked":
            out |= _multiset_difference(name, [role(p) for p in model], [role(p) for p in impl])
        elif name in ("emitted", "deferred"):
            grants[name] = (list(model), list(impl))
        else:
            out.add(f"{name}: differs")
    if grants:
        out |= _grant_differences(grants, role)
    return Signature(op, frozenset(out))


def _multiset_difference(name: str, model: Sequence[str], impl: Sequence[str]) -> set[str]:
    m, i = Counter(model), Counter(impl)
    return {f"{name}: {r} extra" for r in i - m} | {f"{name}: {r} missing" for r in m - i}


def _grant_differences(grants: Mapping[str, tuple[list[Any], list[Any]]], role: Any) -> set[str]:
    """The grants' part of a signature; a field that does not differ is not in
    ``grants`` and counts as equal on both sides."""

    def side(index: int, name: str) -> list[tuple[str, int]]:
        return [(str(to), int(n)) for to, n in grants[name][index]] if name in grants else []

    model = side(0, "emitted") + side(0, "deferred")
    impl = side(1, "emitted") + side(1, "deferred")
    by_role = _multiset_difference(
        "grants", [role(t) for t, _ in model], [role(t) for t, _ in impl]
    )
    if by_role:
        return by_role
    if Counter(model) != Counter(impl):
        return {"grants: amount differs"}
    sent_m, sent_i = len(side(0, "emitted")), len(side(1, "emitted"))
    if "emitted" in grants and sent_m != sent_i:
        return {"grants: sent, not held back" if sent_i > sent_m else "grants: held back, not sent"}
    return {"grants: order"}


def match(found: Signature, known: Mapping[str, Signature]) -> str | None:
    """AD-EXPECTATIONS-MATCH: the name of the known divergence whose signature is
    exactly ``found`` (same op kind, same differences: one more or one fewer is another
    bug), else ``None``."""
    for name, sig in known.items():
        if sig == found:
            return name
    return None
