"""Encoding and decoding Informal Trace Format values and documents (TRACE-ITF, TRACE-VALUES).

Python values map to ITF as: ``int`` -> ``#bigint``; ``tuple`` -> ``#tup``;
``frozenset``/``set`` -> ``#set``; ``dict`` -> ``#map``; :class:`Record` -> a plain
object; :class:`Variant` -> ``{"tag", "value"}``; ``list``, ``str`` and ``bool`` as
themselves. Decoding is the inverse (plain JSON integers are accepted too).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from creditflow.conformance.inputs.reading import MAX_INT_DIGITS, InputError, load_json
from creditflow.conformance.inputs.schemas import ItfTrace, validate
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


class TraceFormatError(InputError):
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


_BIGINT = re.compile(rf"-?[0-9]{{1,{MAX_INT_DIGITS}}}")


def decode(value: Any, at: str = "value") -> Any:
    """TRACE-VALUES / IN-SCHEMA: an ITF value as Python; a malformed ``#bigint``,
    ``#tup``, ``#set`` or ``#map`` is a :class:`TraceFormatError` naming its place ``at``
    (the values were depth-bounded by the reader, IN-DEPTH)."""
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, int):
        if abs(value) >= 10**MAX_INT_DIGITS:
            raise TraceFormatError(f"{at}: integer beyond {MAX_INT_DIGITS} digits (IN-INT)")
        return value
    if isinstance(value, list):
        return [decode(v, f"{at}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        for key in ("#bigint", "#tup", "#set", "#map", "#unserializable"):
            if key in value and len(value) != 1:
                raise TraceFormatError(f"{at}: {key} must be the object's only key")
        if "#bigint" in value:
            text = value["#bigint"]
            if not isinstance(text, str) or not _BIGINT.fullmatch(text):
                raise TraceFormatError(
                    f"{at}.#bigint must be a string of at most {MAX_INT_DIGITS} digits (IN-INT)"
                )
            return int(text)
        for key in ("#tup", "#set", "#map"):
            if key in value and not isinstance(value[key], list):
                raise TraceFormatError(f"{at}.{key} must be a list")
        if "#tup" in value:
            return tuple(decode(v, f"{at}.#tup[{i}]") for i, v in enumerate(value["#tup"]))
        if "#set" in value:
            return frozenset(
                _hashable(decode(v, f"{at}.#set[{i}]")) for i, v in enumerate(value["#set"])
            )
        if "#map" in value:
            out = {}
            for i, pair in enumerate(value["#map"]):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise TraceFormatError(f"{at}.#map[{i}] must be a [key, value] pair")
                out[_hashable(decode(pair[0], f"{at}.#map[{i}][0]"))] = decode(
                    pair[1], f"{at}.#map[{i}][1]"
                )
            return out
        if "#unserializable" in value:
            raise TraceFormatError(
                f"{at}: unserializable value {str(value['#unserializable'])[:80]!r}"
            )
        if set(value) == {"tag", "value"}:
            if not isinstance(value["tag"], str):
                raise TraceFormatError(f"{at}.tag must be a string")
            return Variant(value["tag"], decode(value["value"], f"{at}.value"))
        return Record({k: decode(v, f"{at}.{k}") for k, v in value.items()})
    raise TraceFormatError(f"{at}: not an ITF value ({type(value).__name__})")


def _hashable(value: Any) -> Any:
    """TRACE-HASHABLE: a decoded value as a ``#set`` member or ``#map`` key: lists (also
    inside tuples and variants) become tuples, maps and records tuples of their pairs,
    in their own order when it exists, else in the order of their ``repr``."""
    if isinstance(value, Variant):
        return Variant(value.tag, _hashable(value.value))
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        pairs = [(_hashable(k), _hashable(v)) for k, v in value.items()]
        try:
            return tuple(sorted(pairs))
        except TypeError:  # keys of different types
            return tuple(sorted(pairs, key=repr))
    return value


def trace_document(
    variables: list[str],
    states: Sequence[Mapping[str, Any]],
    meta: Mapping[str, Any],
    loop: int | None = None,
    state_meta: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """An ITF trace document: ``states`` are mappings of every name in ``variables``;
    ``state_meta[i]``, when given, is merged into ``states[i]``'s ``#meta`` (TRACE-RUNS:
    the index of a compressed trace's state and the run that led to it)."""
    doc: dict[str, Any] = {
        "#meta": {"format": "ITF", "format-description": FORMAT_DESCRIPTION, **meta},
        "vars": list(variables),
        "states": [],
    }
    for i, state in enumerate(states):
        missing = [v for v in variables if v not in state]
        if missing:
            raise ValueError(f"state {i} lacks {missing}")
        meta_i = {"index": i, **(state_meta[i] if state_meta is not None else {})}
        doc["states"].append({"#meta": meta_i, **{v: encode(state[v]) for v in variables}})
    if loop is not None:
        doc["loop"] = loop
    return doc


