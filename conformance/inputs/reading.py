"""The one input layer's reader: bytes -> text -> bounded, duplicate-free JSON/TOML values.

Every file creditflow reads (graphs, actor graphs, paging scenarios, sweep files, ITF
traces, expectations files, adapter responses) enters through here, before any schema
or model code sees it (IN-READ). The checks run in an order that cannot blow up:

1. size and encoding (IN-READ): at most :data:`MAX_FILE_BYTES`, UTF-8 text, no NUL;
2. nesting depth (IN-DEPTH): a linear pre-scan of the brackets outside strings, before
   the recursive standard parsers run;
3. the parse itself, with integers bounded to :data:`MAX_INT_DIGITS` digits before
   ``int()`` runs (IN-INT), NaN/Infinity refused (IN-FINITE) and duplicate object keys
   refused (IN-DUPLICATE);
4. a walk of the decoded value (iterative) re-checking depth, integers and floats,
   for formats whose parser has no hooks (TOML).

Every failure is an :class:`InputError` whose ``str()`` is one line naming the file,
the place (a JSON path such as ``nodes[3].id`` where one is known) and the problem.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: IN-READ: the largest file read (bytes).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: IN-DEPTH: the deepest nesting of arrays/objects (tables) accepted in any file.
MAX_DEPTH = 48
#: IN-INT: the most digits an integer literal may have (|n| < 10**18 fits a signed int64).
MAX_INT_DIGITS = 18
#: IN-INT: the largest magnitude of any integer read.
MAX_INT = 10**MAX_INT_DIGITS - 1


class InputError(ValueError):
    """A file that cannot be used (IN-ONE-LINE); ``str()`` is a single line."""

    def __init__(self, where: str, problem: str | None = None, path: str = "") -> None:
        if problem is None:  # a message already naming its file
            where, problem = "", where
        self.where = where
        self.path = path
        self.problem = one_line(problem)
        head = f"{where}: " if where else ""
        super().__init__(one_line(f"{head}{path + ': ' if path else ''}{self.problem}", 600))


#: IN-LIMITS: the longest name (model/network/graph.py's MAX_NAME_LENGTH, not imported:
#: START-LAZY, the AMQP reader loads no networkx; tests/test_input_fuzz.py ties the two)
MAX_NAME_CHARS = 1024


def checked_name(value: Any, what: str = "the name") -> str:
    """IN-LIMITS, IN-SCHEMA: the name of a graph, topology, scenario or timeline is a
    non-empty string of at most :data:`MAX_NAME_CHARS` (1,024) characters; else
    ``ValueError`` (the caller prefixes the file and the place). The one check every
    family's reader uses, so that no list or object is printed as a name."""
    if not isinstance(value, str):
        kinds = {dict: "an object", list: "a list", type(None): "null", bool: "a boolean"}
        raise ValueError(f"{what} must be a string, got {kinds.get(type(value), 'a number')}")
    if not value:
        raise ValueError(f"{what} must not be empty")
    if len(value) > MAX_NAME_CHARS:
        raise ValueError(
            f"{what} is longer than {MAX_NAME_CHARS:,} characters ({len(value):,}, IN-LIMITS)"
        )
    return value


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line of printable characters, at most ``limit`` long (IN-ONE-LINE)."""
    flat = " ".join(str(text).split())
    flat = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in flat)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def json_path(parts: Iterable[Any]) -> str:
    """``("nodes", 3, "id")`` -> ``nodes[3].id``."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif isinstance(p, str) and re.fullmatch(r"[A-Za-z_#][\w#:-]*", p):
            out += f".{p}" if out else p
        else:
            out += f"[{json.dumps(str(p))}]"
    return out


def read_text(path: str | Path, where: str | None = None, keep_bom: bool = False) -> str:
    """IN-READ: a file's text, bounded in size, UTF-8, without NUL characters. Only a
    regular file is read: a FIFO, a device or a socket is refused at once (opening a
    FIFO with no writer would block forever). ``keep_bom`` keeps a leading byte-order
    mark for a reader that refuses it (IN-ERLANG-TERMS)."""
    path = Path(path)
    where = str(path) if where is None else where
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(where, "is a folder, not a file")
        if not stat.S_ISREG(mode):
            raise InputError(where, "not a regular file (a FIFO, device or socket)")
        # O_NONBLOCK: a FIFO swapped in after the check still cannot block the open
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise InputError(where, "not a regular file (a FIFO, device or socket)")
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise InputError(where, "no such file") from None
    except IsADirectoryError:
        raise InputError(where, "is a folder, not a file") from None
    except OSError as exc:
        raise InputError(where, f"cannot read ({exc.strerror or exc})") from None
    return decode_text(data, where, keep_bom)


def decode_text(data: bytes, where: str, keep_bom: bool = False) -> str:
    """IN-READ: bytes as UTF-8 text (a binary file is refused in one line); a leading
    byte-order mark is dropped unless ``keep_bom``."""
    if len(data) > MAX_FILE_BYTES:
        raise InputError(where, f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB (IN-READ)")
    if b"\0" in data:
        raise InputError(where, "binary data (a NUL byte), not a text file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(where, f"not UTF-8 text (byte {exc.start})") from None
    return text if keep_bom else text.removeprefix("\ufeff")


# -- depth (IN-DEPTH) ----------------------------------------------------------------------

#: IN-LINEAR: strings are skipped by patterns whose repetitions repeat one character
#: class, or happen once per escape or quote, never once per character of a group.
_TOML_STRING = re.compile(
    r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'''[^']*(?:'(?!'')[^']*)*'''"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    r"|'[^'\n]*'|#[^\n]*",
    re.S,
)
_BRACKET = re.compile(r"[\[\]{}]")
#: JSON's characters that matter to the depth scan, once escapes are gone.
_JSON_SPECIAL = re.compile(r'[\[\]{}"]')


def _check_brackets(stripped: str, where: str) -> None:
    depth = 0
    for m in _BRACKET.finditer(stripped):
        if m.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(where, f"nested deeper than {MAX_DEPTH} levels (IN-DEPTH)")
        else:
            depth = max(0, depth - 1)


def check_json_depth(text: str, where: str) -> None:
    """IN-DEPTH: refuse JSON nested deeper than :data:`MAX_DEPTH`, by a linear scan.

    IN-LINEAR: escapes are dropped first by two C-level replacements (in JSON a
    backslash always starts a two-character escape, so removing ``\\\\`` then ``\\"``
    leaves only the quotes that open and close strings); then one pass over quotes and
    brackets, none over the characters of a string."""
    plain = text.replace("\\\\", "").replace('\\"', "")
    depth = 0
    in_string = False
    for m in _JSON_SPECIAL.finditer(plain):
        char = m.group()
        if char == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(where, f"nested deeper than {MAX_DEPTH} levels (IN-DEPTH)")
        else:
            depth = max(0, depth - 1)


def check_toml_depth(text: str, where: str) -> None:
    """IN-DEPTH for TOML: inline arrays/tables and dotted table headers."""
    stripped = _TOML_STRING.sub("", text)
    _check_brackets(stripped, where)
    for line in stripped.splitlines():
        if line.lstrip().startswith("[") and line.count(".") + 1 > MAX_DEPTH:
            raise InputError(
                where, f"table header nested deeper than {MAX_DEPTH} levels (IN-DEPTH)"
            )


# -- JSON ------------------------------------------------------------------------------------


class _Refused(ValueError):
    """A value refused inside a json hook (turned into an InputError by the caller)."""


def _parse_int(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(
            f"an integer with {len(literal.lstrip('-'))} digits (at most {MAX_INT_DIGITS}, IN-INT)"
        )
    return int(literal)


def _parse_float(literal: str) -> float:
    if len(literal) > 64:
        raise _Refused(f"a number literal of {len(literal)} characters (IN-INT)")
    value = float(literal)
    if not math.isfinite(value):
        raise _Refused(f"the number {literal} overflows to infinity (IN-FINITE)")
    return value


def _parse_constant(name: str) -> float:
    raise _Refused(f"{name} is not a number JSON allows (IN-FINITE)")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Refused(f"duplicate key {json.dumps(key)} in one object (IN-DUPLICATE)")
        out[key] = value
    return out


def parse_json(text: str, where: str, strict: bool = True) -> Any:
    """IN-DEPTH, IN-INT, IN-FINITE, IN-DUPLICATE: ``text`` as a JSON value, or one line.
    ``strict=False`` accepts raw control characters inside strings (Graphviz's output)."""
    check_json_depth(text, where)
    if not text.strip():
        raise InputError(where, "empty file (expected JSON)")
    try:
        return json.loads(
            text,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
            object_pairs_hook=_no_duplicates,
            strict=strict,
        )
    except _Refused as exc:
        raise InputError(where, str(exc)) from None
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            raise InputError(where, f"more than one JSON value (line {exc.lineno})") from None
        raise InputError(where, f"not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except (RecursionError, ValueError) as exc:  # belt and braces behind the pre-scan
        raise InputError(where, f"not valid JSON ({exc.__class__.__name__})") from None


def load_json(path: str | Path, where: str | None = None) -> Any:
    """IN-READ + :func:`parse_json` of a file."""
    where = str(path) if where is None else where
    return parse_json(read_text(path, where), where)


def json_file_data(path: Path) -> Any:
    """What a ``.json`` file holds, for a reader asking whether the file is its input:
    ``None`` for another suffix or a file that is not readable JSON (left to the reader
    it belongs to, which reports it); a JSON ``null`` is no reader's input either."""
    if path.suffix.lower() != ".json":
        return None
    try:
        return load_json(path)
    except InputError:
        return None


# -- TOML ------------------------------------------------------------------------------------


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """IN-DEPTH, IN-INT, IN-FINITE: ``text`` as a TOML document, or one line (TOML itself
    refuses duplicate keys)."""
    check_toml_depth(text, where)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(where, f"not valid TOML ({exc})") from None
    except (RecursionError, ValueError) as exc:
        raise InputError(where, f"not valid TOML ({exc.__class__.__name__})") from None
    check_values(data, where)
    return data


def load_toml(path: str | Path, where: str | None = None) -> dict[str, Any]:
    where = str(path) if where is None else where
    return parse_toml(read_text(path, where), where)


def check_values(value: Any, where: str) -> None:
    """IN-DEPTH, IN-INT, IN-FINITE on a decoded value, iteratively (no recursion)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        v, at = stack.pop()
        if len(at) > MAX_DEPTH:
            raise InputError(
                where, f"nested deeper than {MAX_DEPTH} levels (IN-DEPTH)", json_path(at[:8]) + "…"
            )
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            if abs(v) > MAX_INT:
                raise InputError(where, f"integer beyond ±{MAX_INT} (IN-INT)", json_path(at))
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise InputError(where, f"{v} is not a finite number (IN-FINITE)", json_path(at))
        elif isinstance(v, dict):
            stack.extend((x, (*at, k)) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((x, (*at, i)) for i, x in enumerate(v))
