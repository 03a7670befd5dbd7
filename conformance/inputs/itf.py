"""Encoding and decoding Informal Trace Format values and documents (TRACE-ITF, TRACE-VALUES).

Python values map to ITF as: ``int`` -> ``#bigint``; ``tuple`` -> ``#tup``;
``frozenset``/``set`` -> ``#set``; ``dict`` -> ``#map``; :class:`Record` -> a plain
object; :class:`Variant` -> ``{"tag", "value"}``; ``list``, ``str`` and ``bool`` as
themselves. Decoding is the inverse (plain JSON integers are accepted too).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from creditflow.conformance.outputs import write_atomic

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"


class Record(dict):
    """An ITF record (a JSON object whose keys are field names)."""


class Variant(NamedTuple):
    """A Quint sum-type value, e.g. ``Variant("Some", 3)``."""

    tag: str
    value: Any


NONE = Variant("None", ())


def some(value: Any) -> Variant:
    return Variant("Some", value)


def option(value: Any) -> Variant:
    """``Some(value)``, or ``None`` for Python ``None``."""
    return NONE if value is None else some(value)


def picks_record(picks: Mapping[str, Any]) -> Record:
    """``mbt::nondetPicks`` of one state (TRACE-OPTIONS): the picks the action made, as
    plain values; a pick it did not make (``None``) is left out. Not Quint's
    ``{"tag": "Some"/"None", ...}`` options: itf-py cannot decode those."""
    return Record({k: v for k, v in picks.items() if v is not None})


def pick_value(picks: Mapping[str, Any], key: str) -> Any:
    """A pick read back (TRACE-OPTIONS): missing -> ``None``; also reads the Quint
    option form of older traces (``Some(v)`` -> ``v``, ``None`` -> ``None``)."""
    value = picks.get(key)
    if isinstance(value, Variant):
        if value.tag == "None":
            return None
        if value.tag == "Some":
            return value.value
        raise TraceFormatError(f"pick {key!r}: unknown option tag {value.tag!r}")
    return value


class TraceFormatError(ValueError):
    """A document that is not a valid ITF trace; the message says where."""


def encode(value: Any) -> Any:
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if isinstance(value, Variant):
        return {"tag": value.tag, "value": encode(value.value)}
    if isinstance(value, Record):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, Mapping):
        return {"#map": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"#tup": [encode(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {"#set": [encode(v) for v in sorted(value, key=repr)]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    raise TypeError(f"cannot encode {type(value).__name__} as ITF")


def decode(value: Any) -> Any:
    if isinstance(value, (bool, str, int)) or value is None:
        return value
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "#bigint" in value:
            return int(value["#bigint"])
        if "#tup" in value:
            return tuple(decode(v) for v in value["#tup"])
        if "#set" in value:
            return frozenset(_hashable(decode(v)) for v in value["#set"])
        if "#map" in value:
            return {_hashable(decode(k)): decode(v) for k, v in value["#map"]}
        if "#unserializable" in value:
            raise TraceFormatError(f"unserializable value {value['#unserializable']!r}")
        if set(value) == {"tag", "value"}:
            return Variant(value["tag"], decode(value["value"]))
        return Record({k: decode(v) for k, v in value.items()})
    raise TraceFormatError(f"not an ITF value: {value!r}")


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value


def trace_document(
    variables: list[str],
    states: list[Mapping[str, Any]],
    meta: Mapping[str, Any],
    loop: int | None = None,
) -> dict[str, Any]:
    """An ITF trace document: ``states`` are mappings of every name in ``variables``."""
    doc: dict[str, Any] = {
        "#meta": {"format": "ITF", "format-description": FORMAT_DESCRIPTION, **meta},
        "vars": list(variables),
        "states": [],
    }
    for i, state in enumerate(states):
        missing = [v for v in variables if v not in state]
        if missing:
            raise ValueError(f"state {i} lacks {missing}")
        doc["states"].append({"#meta": {"index": i}, **{v: encode(state[v]) for v in variables}})
    if loop is not None:
        doc["loop"] = loop
    return doc


def write_document(doc: Mapping[str, Any], path: str | Path) -> Path:
    """Write a JSON document through the one output writer (OUT-ATOMIC: the file is
    complete or absent; OUT-FAILURE: :class:`~creditflow.conformance.outputs.OutputError`)."""
    return write_atomic(path, json.dumps(doc, indent=1) + "\n")


def read_document(path: str | Path) -> dict[str, Any]:
    """Read and structurally validate an ITF trace; :class:`TraceFormatError` names the
    file and the problem."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TraceFormatError(f"{path}: cannot read ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TraceFormatError(f"{path}: not valid JSON ({exc})") from None
    try:
        validate_document(doc)
    except TraceFormatError as exc:
        raise TraceFormatError(f"{path}: {exc}") from None
    return doc


def validate_document(doc: Any) -> None:
    if not isinstance(doc, dict):
        raise TraceFormatError("an ITF trace is a JSON object")
    if not isinstance(doc.get("vars"), list) or not all(isinstance(v, str) for v in doc["vars"]):
        raise TraceFormatError("'vars' must be a list of variable names")
    if not isinstance(doc.get("states"), list) or not doc["states"]:
        raise TraceFormatError("'states' must be a non-empty list")
    for i, state in enumerate(doc["states"]):
        if not isinstance(state, dict):
            raise TraceFormatError(f"states[{i}] is not an object")
        missing = [v for v in doc["vars"] if v not in state]
        if missing:
            raise TraceFormatError(f"states[{i}] lacks {', '.join(missing)}")
    loop = doc.get("loop")
    if loop is not None and (not isinstance(loop, int) or not 0 <= loop < len(doc["states"])):
        raise TraceFormatError(f"'loop' {loop!r} is not a state index")


def decoded_states(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The states of a document with every value decoded (``#meta`` dropped)."""
    return [
        {k: decode(v) for k, v in state.items() if k != "#meta"} for state in doc["states"]
    ]
