"""AMQP families of a sweep: policies x sizes x topologies (SW-AMQP).

A family of kind ``amqp`` starts from an AMQP topology (a preset of
``spec/graphs/amqp/`` or a topology file, AMQ-TOPOLOGY) and puts in the receiving end's
credit policy and the receiving session's window policy with the sizes swept over, so
that "which client settings stall" is one sweep. Each parameter point is one topology
document, checked through the input layer (AMQ-TOPOLOGY: a point the model cannot run
is refused before anything runs, SW-FILE). The checker ``amqp`` runs the AMQP check
(the AMQP family's checking part, ``check_amqp``: the API ``creditflow check``
uses) on the case's supply; the row's ``claim_scope`` and ``claim`` say what its verdict
claims (SW-AMQP-CLAIM).

Example::

    >>> doc = amqp_document({**AMQP_PARAMS_DEFAULTS, "topology": "ring-one-held",
    ...                      "session_policy": "ring", "session_window": 3})
    >>> [n.get("window") for n in doc["nodes"] if n["kind"] == "session"][1]
    {'policy': 'ring', 'slots': 3}
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import replace
from typing import Any

from creditflow.conformance.explore.results import SupplyCheck as AmqpCheckResult
from creditflow.conformance.family.registry import get as get_family
from creditflow.conformance.inputs.amqp_topologies import (
    AmqpInput,
    AmqpTopologyError,
    amqp_preset_names,
    amqp_settings,
    read_amqp_file,
    read_amqp_preset,
    topology_from_document,
)
from creditflow.conformance.sweep.checkers import CaseBudget, CheckerOutcome
from creditflow.conformance.sweep.param_checks import word_or_count


def amqp_codec() -> Any:
    """FAM-CODEC: the AMQP family's trace codec, found through the registry (the sweep
    sits below the families' packages)."""
    part = get_family("amqp").codec
    assert part is not None  # the AMQP family has a codec
    return part.load()


#: SW-AMQP: the kind name of AMQP families in a sweep file
AMQP_KIND = "amqp"
#: SW-AMQP: the checker AMQP families use (and the only one they accept)
AMQP_CHECKER = "amqp"
#: SW-AMQP: credit policies a family may put in (``keep``: the topology's own)
CREDIT_POLICIES = ("keep", "window", "rabbitmq4")
#: SW-AMQP: window policies a family may put in (``keep``: the topology's own)
SESSION_POLICIES = ("keep", "fixed", "never", "ring", "rabbitmq4")
RENEW_ON = ("arrival", "settle")

AMQP_PARAMS_DEFAULTS: dict[str, Any] = {
    "topology": "rabbitmq4-consume",
    "credit_policy": "keep",
    "credit_window": 4,
    "credit_threshold": "half",
    "renew_on": "arrival",
    "session_policy": "keep",
    "session_window": 4,
    "session_threshold": "half",
    "holds": "keep",
    "leader_changes": 0,
}
"""SW-AMQP: the parameters of kind ``amqp`` and their defaults."""

#: SW-AMQP-CLAIM: what a row's verdict claims
CLAIM_SCOPES = ("supply", "directed-witness", "budget", "every-supply")


class AmqpFamilyError(ValueError):
    """A parameter point of an AMQP family the model cannot run; the message says why."""


def _threshold(value: Any, window: int, what: str) -> int:
    threshold = window // 2 if value == "half" else value
    if not isinstance(threshold, int) or not 0 <= threshold < window:
        raise AmqpFamilyError(
            f"{what} {value!r} with a window of {window}: needs 0 <= threshold < window"
        )
    return threshold


def _credit_table(params: dict[str, Any]) -> dict[str, Any] | None:
    """AMQ-POL-CREDIT-WINDOW / AMQ-RMQ-LINK-CREDIT table of a point, or ``None`` to keep."""
    policy, w = params["credit_policy"], params["credit_window"]
    if policy == "window":
        return {
            "policy": "window",
            "window": w,
            "threshold": _threshold(params["credit_threshold"], w, "credit_threshold"),
            "renew_on": params["renew_on"],
        }
    if policy == "rabbitmq4":
        return {"policy": "rabbitmq4", "max_link_credit": w}
    return None


def _window_table(params: dict[str, Any]) -> dict[str, Any] | None:
    """AMQ-POL-WINDOW-* / AMQ-RMQ-SESSION-WINDOW table of a point, or ``None`` to keep."""
    policy, w = params["session_policy"], params["session_window"]
    if policy == "fixed":
        threshold = _threshold(params["session_threshold"], w, "session_threshold")
        return {"policy": "fixed", "window": w, "threshold": threshold}
    if policy == "never":
        return {"policy": "never", "window": w}
    if policy == "ring":
        return {"policy": "ring", "slots": w}
    if policy == "rabbitmq4":
        return {"policy": "rabbitmq4", "max_incoming_window": w}
    return None


