"""Schemas of the JSON documents creditflow reads (IN-SCHEMA), as pydantic v2 models.

A document is decoded by :mod:`creditflow.conformance.inputs.reading` (bounded depth and
integers, no duplicate keys) and then validated here, strictly (a string is never a
boolean or a number), before any model code sees it. :func:`validate` turns the first
schema violation into one :class:`~creditflow.conformance.inputs.reading.InputError`
naming the file and the JSON path, e.g. ``g.json: nodes[3].id: must be a string or an
integer``.

Only shape and types live here; the meaning of attributes (which node attributes
exist, credit ranges, IN-LIMITS) is checked by the model's own validators, which every
format (JSON, GraphML, DOT) shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from creditflow.conformance.inputs.reading import InputError, checked_name, json_path
from creditflow.model.network.graph import MAX_EDGES, MAX_NAME_LENGTH, MAX_NODES

M = TypeVar("M", bound=BaseModel)


def _node_id(value: Any) -> str | int:
    """IN-SCHEMA: a node id is a non-empty string or an integer (never a bool, list,
    object or null), of bounded length (IN-LIMITS)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"a node id must be a string or an integer, got {_kind(value)}")
    if isinstance(value, str) and not value:
        raise ValueError("a node id must not be empty")
    if len(str(value)) > MAX_NAME_LENGTH:
        raise ValueError(f"a node id longer than {MAX_NAME_LENGTH} characters (IN-LIMITS)")
    return value


def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        type(None): "null",
        bool: "a boolean",
        str: "a string",
        int: "an integer",
        float: "a number",
    }.get(type(value), "a value")


NodeId = Annotated[Any, BeforeValidator(_node_id)]


def _graph_attributes(value: Any) -> Any:
    """IN-SCHEMA: a node-link document's ``graph`` object, its ``name`` checked."""
    if isinstance(value, dict) and "name" in value:
        checked_name(value["name"], "its name")
    return value


#: IN-BOOL: the node attributes that are booleans, in process graphs (NET-NODE) and actor
#: graphs (AC-GRAPH); both are read as node-link JSON by :class:`NodeLinkNode`
BOOLEAN_NODE_ATTRIBUTES = ("source", "checks_blocked", "stalled", "may_crash")


def boolean(value: Any) -> bool:
    """IN-BOOL: a boolean of a JSON (or TOML) input is a real ``true`` or ``false``: the
    string ``"true"``, the numbers ``0`` and ``1``, ``null`` are refused (``ValueError``
    whose message the caller prefixes with the file and the place). The one check every
    reader of booleans uses: graphs, actor graphs, alarm timelines, paging scenarios,
    sweep files."""
    if not isinstance(value, bool):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:39] + "…"
        raise ValueError(
            f"must be true or false, got {_kind(value)}"
            + (f" {shown}" if isinstance(value, (str, int, float)) else "")
        )
    return value


Boolean = Annotated[Any, BeforeValidator(boolean)]


class _Doc(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


class NodeLinkNode(_Doc):
    """One ``nodes[i]``: an ``id`` plus attributes (their meaning: NET-NODE)."""

    id: NodeId
    source: Boolean = None
    checks_blocked: Boolean = None
    stalled: Boolean = None
    may_crash: Boolean = None

    def attributes(self) -> dict[str, Any]:
        """Every attribute given but the id (IN-BOOL: the booleans already checked)."""
        given = {k: getattr(self, k) for k in BOOLEAN_NODE_ATTRIBUTES if k in self.model_fields_set}
        return given | (self.model_extra or {})


class NodeLinkEdge(_Doc):
    """One ``edges[i]`` (or ``links[i]``): ``source``, ``target`` plus attributes."""

    source: NodeId
    target: NodeId


class NodeLinkGraph(_Doc):
    """NET-FILE / IN-SCHEMA: a networkx node-link document (``edges`` or ``links``)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    directed: bool = True
    multigraph: bool = False
    graph: Annotated[dict[str, Any], BeforeValidator(_graph_attributes)] = Field(
        default_factory=dict
    )
    nodes: list[NodeLinkNode] = Field(max_length=MAX_NODES)
    edges: list[NodeLinkEdge] | None = Field(default=None, max_length=MAX_EDGES)
    links: list[NodeLinkEdge] | None = Field(default=None, max_length=MAX_EDGES)


class Expectations(_Doc):
    """AD-EXPECTATIONS / IN-SCHEMA: known divergences of one implementation."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    adapter: str = ""
    description: str = ""
    known_divergences: dict[str, str]


class ItfState(_Doc):
    """One ``states[i]`` of an ITF trace: variables, an optional ``#meta`` object, and
    Quint's ``mbt::actionTaken`` (a name) and ``mbt::nondetPicks`` (an object)."""

    meta: dict[str, Any] | None = Field(default=None, alias="#meta")
    action: str | None = Field(default=None, alias="mbt::actionTaken")
    picks: dict[str, Any] | None = Field(default=None, alias="mbt::nondetPicks")


class CreditflowMeta(_Doc):
    """``#meta.creditflow``: the fields ``show`` prints are of their type (IN-SCHEMA), so
    that a tampered trace never puts a Python repr (``['x']``, ``None``) before a user;
    every other key is the reading family's to check."""

    model: str | None = Field(default=None, max_length=MAX_NAME_LENGTH)
    property: str | None = Field(default=None, max_length=MAX_NAME_LENGTH)
    properties: list[Annotated[str, Field(max_length=MAX_NAME_LENGTH)]] | None = None
    kind: str | None = Field(default=None, max_length=MAX_NAME_LENGTH)
    detail: str | None = None
    length: int | None = None


class ItfMeta(_Doc):
    """``#meta`` of a trace: creditflow's own record, when present, is an object."""

    creditflow: CreditflowMeta = Field(default_factory=CreditflowMeta)


class ItfTrace(_Doc):
    """TRACE-ITF / IN-SCHEMA: the shape of an ITF document (values: :func:`decode`)."""

    meta: ItfMeta | None = Field(default=None, alias="#meta")
    params: list[str] | None = None
    vars: list[str]
    states: list[ItfState] = Field(min_length=1)
    loop: int | None = None


def _message(error: Mapping[str, Any]) -> str:
    msg = str(error.get("msg", "invalid"))
    msg = msg.removeprefix("Value error, ")
    kind = error.get("type", "")
    if kind == "missing":
        return "missing (required)"
    if kind == "extra_forbidden":
        return "unknown key"
    ctx = error.get("ctx") or {}
    if kind == "too_short":
        return (
            "must be a non-empty list"
            if ctx.get("min_length") == 1
            else f"must have at least {ctx.get('min_length')} items"
        )
    if kind == "too_long":
        return f"has more than {ctx.get('max_length')} items (IN-LIMITS)"
    if kind in ("model_type", "model_attributes_type"):
        return f"must be a JSON object, got {_kind(error.get('input'))}"
    if kind in (
        "bool_type",
        "int_type",
        "string_type",
        "list_type",
        "dict_type",
        "model_type",
        "float_type",
    ):
        msg = msg.replace("Input should be", "must be")
        return f"{msg}, got {_kind(error.get('input'))}"
    return msg


def validate(model: type[M], data: Any, where: str) -> M:
    """IN-SCHEMA: ``data`` as a ``model``, or one :class:`InputError` line naming
    ``where`` and the JSON path of the first problem."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = [p for p in first.get("loc", ()) if not (isinstance(p, str) and "[" in p)]
        raise InputError(where, _message(first), json_path(loc) or "document") from None
