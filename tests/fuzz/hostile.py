"""Shared pieces of the input fuzz suite: running the real CLI in a temporary working
folder and checking the promises of IN-ONE-LINE (one line, documented exit code, no
traceback, nothing written outside the output folder)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from creditflow.conformance.cli import main

#: every documented exit code (README "Exit codes"; 130/143: interrupted)
DOCUMENTED = {0, 1, 2, 3, 4, 10, 12, 130, 143}
ROOT = Path(__file__).resolve().parents[2]


def fuzz_settings(max_examples: int) -> settings:
    """The fuzz suite's Hypothesis settings: ``max_examples`` cases, derandomized (the
    same cases in every run), no example database, no deadline, no health checks."""
    return settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def run_cli(args: list[str], cwd: Path, allowed: tuple[str, ...] = ()) -> Any:
    """Run ``creditflow ARGS`` in-process in ``cwd`` and check the promises; return the
    result. ``allowed``: folders (relative to ``cwd``) the command may write into."""
    before = tree(cwd)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, args, catch_exceptions=True)
    finally:
        os.chdir(old)
    exc = result.exception
    assert exc is None or isinstance(exc, SystemExit), f"creditflow {' '.join(args)} raised {exc!r}"
    assert result.exit_code in DOCUMENTED, (result.exit_code, result.stderr)
    err = result.stderr
    assert "Traceback" not in err and "Traceback" not in result.stdout
    if result.exit_code == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 or lines[-1].startswith("Error: "), err
    new = tree(cwd) - before
    outside = [p for p in new if not any(p == a or p.startswith(a + "/") for a in allowed)]
    assert not outside, f"wrote outside {allowed}: {outside}"
    return result


HOSTILE_VALUES = [
    None,
    "false",
    "true",
    [],
    {},
    -1,
    0,
    1.5,
    "x" * 300,
    "../../etc/passwd",
    "/abs/path",
    "a\x00b",
    "a\nb\x1b[31m",
    True,
    [[[]]],
    {"id": None},
    "9" * 30,
    -(10**17),
]


def paths_of(doc: Any) -> list[tuple[Any, ...]]:
    """Every path (keys and indices) to a value inside ``doc``, iteratively."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack:
        value, at = stack.pop()
        out.append(at)
        if isinstance(value, dict):
            stack.extend((v, (*at, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*at, i)) for i, v in enumerate(value))
    return sorted(out, key=repr)


def _set(doc: Any, at: tuple[Any, ...], value: Any, delete: bool = False) -> Any:
    doc = json.loads(json.dumps(doc))
    if not at:
        return value
    parent = doc
    for key in at[:-1]:
        parent = parent[key]
    if delete:
        del parent[at[-1]]
    else:
        parent[at[-1]] = value
    return doc


@st.composite
def mutated_json(draw: Any, doc: Any) -> bytes:
    """A hostile variant of the JSON document ``doc`` (IN-* classes): a wrong type at a
    random place, a deleted key, a duplicated key, deep nesting, a huge integer, NaN or
    Infinity, binary junk, or a truncation."""
    paths = paths_of(doc)
    kind = draw(
        st.sampled_from(
            [
                "value",
                "value",
                "delete",
                "duplicate",
                "deep",
                "bigint",
                "nan",
                "junk",
                "truncate",
                "empty",
            ]
        )
    )
    text = json.dumps(doc)
    if kind == "value":
        at = draw(st.sampled_from(paths))
        return json.dumps(_set(doc, at, draw(st.sampled_from(HOSTILE_VALUES)))).encode()
    if kind == "delete":
        keyed = [p for p in paths if p and isinstance(p[-1], str)] or [()]
        at = draw(st.sampled_from(keyed))
        return json.dumps(_set(doc, at, None, delete=bool(at))).encode()
    if kind == "duplicate":
        key = draw(st.sampled_from(sorted(doc) if isinstance(doc, dict) else ["x"]))
        return ("{" + json.dumps(key) + ": 1, " + text[1:]).encode()
    if kind == "deep":
        at = draw(st.sampled_from(paths))
        depth = draw(st.sampled_from([60, 1000, 100_000]))
        nested = "[" * depth + "1" + "]" * depth
        marker = '"@@DEEP@@"'
        return json.dumps(_set(doc, at, "@@DEEP@@")).replace(marker, nested).encode()
    if kind == "bigint":
        at = draw(st.sampled_from(paths))
        digits = draw(st.sampled_from([19, 400, 5000]))
        marker = '"@@INT@@"'
        return json.dumps(_set(doc, at, "@@INT@@")).replace(marker, "9" * digits).encode()
    if kind == "nan":
        at = draw(st.sampled_from(paths))
        literal = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999"]))
        return json.dumps(_set(doc, at, "@@N@@")).replace('"@@N@@"', literal).encode()
    if kind == "junk":
        return draw(st.binary(min_size=1, max_size=64))
    if kind == "truncate":
        return text.encode()[: draw(st.integers(0, max(0, len(text) - 1)))]
    return b""