def base_input(topology: str) -> AmqpInput:
    """The topology a family starts from: an AMQP preset name or a topology file
    (AMQ-TOPOLOGY, AMQ-PRESETS), read through the input layer."""
    if topology.endswith(".json") or "/" in topology:
        return read_amqp_file(topology, "file")
    return read_amqp_preset(topology)


def amqp_document(params: dict[str, Any]) -> dict[str, Any]:
    """SW-AMQP: the topology document of one parameter point: the base topology with the
    point's credit policy put on the receiving end (the receiver endpoint; in the
    publish shape the broker session's link credit) and its window policy on the
    receiving session (the session next to the receiving end), and ``holds`` on the
    receiver. :class:`AmqpFamilyError` when the model cannot run it."""
    try:
        base = base_input(str(params["topology"]))
    except AmqpTopologyError as exc:
        raise AmqpFamilyError(str(exc)) from None
    doc = copy.deepcopy(base.document)
    nodes = doc["nodes"]
    shape = base.topology.shape
    if shape == "publish":
        receiving_session = next(
            i for i in range(len(nodes) - 1, -1, -1) if nodes[i]["kind"] == "session"
        )
        credit_owner = receiving_session
        receiver = None
    else:
        receiver = next(i for i, n in enumerate(nodes) if n.get("role") == "receiver")
        receiving_session = max(
            i for i, n in enumerate(nodes) if n["kind"] == "session" and i < receiver
        )
        credit_owner = receiver
    credit = _credit_table(params)
    if credit is not None:
        if shape == "publish" and credit["policy"] != "rabbitmq4":
            raise AmqpFamilyError(
                "credit_policy 'window' on a publish topology: the broker session's "
                "credit policy is RabbitMQ 4's (use 'rabbitmq4' or 'keep')"
            )
        nodes[credit_owner] = {**nodes[credit_owner], "credit": credit}
    window = _window_table(params)
    if window is not None:
        nodes[receiving_session] = {**nodes[receiving_session], "window": window}
    if params["holds"] != "keep":
        if receiver is None:
            raise AmqpFamilyError("holds on a publish topology: it has no receiving application")
        nodes[receiver] = {**nodes[receiver], "holds": params["holds"]}
    if params.get("leader_changes", 0):  # AMQ-FAULT-LEADER-CHANGE (SW-AMQP-FAULTS)
        if shape != "consume":
            raise AmqpFamilyError(
                "leader_changes on a publish or link topology: only a consume shape's "
                "queue takes credit requests to re-send"
            )
        q = next(i for i, n in enumerate(nodes) if n["kind"] == "queue")
        nodes[q] = {**nodes[q], "leader_changes": params["leader_changes"]}
    name = doc["graph"].get("name", str(params["topology"]))
    doc["graph"] = {**doc["graph"], "name": name}
    try:
        topology_from_document(doc, f"sweep topology {params['topology']}")
    except AmqpTopologyError as exc:
        raise AmqpFamilyError(str(exc)) from None
    return doc


def check_topology_param(value: Any) -> str:
    """SW-AMQP: a preset name or a topology file that reads (the input layer's line)."""
    if not isinstance(value, str) or not value:
        raise AmqpFamilyError(
            f"must be an AMQP preset ({', '.join(amqp_preset_names())}) or a topology "
            f"file, got {value!r}"
        )
    try:
        base_input(value)
    except AmqpTopologyError as exc:
        raise AmqpFamilyError(str(exc)) from None
    return value


check_threshold_param = word_or_count("half", 0, AmqpFamilyError)
check_holds_param = word_or_count("keep", 0, AmqpFamilyError)


