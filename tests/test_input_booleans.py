"""IN-BOOL: a boolean in a JSON or TOML input is a real ``true`` or ``false``.

Every boolean attribute of every input kind (process graphs, actor graphs, alarm
timelines, paging scenarios, sweep files) is given each bad value in turn; the command
reading it refuses with one line naming the file and the place, exit 2. The attribute
lists are derived from the model (the ``bool`` fields of the specs) and from the readers'
own tables, so a new boolean attribute is attacked without editing this file.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.inputs import paging_scenarios
from creditflow.conformance.inputs.schemas import BOOLEAN_NODE_ATTRIBUTES, boolean
from creditflow.conformance.sweep.families import FAMILY_KINDS, _boolean
from creditflow.model.accounts.graph import ActorSpec
from creditflow.model.alarms.rules import ConnectionSpec
from creditflow.model.network.graph import NodeSpec

BAD = ["true", "false", "True", 0, 1, None, 0.0]
SPEC = Path(__file__).resolve().parents[1] / "spec"


def bool_fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if f.type in ("bool", bool)}


def test_every_boolean_attribute_is_listed() -> None:
    """The readers check exactly the model's booleans that a file can set."""
    assert set(BOOLEAN_NODE_ATTRIBUTES) == bool_fields(NodeSpec)
    assert bool_fields(ActorSpec) <= set(BOOLEAN_NODE_ATTRIBUTES)
    # consumes and starts_later are derived from the steps, not written in a file
    assert bool_fields(ConnectionSpec) - {"consumes", "starts_later"} == set(TIMELINE_FLAGS)


def _graph(attr: str, value: Any) -> dict[str, Any]:
    nodes = [{"id": "r", "source": True}, {"id": "q", attr: value}]
    return {"directed": True, "nodes": nodes, "edges": [{"source": "r", "target": "q"}]}


def _actors(attr: str, value: Any) -> dict[str, Any]:
    doc = json.loads((SPEC / "graphs" / "accounts" / "seed-small.json").read_text())
    doc["nodes"][-1][attr] = value
    return doc


TIMELINE_FLAGS = ("capability", "empty_body", "complies")


def _timeline(flag: str, value: Any) -> dict[str, Any]:
    doc = json.loads((SPEC / "alarms" / "two-sources.json").read_text())
    doc["connections"][0][flag] = value
    return doc


def _paging_cases() -> list[tuple[str, str]]:
    steps = [
        (op, name)
        for op, params in paging_scenarios._PARAMS.items()
        for name, (kind, _) in params.items()
        if kind is bool
    ]
    assert steps  # publish.persistent, fetch.ack
    return [*(f"{op}.{name}" for op, name in steps), "settle", "queue.durable"]


def _paging(where: str, value: Any) -> dict[str, Any]:
    doc = json.loads((SPEC / "paging" / "small-embedded.json").read_text())
    if where == "queue.durable":
        doc["queue"]["durable"] = value
    elif where == "settle":
        doc["steps"][0]["settle"] = value
    else:
        op, name = where.split(".")
        step = next(s for s in doc["steps"] if s["op"] == op)
        step[name] = value
    return doc


def _sweep_cases() -> list[tuple[str, str]]:
    found = [
        (kind, p.name) for kind, k in FAMILY_KINDS.items() for p in k.params if p.check is _boolean
    ]
    assert found
    return found


def _toml(value: Any) -> str:
    return json.dumps(value) if value is not None else '"null"'


CASES: list[tuple[str, str, Any]] = [
    *(("graph", a, v) for a in BOOLEAN_NODE_ATTRIBUTES for v in BAD),
    *(("actors", a, v) for a in sorted(bool_fields(ActorSpec)) for v in BAD),
    *(("timeline", f, v) for f in TIMELINE_FLAGS for v in BAD),
    *(("paging", w, v) for w in _paging_cases() for v in BAD),
    *(("sweep", f"{k}.{p}", v) for k, p in _sweep_cases() for v in BAD if v is not None),
    *(("sweep-settings", "random.per_edge", v) for v in BAD if v is not None),
]


@pytest.mark.parametrize(("kind", "attr", "value"), CASES, ids=repr)
def test_a_non_boolean_is_refused_naming_file_and_place(
    kind: str, attr: str, value: Any, tmp_path: Path
) -> None:
    if kind == "graph":
        path = tmp_path / "g.json"
        path.write_text(json.dumps(_graph(attr, value)))
        args, place = ["check", str(path)], f"nodes[1].{attr}"
    elif kind == "actors":
        path = tmp_path / "actors.json"
        doc = _actors(attr, value)
        path.write_text(json.dumps(doc))
        args, place = ["accounts", "check", str(path)], f"nodes[{len(doc['nodes']) - 1}].{attr}"
    elif kind == "timeline":
        path = tmp_path / "t.json"
        path.write_text(json.dumps(_timeline(attr, value)))
        args, place = ["alarms", "run", str(path)], f"connection publisher: {attr}"
    elif kind == "paging":
        path = tmp_path / "p.json"
        path.write_text(json.dumps(_paging(attr, value)))
        args, place = ["paging", str(path)], attr.split(".")[-1]
    elif kind == "sweep-settings":
        path = tmp_path / "s.toml"
        path.write_text(
            'name = "s"\nseed = 1\n[settings]\ncredits = { random = { count = 2, '
            f"initial = [1, 3], more_after = [1, 2], per_edge = {_toml(value)} }} }}\n"
            '[[family]]\nkind = "broker"\nname = "f"\n'
        )
        args, place = ["sweep", str(path), "--out", str(tmp_path / "out"), "--dry-run"], attr
    else:
        family, param = attr.split(".")
        path = tmp_path / "s.toml"
        path.write_text(
            f'name = "s"\nseed = 1\n[[family]]\nkind = "{family}"\nname = "f"\n'
            f"{param} = {_toml(value)}\n"
        )
        args, place = ["sweep", str(path), "--out", str(tmp_path / "out"), "--dry-run"], param
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert path.name in lines[0] and place in lines[0], lines[0]
    assert "true or false" in lines[0], lines[0]


@pytest.mark.parametrize("value", [True, False])
def test_real_booleans_are_read(value: bool) -> None:
    assert boolean(value) is value
    for bad in BAD:
        with pytest.raises(ValueError, match="must be true or false"):
            boolean(bad)


def test_text_formats_keep_their_words(tmp_path: Path) -> None:
    """IN-BOOL: DOT (and an untyped GraphML key) carry strings by nature; there the words
    true/false are the booleans, as the model reads them."""
    dot = tmp_path / "g.dot"
    dot.write_text(
        'digraph g { r [source=true]; q [may_crash="false"]; '
        "r -> q [initial_credit=2, more_credit_after=1]; }\n"
    )
    result = CliRunner().invoke(main, ["check", str(dot)])
    assert result.exit_code == 0, result.stderr
