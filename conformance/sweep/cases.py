"""Expanding a sweep into cases with stable identities (SW-SEED, SW-CASE, SW-CASE-ID).

A case is one graph instance x one credit assignment x one semantics variant x one
workload (publishes per source) x one checker. Expansion is a pure function of the
sweep file: the same file gives the same cases, in the same order, with the same ids,
on any machine.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from creditflow.conformance.sweep import amqp as amqp_sweep
from creditflow.conformance.sweep.amqp import AMQP_KIND, amqp_codec
from creditflow.conformance.sweep.families import FAULT_PARAMS
from creditflow.conformance.sweep.features import graph_features
from creditflow.conformance.sweep.sweepfile import (
    FamilySpec,
    RandomCredits,
    SweepSpec,
    parameter_points,
)
from creditflow.conformance.traces.network import NETWORK_VERSION
from creditflow.model.network.graph import FlowGraph, flow_graph_from_networkx

#: Bump when case identity must change for every case (SW-CASE-ID).
CASE_ID_VERSION = 1


def derive_seed(*parts: object) -> int:
    """SW-SEED: a 63-bit seed from the sweep seed and names (stable across runs and
    machines, independent of every other family and instance)."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=list)


def _param_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "-".join(str(v) for v in value)
    return str(value)


def graph_digest(graph: FlowGraph) -> str:
    """SW-CASE-ID: the content of a graph (nodes, their attributes, edges and
    ``sends_per_message``; not its name and not its credit specs), hashed; a fault graph
    adds its fault settings (SW-FAULTS), so a fault-free graph keeps its digest."""
    body: dict[str, Any] = {
        "nodes": [[n.name, n.source, n.checks_blocked, n.stalled, n.role] for n in graph.nodes],
        "edges": [[e.sender, e.receiver, e.sends_per_message] for e in graph.edges],
    }
    if graph.has_faults:
        body["faults"] = {
            "nodes": [[n.name, n.may_crash, n.on_peer_down] for n in graph.nodes],
            "crash_bound": graph.crash_bound,
        }
    return hashlib.sha256(_canonical(body).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class GraphInstance:
    """One generated graph of a family (SW-FAMILIES), with its features (SW-FEATURES)."""

    graph_id: str
    family: str
    kind: str
    params: dict[str, Any]
    instance: int
    seed: int
    #: the process graph; ``None`` for an AMQP family (SW-AMQP: ``node_link`` is its
    #: topology document)
    graph: FlowGraph | None
    digest: str
    node_link: str
    features: dict[str, Any]
    #: SW-AMQP: the row's credit and window columns of an AMQP case (``credit_initial``,
    #: ``credit_more_after``, ``credit_label``, ``variant``); ``None`` for a NET graph
    amqp_settings: dict[str, Any] | None = None


class CaseTask(NamedTuple):
    """What an executor needs to run one case (SW-CASE): small and picklable."""

    case_id: str
    graph_key: str
    credit: tuple[int, int] | None
    edge_credits: tuple[tuple[int, int], ...] | None
    variant: str
    publishes: int
    checker: str
    max_states: int
    max_seconds: float


@dataclass(frozen=True)
class Case:
    """A case with everything the row stores about it besides the verdicts (SW-ROW)."""

    task: CaseTask
    graph: GraphInstance
    sweep: str

    @property
    def case_id(self) -> str:
        return self.task.case_id

    def static_fields(self) -> dict[str, Any]:
        t, g = self.task, self.graph
        credits = t.edge_credits or ((t.credit,) if t.credit else ())
        return {
            "case_id": t.case_id,
            "sweep": self.sweep,
            "family": g.family,
            "kind": g.kind,
            "graph_id": g.graph_id,
            "graph_digest": g.digest,
            "graph_params": _canonical(g.params),
            "instance": g.instance,
            "graph_seed": g.seed,
            **g.features,
            "credit_initial": min((c[0] for c in credits), default=None),
            "credit_more_after": min((c[1] for c in credits), default=None),
            "credit_label": credit_label(t.credit, t.edge_credits),
            "edge_credits": _canonical(t.edge_credits) if t.edge_credits else None,
            "variant": t.variant,
            "may_crash": g.params.get("may_crash", "none"),
            "on_peer_down": g.params.get("on_peer_down", "peer_down"),
            "max_crashes": None
            if g.params.get("max_crashes", "all") == "all"
            else g.params["max_crashes"],
            **(g.amqp_settings or {}),
            "publishes": t.publishes,
            "checker": t.checker,
            "max_states": t.max_states,
            "max_seconds": t.max_seconds,
        }


def credit_label(
    credit: tuple[int, int] | None, edge_credits: tuple[tuple[int, int], ...] | None
) -> str:
    if credit is not None:
        return f"{{{credit[0]},{credit[1]}}}"
    return "per-edge"


def case_id(
    graph: GraphInstance,
    credit: tuple[int, int] | None,
    edge_credits: tuple[tuple[int, int], ...] | None,
    variant: str,
    publishes: int,
    checker: str,
) -> str:
    """SW-CASE-ID: what is checked — the graph (id and content), the credits, the variant,
    the workload, the checker and the model's version — never the budget."""
    identity = {
        "v": CASE_ID_VERSION,
        "model": NETWORK_VERSION if graph.kind != AMQP_KIND else f"amqp-{amqp_codec().version}",
        "graph_id": graph.graph_id,
        "graph": graph.digest,
        "credit": credit,
        "edge_credits": edge_credits,
        "variant": variant,
        "publishes": publishes,
        "checker": checker,
    }
    return hashlib.sha256(_canonical(identity).encode()).hexdigest()[:20]


def family_graphs(sweep: SweepSpec, family: FamilySpec) -> Iterator[GraphInstance]:
    """SW-FAMILIES, SW-SEED: every instance of every parameter point; an instance whose
    graph equals an earlier one of the family (a deterministic generator) is dropped."""
    import networkx as nx

    if family.kind.model == "amqp":
        yield from amqp_family_graphs(sweep, family)
        return
    seen: set[str] = set()
    varied = [name for name, values in family.choices if len(values) > 1]
    for point in parameter_points(family):
        label = ",".join(f"{k}={_param_text(point[k])}" for k in varied)
        for i in range(family.instances):
            # SW-SEED: the fault settings draw nothing, so they are not in the seed
            # (SW-FAULTS: the same shape with and without faults)
            shape = {k: v for k, v in point.items() if k not in FAULT_PARAMS}
            seed = derive_seed(sweep.seed, family.name, _canonical(shape), i)
            g = family.kind.generate(point, random.Random(seed))
            graph_id = f"{family.name}/{label}#{i}" if label else f"{family.name}#{i}"
            g.graph.update(name=graph_id, credit=[1, 1])
            flow = flow_graph_from_networkx(g, name=graph_id)
            digest = graph_digest(flow)
            if digest in seen:
                continue
            seen.add(digest)
            yield GraphInstance(
                graph_id=graph_id,
                family=family.name,
                kind=family.kind.kind,
                params=dict(point),
                instance=i,
                seed=seed,
                graph=flow,
                digest=digest,
                node_link=json.dumps(
                    nx.node_link_data(flow.to_networkx(), edges="edges"),
                    separators=(",", ":"),
                ),
                features=graph_features(flow),
            )


def amqp_family_graphs(sweep: SweepSpec, family: FamilySpec) -> Iterator[GraphInstance]:
    """SW-AMQP: one topology document per parameter point (nothing is drawn at random,
    so ``instances`` gives one each); a point whose document equals an earlier one (a
    parameter its policy does not read) is dropped."""
    seen: set[str] = set()
    varied = [name for name, values in family.choices if len(values) > 1]
    for point in parameter_points(family):
        label = ",".join(f"{k}={_param_text(point[k])}" for k in varied)
        graph_id = f"{family.name}/{label}#0" if label else f"{family.name}#0"
        doc = family.kind.document(point)
        doc["graph"] = {**doc["graph"], "name": graph_id}
        digest = amqp_sweep.document_digest(doc)
        if digest in seen:
            continue
        seen.add(digest)
        window, threshold, credit, session = amqp_sweep.policy_label(doc)
        yield GraphInstance(
            graph_id=graph_id,
            family=family.name,
            kind=family.kind.kind,
            params=dict(point),
            instance=0,
            seed=derive_seed(sweep.seed, family.name, _canonical(point), 0),
            graph=None,
            digest=digest,
            node_link=json.dumps(doc, separators=(",", ":")),
            features=amqp_sweep.amqp_features(doc),
            amqp_settings={
                "credit_initial": window,
                "credit_more_after": threshold,
                "credit_label": credit,
                "variant": session,
                # SW-AMQP-FAULTS: a queue with leader changes, as SW-FAULTS stores faults
                "may_crash": "queue" if point["leader_changes"] else "none",
                "max_crashes": point["leader_changes"] or None,
            },
        )


def _draw(rng: random.Random, spec: RandomCredits) -> tuple[int, int]:
    initial = rng.randint(*spec.initial)
    lo, hi = spec.more_after
    more_after = rng.randint(lo, max(lo, min(hi, initial)))
    return initial, more_after


def uniform_credits(sweep: SweepSpec, family: FamilySpec) -> list[tuple[int, int]]:
    """SW-CREDITS: the family's explicit and grid specs, then its uniform random draws
    (seeded per family, so every graph of the family gets the same specs)."""
    choices = family.settings.credits
    specs = list(choices.specs)
    r = choices.random
    if r is not None and not r.per_edge:
        rng = random.Random(derive_seed(sweep.seed, family.name, "credits"))
        drawn = [_draw(rng, r) for _ in range(r.count)]
        specs.extend(s for s in dict.fromkeys(drawn) if s not in specs)
    return specs


def edge_credit_draws(
    sweep: SweepSpec, family: FamilySpec, graph: GraphInstance
) -> list[tuple[tuple[int, int], ...]]:
    """SW-CREDITS: per-edge random assignments, seeded per graph instance."""
    r = family.settings.credits.random
    if r is None or not r.per_edge or graph.graph is None:  # SW-AMQP: no process graph
        return []
    rng = random.Random(derive_seed(sweep.seed, graph.graph_id, "edge-credits"))
    draws = [tuple(_draw(rng, r) for _ in graph.graph.edges) for _ in range(r.count)]
    return list(dict.fromkeys(draws))


def expand(sweep: SweepSpec) -> tuple[list[Case], dict[str, GraphInstance]]:
    """SW-CASE: every case of the sweep in file order, and the graphs by key."""
    cases: list[Case] = []
    graphs: dict[str, GraphInstance] = {}
    for family in sweep.families:
        settings = family.settings
        uniform = uniform_credits(sweep, family)
        for g in family_graphs(sweep, family):
            key = f"{g.digest}:{g.graph_id}"
            graphs[key] = g
            assignments: list[tuple[tuple[int, int] | None, Any]] = [(c, None) for c in uniform]
            if g.amqp_settings is not None:  # SW-AMQP: the credits are the family's own
                assignments = [(None, None)]
            assignments += [(None, e) for e in edge_credit_draws(sweep, family, g)]
            for credit, edge_credits in assignments:
                variants = settings.variants
                if g.amqp_settings is not None:  # SW-AMQP: the session policy
                    variants = (g.amqp_settings["variant"],)
                for variant in variants:
                    for publishes in settings.publishes:
                        for checker in settings.checkers:
                            task = CaseTask(
                                case_id=case_id(
                                    g, credit, edge_credits, variant, publishes, checker
                                ),
                                graph_key=key,
                                credit=credit,
                                edge_credits=edge_credits,
                                variant=variant,
                                publishes=publishes,
                                checker=checker,
                                max_states=sweep.budget.max_states,
                                max_seconds=sweep.budget.max_seconds,
                            )
                            cases.append(Case(task, g, sweep.name))
    return cases, graphs
