"""Z3 proofs and bounded model checking against the explorer (issue 3's benchmark).

Times, end to end (graph load included), on one run:

* `prove rabbitmq-publish` with RabbitMQ's real credits: conservation and deadlock
  freedom for every supply (target < 10 s on 2 cores), against the explorer on the same
  credits, which cannot finish (state budget);
* the parametric proofs (`--symbolic`: every credit spec, every supply) for a chain and
  the fan-out, split into the proofs and the boundary counterexamples (target < 30 s);
* scaling of the concrete proof with the length of a chain (per-edge obligations);
* deadlock finding: `prove` (BMC) vs `check` (explorer) on small cyclic cases;
* the stalled-queue backlog theorem and credit synthesis.

    .venv/bin/python benchmarks/z3_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import networkx as nx
import z3

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.symbolic.backlog import prove_stalled_backlog
from creditflow.conformance.symbolic.encoding import Credits, NetworkEncoding
from creditflow.conformance.symbolic.invariants import (
    derive_condition,
    houdini,
    prove_deadlock_freedom,
    prove_termination,
    safe_condition,
)
from creditflow.conformance.symbolic.prove import ProveOptions, prove_graph
from creditflow.conformance.symbolic.synthesis import SynthesisOptions, synthesize
from creditflow.model.credit.spec import CreditSpec
from creditflow.model.network.graph import FlowGraph, flow_graph_from_networkx


def timed(fn):
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def chain(n: int, spec: CreditSpec | None = None) -> FlowGraph:
    spec = spec or CreditSpec(400, 200)
    g = nx.DiGraph(name=f"chain{n}")
    g.add_node("p0", source=True, publishes=4)
    for i in range(1, n + 1):
        g.add_node(f"p{i}")
        g.add_edge(f"p{i - 1}", f"p{i}", credit=list(spec))
    return flow_graph_from_networkx(g)


def parametric_proof(graph: FlowGraph) -> tuple[bool, str]:
    """The proofs of `prove --symbolic` without the boundary counterexamples."""
    enc = NetworkEncoding(graph, Credits.PER_EDGE, symbolic_supply=True)
    inv = houdini(enc, enc.lemmas())
    conserved = all(n in inv.lemmas for n in inv.lemmas if n.startswith("conservation"))
    termination = prove_termination(enc, inv)
    conditions = [derive_condition(enc, inv, e) for e in range(enc.net.n_edges)]
    condition = z3.And(*(safe_condition(t.initial, t.more_after, t.debits) for t in enc.edge_terms))
    proof = prove_deadlock_freedom(enc, inv, termination, condition)
    ok = (
        conserved
        and termination.proved
        and proof.proved
        and all(c.readable_equivalent for c in conditions)
    )
    return ok, conditions[0].text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="skip the slow explorer runs")
    args = parser.parse_args()
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, "
        f"z3 {z3.get_version_string()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}"
    )

    print("\n## prove rabbitmq-publish, RabbitMQ 3.10.8 credits {400,200} {400,200} {4000,800}")
    report, t_prove = timed(lambda: prove_graph(load_preset("rabbitmq-publish")))
    conservation = report.verdicts["PROP-CONSERVATION"]
    deadlock = report.verdicts["PROP-NO-DEADLOCK"]
    print(
        f"prove: {report.result}; conservation {conservation.status} ({conservation.method}),"
        f" deadlock freedom {deadlock.status} ({deadlock.method}), every supply: "
        f"{t_prove:.2f} s"
    )
    if not args.quick:
        budget = 2_000_000
        (_, explored), t_check = timed(
            lambda: check_graph(
                load_preset("rabbitmq-publish"), CheckOptions(publishes=1000, max_states=budget)
            )
        )
        print(
            f"check --publishes 1000: complete={explored.complete} after "
            f"{explored.n_states:,} states in {t_check:.1f} s (no verdict); "
            f"prove is {t_check / t_prove:.0f}x faster and covers every supply"
        )
    (_, small), t_small = timed(lambda: check_graph(load_preset("rabbitmq-publish")))
    print(
        f"check with the preset's 4 publishes: {small.n_states:,} states, {t_small:.2f} s "
        f"(one supply only)"
    )

    print("\n## parametric proofs (--symbolic): every credit spec, every supply")
    for graph in (load_preset("rabbitmq-publish"), load_preset("fanout")):
        (ok, text), t_proof = timed(lambda g=graph: parametric_proof(g))
        symbolic, t_all = timed(lambda g=graph: prove_graph(g, ProveOptions(symbolic=True)))
        print(
            f"{graph.name:18} proofs {'ok' if ok else 'FAILED'} ({text}) {t_proof:6.2f} s; "
            f"with boundary counterexamples ({len(symbolic.boundary)}, exact="
            f"{symbolic.condition_exact}) {t_all:6.2f} s"
        )

    print("\n## scaling: prove a chain with {400,200} on every edge")
    base = None
    for n in (3, 10, 30, 60):
        r, t = timed(lambda n=n: prove_graph(chain(n)))
        base = base or t / 3
        print(
            f"chain of {n:3} edges: {r.result:8} {t:7.2f} s  ({t / n * 1000:.0f} ms per edge, "
            f"{t / base / n:.1f}x the per-edge cost of 3 edges)"
        )

    print("\n## finding deadlocks: prove (BMC) vs check (explorer), small credits")
    for name, spec in (
        ("cycle2", CreditSpec(2, 1)),
        ("cycle3", CreditSpec(2, 1)),
        ("stalled-queue", CreditSpec(2, 1)),
        ("cycle3", CreditSpec(3, 1)),
    ):
        graph = load_preset(name).with_credit(spec)
        r, t_p = timed(lambda g=graph: prove_graph(g))
        (_, e), t_c = timed(lambda g=graph: check_graph(g))
        pf = r.primary().finding if r.primary() else None
        cf = e.findings.get("PROP-NO-DEADLOCK")
        print(
            f"{name + ' ' + str(spec):22} prove {pf.length if pf else '-':>3} steps "
            f"{t_p:6.2f} s | check {cf.length if cf else '-':>3} steps {e.n_states:>6,} states "
            f"{t_c:6.2f} s | ratio {t_p / t_c:5.1f}x"
        )

    print("\n## stalled-queue backlog I + M*floor(I/M), every {I,M} and supply")
    theorem, t = timed(lambda: prove_stalled_backlog(load_preset("stalled-queue")))
    print(f"{len(theorem.obligations)} obligations, proved={theorem.proved}: {t:.2f} s")
    if not args.quick:
        (_, e), t_c = timed(
            lambda: check_graph(
                load_preset("stalled-queue"),
                CheckOptions(credit=CreditSpec(400, 200), publishes=900, max_states=2_000_000),
            )
        )
        print(
            f"check {{400,200}} x900 (one spec, one supply): complete={e.complete}, "
            f"{e.n_states:,} states, {t_c:.1f} s"
        )

    print("\n## synthesis")
    for label, graph, options in (
        (
            "rabbitmq-publish smallest I per edge",
            load_preset("rabbitmq-publish"),
            SynthesisOptions(per_edge=True),
        ),
        (
            "stalled-queue largest I, mailbox <= 800, M=200",
            load_preset("stalled-queue"),
            SynthesisOptions(
                goal="mailbox", bound=800, prove=ProveOptions(credit=CreditSpec(400, 200))
            ),
        ),
    ):
        result, t = timed(lambda g=graph, o=options: synthesize(g, o))
        answer = ", ".join(f"{k} {v}" for k, v in result.credits.items())
        print(f"{label}: {result.status} ({result.method}) {answer}; {t:.2f} s")


if __name__ == "__main__":
    main()
