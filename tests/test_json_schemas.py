"""OUT-JSON-SCHEMA: every command with ``--json`` has a published schema in spec/schemas/,
the schemas are strict enough to catch drift, and what the commands print on
representative inputs validates (tests/conftest.py also validates every other ``--json``
run the tests make)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from tests.json_schemas import LINES, SCHEMAS, documents, schema, schema_name, validate
from tests.observe_traces import generate

#: schemas of an option's variant of a command (the command's own schema is derived)
VARIANTS = {"paging-against-broker", "sweep-dry-run"}
CORPUS = Path(__file__).resolve().parents[1] / "conformance" / "corpus" / "credit_flow"
MUTANT = "mutant:peer-down-no-unblock"


def json_commands(group: click.Group, prefix: tuple[str, ...] = ()) -> set[str]:
    """Schema names of every command of ``group`` that has a ``--json`` option."""
    ctx = click.Context(group)
    found = set()
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        words = (*prefix, name)
        if isinstance(command, click.Group):
            found |= json_commands(command, words)
        elif any("--json" in p.opts for p in command.params if isinstance(p, click.Option)):
            found.add(schema_name([*words, "--json"]) or "")
    return found


def test_every_json_command_has_a_schema_and_every_schema_a_command() -> None:
    published = {p.stem for p in SCHEMAS.glob("*.json")}
    assert published == json_commands(main) | VARIANTS


def closed_objects(node: Any) -> list[dict[str, Any]]:
    """Every sub-schema of ``node`` that names its properties."""
    if not isinstance(node, dict):
        return []
    found = [node] if "properties" in node else []
    children = [
        *node.get("properties", {}).values(),
        *node.get("oneOf", []),
        *node.get("anyOf", []),
    ]
    children += [
        node[k] for k in ("items", "additionalProperties") if isinstance(node.get(k), dict)
    ]
    for child in children:
        found += closed_objects(child)
    return found


@pytest.mark.parametrize("name", sorted(p.stem for p in SCHEMAS.glob("*.json")))
def test_schema_is_valid_and_strict(name: str) -> None:
    document = schema(name)  # check_schema against draft 2020-12
    assert document["title"].startswith("creditflow ")
    objects = closed_objects(document)
    assert objects, name
    for node in objects:
        # a fixed shape (no unknown key) or one whose other keys are constrained by a schema
        extra = node.get("additionalProperties")
        assert extra is False or isinstance(extra, dict), (name, sorted(node["properties"]))
        assert set(node["required"]) <= set(node["properties"]), name


def test_schema_names_follow_the_command_line() -> None:
    assert schema_name(["check", "fanout", "--json"]) == "check"
    assert schema_name(["check", "fanout"]) is None
    assert schema_name(["accounts", "check", "seed", "--json"]) == "accounts-check"
    assert schema_name(["paging", "x", "--against-broker", "--json"]) == "paging-against-broker"
    assert schema_name(["sweep", "smoke", "--dry-run", "--json"]) == "sweep-dry-run"


def test_sweep_dry_run_json_is_the_plan(tmp_path: Path) -> None:
    """SW-DRY-RUN: ``sweep --dry-run --json`` prints the plan as one JSON object (its
    schema is checked by the autouse fixture), per family and in all, and writes
    nothing; without --json it is still a table."""
    out = tmp_path / "sw"
    args = ["sweep", "smoke", "--out", str(out), "--dry-run"]
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    validate("sweep-dry-run", result.stdout)
    assert plan["sweep"] == "smoke" and plan["out"] == str(out)
    assert plan["cases"] == sum(f["cases"] for f in plan["families"]) > 0
    assert plan["pending"] == plan["cases"] and plan["foreign"] == 0  # nothing ran yet
    assert all(f["graphs"] > 0 and f["pending"] == f["cases"] for f in plan["families"])
    assert not out.exists()
    table = CliRunner().invoke(main, args)
    assert table.exit_code == 0 and "to run" in table.stdout
    with pytest.raises(json.JSONDecodeError):
        json.loads(table.stdout)


REPRESENTATIVE = {
    "check deadlock": (["check", "stalled-queue", "--credit", "2,1", "--publishes", "10"], 10),
    "check settled by Z3": (["check", "fanout", "--max-states", "100"], 0),
    "prove counterexample": (["prove", "stalled-queue"], 10),
    "prove symbolic": (["prove", "stalled-queue", "--symbolic"], 10),  # Z3-OWN-CREDITS
    "synth mailbox": (
        ["synth", "stalled-queue", "--goal", "mailbox", "--bound", "800", "--credit", "400,200"],
        0,
    ),
    "conform divergence": (["conform", "--adapter", MUTANT, "--seed", "3"], 1),
    "replay corpus": (["replay", str(CORPUS), "--adapter", MUTANT], 1),
    "accounts check": (["accounts", "check", "seed", "--naive-bound"], 12),
    "accounts compare": (["accounts", "compare"], 0),
    "accounts conform": (["accounts", "conform", "--adapter", "reference", "--runs", "3"], 0),
    "alarms check": (["alarms", "check"], 0),
    "alarms run": (["alarms", "run", "two-sources"], 0),
    "paging": (["paging", "small-embedded"], 0),
    "observe validate": (["observe", "validate", "trace.json"], 0),
    "show network trace": (["show", str(CORPUS / "stalled-queue-network-2-1.itf.json")], 0),
    "show process trace": (["show", str(CORPUS / "cf13-disabled-0-0.itf.json")], 0),
}


@pytest.mark.parametrize("case", sorted(REPRESENTATIVE))
def test_representative_outputs_validate(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args, code = REPRESENTATIVE[case]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trace.json").write_text(json.dumps(generate(steps=200)))
    result = CliRunner().invoke(main, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == code, result.output
    name = schema_name([*args, "--json"])
    assert name is not None
    validate(name, result.stdout)
    assert documents(name, result.stdout)


@pytest.fixture(scope="module")
def check_output(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("check"))
        result = CliRunner().invoke(main, ["check", "stalled-queue", "--json"])
    return json.loads(result.stdout)


def fails(name: str, document: Any) -> bool:
    try:
        validate(name, json.dumps(document))
    except jsonschema.ValidationError:
        return True
    return False


def test_a_missing_key_an_unknown_key_and_a_wrong_type_are_drift(
    check_output: dict[str, Any],
) -> None:
    assert not fails("check", check_output)
    missing = {k: v for k, v in check_output.items() if k != "deadlock"}
    unknown = {**check_output, "deadlocks": True}
    wrong_type = {**check_output, "states": "9"}
    nested = copy.deepcopy(check_output)
    nested["properties"]["PROP-NO-DEADLOCK"] = "violated"
    assert all(fails("check", d) for d in (missing, unknown, wrong_type, nested))


def test_check_carries_its_scope(check_output: dict[str, Any]) -> None:
    """SCOPE-JSON: the supply asked about is "every", a number or a number per source."""
    for supply in ("every", 3, {"reader": 3}):
        assert not fails("check", {**check_output, "scope": {"supply": supply}})
    assert fails("check", {**check_output, "scope": {"supply": "some"}})
    assert fails("check", {**check_output, "scope": {}})
    assert fails("check", {k: v for k, v in check_output.items() if k != "scope"})


def test_json_lines_are_validated_line_by_line() -> None:
    assert {p.stem for p in SCHEMAS.glob("*.json")} >= LINES
    header = {"timeline": "t", "source": "s", "description": "", "profile": "3.10.8", "steps": 0}
    end = {"end": True, "steps": 0, "violations": []}
    good = "\n".join(json.dumps(d) for d in (header, end))
    validate("alarms-run", good)
    with pytest.raises(jsonschema.ValidationError):
        validate("alarms-run", good + "\n" + json.dumps({"end": "yes"}))