def trace_meta(
    source: str,
    description: str,
    model: str,
    version: int,
    fields: Mapping[str, Any],
    length: int,
    extra: Mapping[str, Any] | None = None,
    created: bool = True,
) -> dict[str, Any]:
    """A creditflow trace's ``#meta``: its source and description, and ``creditflow``:
    the trace's ``model`` and ``version``, its own ``fields``, its ``length``, when it
    was made (unless not ``created``), then ``extra``."""
    info: dict[str, Any] = {"model": model, "version": version, **fields, "length": length}
    if created:
        info["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"source": source, "description": description, "creditflow": {**info, **(extra or {})}}


def trace_model(doc: Mapping[str, Any]) -> Any:
    """``#meta.creditflow.model`` of a document (``None`` without a ``#meta`` object)."""
    meta = doc.get("#meta", {})
    return meta.get("creditflow", {}).get("model") if isinstance(meta, dict) else None


@contextmanager
def malformed_trace(path: str | Path) -> Iterator[None]:
    """IN-ONE-LINE: a value of a type the schema allows but the trace's meaning does not
    is a :class:`TraceFormatError` naming ``path`` (one line, not a traceback)."""
    try:
        yield
    except TraceFormatError:
        raise
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        raise TraceFormatError(
            f"{path}: malformed trace ({exc.__class__.__name__}: {str(exc)[:120]})"
        ) from None


def write_document(doc: Mapping[str, Any], path: str | Path) -> Path:
    """Write a JSON document through the one output writer (OUT-ATOMIC: the file is
    complete or absent; OUT-FAILURE: :class:`~creditflow.conformance.outputs.OutputError`)."""
    return write_atomic(path, json.dumps(doc, indent=1) + "\n")


def read_document(path: str | Path) -> dict[str, Any]:
    """Read and structurally validate an ITF trace; :class:`TraceFormatError` names the
    file and the problem."""
    path = Path(path)
    try:
        doc = load_json(path)
    except InputError as exc:
        raise TraceFormatError(str(exc)) from None
    try:
        validate_document(doc)
    except TraceFormatError as exc:
        raise TraceFormatError(f"{path}: {exc}") from None
    return doc


def validate_document(doc: Any) -> None:
    """TRACE-ITF / IN-SCHEMA: the shape of an ITF document, then its states and values."""
    if not isinstance(doc, dict):
        raise TraceFormatError("an ITF trace is a JSON object")
    try:
        validate(ItfTrace, doc, "")
    except InputError as exc:
        raise TraceFormatError(f"{exc.path}: {exc.problem}") from None
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
    for i, state in enumerate(doc["states"]):
        for name in doc["vars"]:
            decode(state[name], f"states[{i}].{name}")


def decoded_states(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The states of a document with every value decoded (``#meta`` dropped)."""
    return [
        {k: decode(v, f"states[{i}].{k}") for k, v in state.items() if k != "#meta"}
        for i, state in enumerate(doc["states"])
    ]
