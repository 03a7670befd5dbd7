"""The published JSON Schemas of the commands' ``--json`` outputs (spec/schemas/,
OUT-JSON-SCHEMA) and the check that an output matches its schema.

``schema_name`` maps a command line to its schema; JSON Lines outputs (``paging``,
``alarms run``) are validated line by line. ``tests/conftest.py`` applies
``check_cli_result`` to every ``--json`` run that a test makes through click's CliRunner.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "spec" / "schemas"
#: commands of a group: their schema is named "GROUP-COMMAND"
GROUPS = {"accounts", "alarms", "observe"}
#: schemas whose output is JSON Lines, one object per line
LINES = {"paging", "alarms-run"}
#: exit codes with which a command prints its --json document (OUT-EXIT: 5 after it)
VERDICT_CODES = {0, 1, 3, 4, 5, 10, 12}


def schema_name(args: Sequence[str]) -> str | None:
    """The schema of ``creditflow ARGS --json``, or None when ARGS ask for no JSON."""
    words = [str(a) for a in args]
    if "--json" not in words or not words:
        return None
    name = f"{words[0]}-{words[1]}" if words[0] in GROUPS and len(words) > 1 else words[0]
    if name == "paging" and "--against-broker" in words:
        return "paging-against-broker"
    if name == "sweep" and "--dry-run" in words:
        return "sweep-dry-run"
    return name


@cache
def schema(name: str) -> dict[str, Any]:
    path = SCHEMAS / f"{name}.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(document)
    return document


def documents(name: str, output: str) -> list[Any]:
    """The JSON documents of an output: one, or one per line for JSON Lines."""
    if name in LINES:
        return [json.loads(line) for line in output.splitlines() if line.strip()]
    return [json.loads(output)]


def validate(name: str, output: str) -> None:
    """Raise jsonschema.ValidationError unless ``output`` matches schema ``name``."""
    validator = jsonschema.Draft202012Validator(schema(name))
    for document in documents(name, output):
        validator.validate(document)


def check_cli_result(args: Sequence[str] | None, exit_code: int, stdout: str) -> None:
    """Validate the stdout of a ``--json`` command that ended with a verdict."""
    name = schema_name(args or ())
    if name is None or exit_code not in VERDICT_CODES or not stdout.strip():
        return
    if not (SCHEMAS / f"{name}.json").exists():
        raise AssertionError(f"no schema spec/schemas/{name}.json for `{' '.join(args or ())}`")
    validate(name, stdout)