def document_digest(doc: dict[str, Any]) -> str:
    """SW-CASE-ID for an AMQP case: the topology document's content (not its name nor
    its description)."""
    graph = {k: v for k, v in doc.get("graph", {}).items() if k not in ("name", "description")}
    body = {
        "graph": graph,
        "nodes": doc["nodes"],
        "edges": doc.get("edges", doc.get("links")),
        "v": amqp_codec().version,
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def amqp_features(doc: dict[str, Any]) -> dict[str, int | bool]:
    """SW-FEATURES of an AMQP topology: a chain, so no cycles, one source, one sink;
    ``crashable`` counts the nodes a fault may hit (SW-AMQP-FAULTS: a queue with leader
    changes)."""
    nodes = doc["nodes"]
    return {
        "nodes": len(nodes),
        "edges": len(nodes) - 1,
        "sources": 1,
        "sinks": 1,
        "cycles": 0,
        "has_cycle": False,
        "largest_scc": 1,
        "max_fan_out": 1,
        "max_fan_in": 1,
        "depth": len(nodes) - 1,
        "mirror_edges": 0,
        "stalled": 0,
        "crashable": sum(1 for n in nodes if n.get("leader_changes")),
    }


def policy_label(doc: dict[str, Any]) -> tuple[int | None, int | None, str, str]:
    """SW-AMQP row settings: (credit window, its threshold, the credit label, the
    session label) of the receiving end; the credit window lands in ``credit_initial``,
    the threshold in ``credit_more_after`` and the session label in ``variant``, so the
    report's minimal safe credit reads "the least credit window whose cases all hold"."""
    nodes = doc["nodes"]
    receiver = next((n for n in nodes if n.get("role") == "receiver"), None)
    sessions = [n for n in nodes if n["kind"] == "session"]
    session = sessions[-1]  # the receiving session: the last before the receiving end
    owner = session if receiver is None else receiver  # publish: the broker session
    credit = owner.get("credit")
    window = session.get("window") or {}
    if isinstance(credit, dict) and credit.get("policy") == "window":
        w, t = credit["window"], credit.get("threshold", 0)
        label = f"window {w} at {t}" + (" on settle" if credit.get("renew_on") == "settle" else "")
    elif isinstance(credit, dict) and credit.get("policy") == "rabbitmq4":
        w, t = credit.get("max_link_credit", 170), None
        label = f"rabbitmq4 {w}"
    else:
        w, t, label = None, None, "by hand"
    wkeys = [k for k in ("window", "slots", "max_incoming_window", "capacity") if k in window]
    session_label = (
        f"session {window.get('policy')} "
        + " ".join(str(window[k]) for k in wkeys)
        + (f" at {window['threshold']}" if "threshold" in window else "")
    )
    return w, t, label, session_label.strip()


# -- the checker ------------------------------------------------------------------------


def claim_scope(result: AmqpCheckResult) -> str:
    """SW-AMQP-CLAIM: ``supply`` (a complete search of the case's supply, or its
    shortest witness), ``directed-witness`` (a violation a directed run met, not proved
    shortest, AMQ-DIRECTED-RUN), ``budget`` (nothing found within the budget: nothing
    claimed). ``every-supply`` is for a result proved for every supply; the sweep's
    check is for the case's supply, so it never says so."""
    v = result.search.violation
    if v is not None:
        return "supply" if result.shortest else "directed-witness"
    return "supply" if result.search.complete else "budget"


def amqp_checker(inp: AmqpInput, budget: CaseBudget) -> CheckerOutcome:
    """SW-AMQP-CLAIM: the AMQP check (AMQ-TS, AMQ-DIRECTED-RUN, PROP-AMQ-*) of one
    case's topology (its supply in ``inp.topology.supply``) within the case's state
    budget. A stall (PROP-AMQ-NO-STALL) is the row's deadlock; the witness length is
    stored as shortest only when breadth first found it; the claim is the check's own
    sentence (SCOPE-TEXT)."""
    t = inp.topology
    budget.tick(0)
    checking = get_family("amqp").checking.load()  # FAM-REGISTRY: the family's own search
    result = checking.check(t, {"every_supply": False, "max_states": budget.max_states})
    budget.tick(result.search.states)
    v = result.search.violation
    complete = result.search.complete
    stall = v is not None and v.prop == "PROP-AMQ-NO-STALL"
    lost = v is not None and "PROP-AMQ-CONSERVATION" in v.props
    return CheckerOutcome(
        complete=complete,
        deadlock=True if stall else (False if complete else None),
        conservation=False if lost else (True if complete else None),
        states=result.search.states,
        deadlock_kind="stall" if stall else None,
        violated=sorted(v.props) if v is not None else [],
        shortest_counterexample=len(v.steps) if v is not None and result.shortest else None,
        exit_code=result.exit_code,
        trace=None if v is None else amqp_codec().counterexample(inp, v, t.name, t.supply),
        claim_scope=claim_scope(result),
        claim=result.claim,
    )


def case_input(document: dict[str, Any], name: str, publishes: int) -> AmqpInput:
    """The input of one AMQP case (SW-CASE): the family's document, read by the input
    layer, with the case's supply (the sender's ``publishes``, the consume queue's
    ``ready``, as ``--publishes`` puts it)."""
    t = topology_from_document(document, name)
    t = replace(t, name=name, supply=publishes)
    return AmqpInput(t, document, name, amqp_settings(document, "sweep"))
