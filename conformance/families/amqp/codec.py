"""The ``amqp`` family's trace codec (FAM-CODEC): AMQP counterexamples as ITF traces
and pictures (AMQ-TRACE, AMQ-PICTURE, TRACE-RUNS); :data:`CODEC` is the family's part.

A trace embeds the topology document it was checked with (``--config`` applied), so it
replays without the file: :func:`replay_amqp_document` rebuilds the topology and follows
the model from its initial state, each state a successor of the one before
(TRACE-REPLAY). :func:`amqp_dot` draws a state: every node of the chain, a link with
both ends' delivery-count and credit, a session with its windows (EXP-PICTURE)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from creditflow.conformance.explore.results import RunViolation as AmqpViolation
from creditflow.conformance.explore.runs import StepRun, step_runs
from creditflow.conformance.inputs.amqp_topologies import AmqpInput, topology_from_document
from creditflow.conformance.inputs.itf import Record, TraceFormatError, encode, trace_document
from creditflow.conformance.inputs.reading import InputError
from creditflow.conformance.traces.network import ACTION_VAR, TraceReplayError
from creditflow.model.amqp import system
from creditflow.model.amqp.link import LinkEnd
from creditflow.model.amqp.system import Action, ConsumeState, LinkState, PublishState, State
from creditflow.model.amqp.topology import Topology

AMQP_MODEL = "amqp"
AMQP_VERSION = 1


def itf_value(value: Any) -> Any:
    """AMQ-TRACE: a model value as an ITF value (TRACE-VALUES): a NamedTuple is a record
    of its fields (a field that is ``None`` is left out, TRACE-OPTIONS), a tuple a list,
    an integer a ``#bigint``."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return Record(
            {f: itf_value(v) for f, v in zip(value._fields, value, strict=True) if v is not None}
        )
    if isinstance(value, tuple):
        return [itf_value(v) for v in value]
    return value


def _variables(state: State) -> list[str]:
    return list(state._fields)


def with_supply(document: dict[str, Any], shape: str, supply: int) -> dict[str, Any]:
    """``document`` with the supply checked (``--publishes``) put where the topology
    reads it (AMQ-TOPOLOGY): the sender's ``publishes``, the consume queue's ``ready``."""
    nodes = []
    for n in document.get("nodes", []):
        if shape == "consume" and n.get("kind") == "queue":
            n = {**n, "ready": supply}
        elif shape != "consume" and n.get("kind") == "endpoint" and n.get("role") == "sender":
            n = {**n, "publishes": supply}
        nodes.append(n)
    return {**document, "nodes": nodes}


def amqp_trace(
    inp: AmqpInput, violation: AmqpViolation, source: str, supply: int | None = None
) -> dict[str, Any]:
    """The ITF document of an AMQP counterexample (AMQ-TRACE): every state of the
    witness, the action that led to it, the topology document embedded (with the supply
    checked, so the trace replays)."""
    start = violation.states[0]
    variables = [*_variables(start), ACTION_VAR]
    compressed = len(violation.steps) > COMPRESS_ABOVE
    kept = _kept(violation.steps) if compressed else None
    states = []
    state_meta: list[dict[str, Any]] = []
    actions: list[str] = ["init", *violation.steps]
    for index, run in kept or ((i, None) for i in range(len(actions))):
        state = violation.states[index]
        values: dict[str, Any] = {
            f: itf_value(v) for f, v in zip(state._fields, state, strict=True)
        }
        values[ACTION_VAR] = actions[index]
        states.append(values)
        state_meta.append(
            {"index": index}
            if run is None
            else {"index": index, "run": {"steps": list(run.block), "count": run.count}}
        )
    meta = {
        "source": source,
        "description": f"creditflow counterexample for {violation.prop} "
        f"({inp.topology.shape} topology {inp.topology.name}), created "
        f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
        "creditflow": {
            "model": AMQP_MODEL,
            "version": AMQP_VERSION,
            "graph": inp.document
            if supply is None
            else with_supply(inp.document, inp.topology.shape, supply),
            "property": violation.prop,
            "properties": list(violation.props),
            "length": len(violation.steps),
            **({"compressed": "runs"} if compressed else {}),
        },
    }
    return trace_document(variables, states, meta, state_meta=state_meta)


COMPRESS_ABOVE = 1_000
"""TRACE-RUNS: an AMQP witness of more steps is written compressed."""


def _kept(steps: tuple[Action, ...]) -> list[tuple[int, StepRun | None]]:
    """TRACE-RUNS: the states a compressed trace keeps, by step number: the initial
    state, the state after each single step, and the state after each gathered run
    (with the run that led to it)."""
    kept: list[tuple[int, StepRun | None]] = [(0, None)]
    for run in step_runs(steps):
        kept.append((run.last, run if run.count > 1 else None))
    return kept


@dataclass(frozen=True)
class ReplayedPoint:
    """TRACE-RUNS-BOUNDED: a state the trace writes, with how the model got there from
    the point before: one step, or a run (``block`` replayed ``count`` times)."""

    state: State
    block: tuple[Action, ...] = ()
    count: int = 0
    run: bool = False


@dataclass(frozen=True)
class AmqpReplayed:
    """A trace that replayed through the model (TRACE-REPLAY). Only the states the trace
    writes are kept (TRACE-RUNS-BOUNDED); :attr:`steps` and :attr:`states` are expanded
    when first asked for."""

    topology: Topology
    prop: str
    props: tuple[str, ...]
    points: tuple[ReplayedPoint, ...]

    @cached_property
    def steps(self) -> tuple[Action, ...]:
        """Every step, runs expanded."""
        return tuple(a for p in self.points[1:] for _ in range(p.count) for a in p.block)

    @cached_property
    def states(self) -> tuple[State, ...]:
        """Every state from the initial one, runs expanded (each a checked step)."""
        state = self.points[0].state
        out = [state]
        for p in self.points[1:]:
            if not p.run:
                state = p.state
                out.append(state)
                continue
            for _ in range(p.count):
                for a in p.block:
                    state = _only_step(self.topology, state, a, "trace")
                    out.append(state)
            state = p.state
        return tuple(out)


def _same(state: State, written: Mapping[str, Any]) -> bool:
    return all(
        encode(itf_value(v)) == written.get(f) for f, v in zip(state._fields, state, strict=True)
    )


def _run_end(
    topology: Topology,
    state: State,
    run: tuple[tuple[str, ...], int],
    values: Mapping[str, Any],
    where: str,
    before: str,
) -> State:
    """TRACE-RUNS-BOUNDED: the state ``run`` leads to from ``state``, checked as it is
    expanded, keeping one state: the written end's action (the block's last) and the
    counted fields are compared with the written end before expanding
    (:func:`_check_counted`), and a block that is no step of the model is refused where
    it fails."""
    block, count = run
    for n in range(count):
        start = state
        for a in block:
            state = _only_step(topology, state, a, f"{where} (run {n + 1})")
        if n == 0:  # once its actions are known steps
            action = values.get(ACTION_VAR)
            if action != block[-1]:  # TRACE-RUNS: the state written names its run's last
                raise TraceReplayError(
                    f"{where} ({action}) is not the last action of its run ({block[-1]})"
                )
            _check_counted(start, run, values, where, before)
    return state


def replay_amqp_document(doc: Mapping[str, Any], where: str = "trace") -> AmqpReplayed:
    """TRACE-REPLAY for AMQ-TRACE: rebuild the embedded topology and follow the model;
    a state that is no successor of the one before (with the action named) is a
    :class:`TraceReplayError` naming it. A run is checked as it is expanded, in memory
    independent of its length (TRACE-RUNS-BOUNDED)."""
    meta = doc.get("#meta", {}).get("creditflow", {})
    if meta.get("model") != AMQP_MODEL:
        raise TraceFormatError(f"{where}: not an AMQP trace")
    try:
        topology = topology_from_document(meta.get("graph"), where)
    except InputError as exc:
        raise TraceFormatError(f"{where}: #meta.creditflow.graph: {exc.problem}") from None
    written = doc["states"]
    state = system.initial_state(topology)
    if not _same(state, written[0]):
        raise TraceReplayError(f"{where}: states[0] is not the topology's initial state")
    points = [ReplayedPoint(state)]
    length = 0
    for i, values in enumerate(written[1:], start=1):
        action = values.get(ACTION_VAR)
        run = _run_of(values, f"{where}: states[{i}]")
        if run is not None and length + len(run[0]) * run[1] > MAX_REPLAY_STEPS:
            raise TraceFormatError(f"{where}: more than {MAX_REPLAY_STEPS:,} steps in all")
        if run is not None:  # TRACE-RUNS: the block replayed count times, then compared
            state = _run_end(
                topology, state, run, values, f"{where}: states[{i}]", f"states[{i - 1}]"
            )
            if not _same(state, values):
                raise TraceReplayError(
                    f"{where}: states[{i}] is not where its run from states[{i - 1}] leads"
                )
            points.append(ReplayedPoint(state, run[0], run[1], run=True))
            length += len(run[0]) * run[1]
        else:
            nxt = [
                s for a, s in system.successors(topology, state) if a == action and _same(s, values)
            ]
            if not nxt:
                raise TraceReplayError(
                    f"{where}: states[{i}] ({action}) is not a step of the model from "
                    f"states[{i - 1}]"
                )
            state = nxt[0]
            points.append(ReplayedPoint(state, (str(action),), 1))
            length += 1
        state_meta = values.get("#meta")
        index = state_meta.get("index", length) if isinstance(state_meta, Mapping) else length
        if index != length:
            raise TraceReplayError(
                f"{where}: states[{i}] has #meta.index {index!r}, but is step {length}"
            )
    prop = meta.get("property") or ""  # IN-SCHEMA: a string or null (schemas.CreditflowMeta)
    props = meta.get("properties") or ([prop] if prop else [])
    return AmqpReplayed(topology, str(prop), tuple(map(str, props)), tuple(points))


#: TRACE-RUNS-BOUNDED: the counts the model keeps of its own steps, and the step that
#: changes each by a fixed amount whatever the state (AMQ-TS): a ``send`` sends one
#: message of the supply, a ``settle`` settles one delivery, a hand ``grant`` and a
#: ``drain`` are counted by the receiver. Per state shape, the field path and the
#: change per action; ``tests/test_amqp_trace_runs.py`` holds every step of random runs
#: of every preset to it.
COUNTED: dict[str, dict[tuple[str, str], dict[str, int]]] = {
    "LinkState": {
        ("sender", "sent"): {"send": 1},
        ("sender", "supply"): {"send": -1},
        ("receiver", "settled"): {"settle": 1},
        ("receiver", "grants_used"): {"grant": 1},
        ("receiver", "drains_used"): {"drain": 1},
    },
    "PublishState": {
        ("sender", "sent"): {"send": 1},
        ("sender", "supply"): {"send": -1},
    },
    "ConsumeState": {
        ("receiver", "settled"): {"settle": 1},
        ("receiver", "drains_used"): {"drain": 1},
    },
}


def counted_fields(state: State) -> dict[tuple[str, str], int]:
    """TRACE-RUNS-BOUNDED: the counted fields of ``state`` (:data:`COUNTED`)."""
    return {
        (part, name): int(getattr(getattr(state, part), name))
        for part, name in COUNTED.get(type(state).__name__, {})
    }


def _written_count(values: Mapping[str, Any], path: tuple[str, str]) -> Any:
    part = values.get(path[0])
    return part.get(path[1]) if isinstance(part, Mapping) else None


def _check_counted(
    state: State,
    run: tuple[tuple[str, ...], int],
    values: Mapping[str, Any],
    where: str,
    before: str,
) -> None:
    """TRACE-RUNS-BOUNDED: before a run is expanded, the counts it must leave
    (:data:`COUNTED`: the count before plus ``count`` times the block's change) are
    compared with the state written at its end; a run whose written end state is wrong
    there is refused at once, in time independent of the run's length. (A run that
    passes is expanded and compared in full.)"""
    block, count = run
    effects = COUNTED.get(type(state).__name__, {})
    for path, start in counted_fields(state).items():
        per_block = sum(effects[path].get(a, 0) for a in block)
        expected = start + per_block * count
        written = _written_count(values, path)
        if encode(expected) != written:
            field_name = ".".join(path)
            if isinstance(written, Mapping) and "#bigint" in written:
                written = written["#bigint"]
            raise TraceReplayError(
                f"{where} is not where its run from {before} leads: ({', '.join(block)}) "
                f"×{count:,} takes {field_name} from {start:,} to {expected:,}, the state "
                f"written has {written} (the run is not a step of the model that often, "
                f"or the state written is not its end; refused before expanding it, "
                f"TRACE-RUNS-BOUNDED)"
            )


MAX_REPLAY_STEPS = 10_000_000
"""TRACE-RUNS: the most steps a compressed trace may expand to."""


def _run_of(values: Mapping[str, Any], where: str) -> tuple[tuple[str, ...], int] | None:
    """TRACE-RUNS: a state's ``#meta.run`` (``steps``, ``count``), checked, or ``None``."""
    meta = values.get("#meta")
    run = meta.get("run") if isinstance(meta, Mapping) else None
    if run is None:
        return None
    block, count = (run.get("steps"), run.get("count")) if isinstance(run, Mapping) else (0, 0)
    if (
        not isinstance(block, list)
        or not block
        or not all(isinstance(a, str) for a in block)
        or isinstance(count, bool)
        or not isinstance(count, int)
        or not 1 <= count <= MAX_REPLAY_STEPS // len(block)
    ):
        raise TraceFormatError(
            f"{where}: #meta.run must be {{steps: [action, …], count: 1 … "
            f"{MAX_REPLAY_STEPS:,} steps in all}}"
        )
    return tuple(block), count


def _only_step(topology: Topology, state: State, action: str, where: str) -> State:
    """The one successor of ``state`` by ``action`` (AMQ-TS names each action once)."""
    nxt = [s for a, s in system.successors(topology, state) if a == action]
    if len(nxt) != 1:
        raise TraceReplayError(
            f"{where}: {action!r} is not a step of the model here"
            if not nxt
            else f"{where}: {action!r} names {len(nxt)} steps; a run cannot be replayed"
        )
    return nxt[0]


# -- pictures ---------------------------------------------------------------------------------


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _chain_ids(doc: Mapping[str, Any]) -> list[str]:
    succ = {str(e["source"]): str(e["target"]) for e in doc.get("edges", doc.get("links", []))}
    targets = set(succ.values())
    ids = [str(n["id"]) for n in doc.get("nodes", [])]
    chain = [next(n for n in ids if n not in targets)]
    while chain[-1] in succ:
        chain.append(succ[chain[-1]])
    return chain


def _red(value: int) -> str:
    return ", color=red, fontcolor=red" if value <= 0 else ""


def _session_label(name: str, s: Any) -> str:
    return (
        f"{name}\nincoming-window={s.incoming_window}\nnext-incoming-id={s.next_incoming_id}\n"
        f"next-outgoing-id={s.next_outgoing_id}\nremote-incoming-window="
        f"{s.remote_incoming_window}"
    )


def _link_edge(
    tail: str, head: str, sender: str, dc: int, credit: int, receiver: LinkEnd
) -> tuple[str, str, str, int]:
    """EXP-PICTURE: the link from ``tail`` to ``head`` with the sending end's (named
    ``sender``) delivery-count and credit and the receiver's, and the lower credit."""
    label = (
        f"link: {sender} dc={dc} credit={credit}\n"
        f"receiver dc={receiver.delivery_count} credit={receiver.credit}"
    )
    return tail, head, label, min(credit, receiver.credit)


def amqp_dot(topology: Topology, doc: Mapping[str, Any], state: State, title: str) -> str:
    """AMQ-PICTURE: the chain of ``doc`` at ``state``: endpoints with their link end
    (delivery-count, credit), sessions with their windows, the queue and the relay; the
    link drawn between its two ends with both ends' delivery-count and credit; a credit
    or window of 0 in red (EXP-PICTURE)."""
    ids = _chain_ids(doc)
    labels: dict[str, str] = {}
    bad: dict[str, int] = {}
    link_edge: tuple[str, str, str, int] | None = None
    wire: tuple[str, str, int, int]
    if isinstance(state, LinkState):
        snd, ss, rs, rcv = ids
        s, r = state.sender, state.receiver
        labels[snd] = f"{snd} (sender)\nsupply={s.supply}"
        labels[ss] = _session_label(ss, s.session)
        labels[rs] = _session_label(rs, r.session)
        wire = (ss, rs, len(state.fwd), len(state.back))
        labels[rcv] = f"{rcv} (receiver)\nunsettled={len(r.unsettled)}"
        bad[ss], bad[rs] = s.session.remote_incoming_window, r.session.incoming_window
        link_edge = _link_edge(snd, rcv, "sender", s.link.delivery_count, s.link.credit, r.link)
    elif isinstance(state, PublishState):
        snd, ss, bs, q = ids
        pub, brk = state.sender, state.broker
        labels[snd] = f"{snd} (sender)\nsupply={pub.supply}"
        labels[ss] = _session_label(ss, pub.session)
        labels[bs] = _session_label(bs, brk.session) + f"\nunconfirmed={len(brk.unconfirmed)}"
        wire = (ss, bs, len(state.fwd), len(state.back))
        labels[q] = (
            f"{q} (quorum queue)\nready={state.ready} limit={state.overflow.limit}\n"
            f"enqueuer {state.enqueuer.status} pending={len(state.enqueuer.pending)}"
        )
        bad[ss], bad[bs] = pub.session.remote_incoming_window, brk.session.incoming_window
        link_edge = _link_edge(
            snd, bs, "sender", pub.link.delivery_count, pub.link.credit, brk.link
        )
    else:
        assert isinstance(state, ConsumeState)
        q, rl, bs, cs, rcv = ids
        rel, cli = state.relay, state.receiver
        labels[q] = (
            f"{q} (quorum queue)\nready={state.msgs.ready}\nconsumer dc="
            f"{state.consumer.delivery_count} credit={state.consumer.credit}"
        )
        labels[rl] = (
            f"{rl} (relay)\nqueue dc={rel.queue_dc} credit={rel.queue_credit}\n"
            f"in-flight={rel.in_flight}"
        )
        labels[bs] = _session_label(bs, state.session)
        labels[cs] = _session_label(cs, cli.session)
        wire = (bs, cs, len(state.fwd), len(state.back))
        labels[rcv] = f"{rcv} (receiver)\nunsettled={len(cli.unsettled)}"
        bad[bs], bad[cs] = state.session.remote_incoming_window, cli.session.incoming_window
        link_edge = _link_edge(rl, rcv, "relay", rel.client_dc, rel.client_credit, cli.link)
    lines = [
        "digraph amqp {",
        f"  label={_q(title)};",
        "  labelloc=t;",
        "  rankdir=LR;",
        '  node [shape=box, fontname="Helvetica"];',
    ]
    for nid in ids:
        lines.append(f"  {_q(nid)} [label={_q(labels[nid])}{_red(bad.get(nid, 1))}];")
    for head, nxt in zip(ids, ids[1:], strict=False):
        on_wire = (
            f" [label={_q(f'in flight: {wire[2]} forward, {wire[3]} back')}]"
            if (head, nxt) == wire[:2]
            else ""
        )
        lines.append(f"  {_q(head)} -> {_q(nxt)}{on_wire};")
    if link_edge is not None:
        one, other, label, credit = link_edge
        lines.append(
            f"  {_q(one)} -> {_q(other)} [label={_q(label)}, style=dashed, constraint=false"
            f"{_red(credit)}];"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


# -- FAM-CODEC ----------------------------------------------------------------------------


def _leaves(value: Any, prefix: str) -> list[str]:
    """``name=value`` for every number and flag of a model value (no Python repr)."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return [
            part
            for f, v in zip(value._fields, value, strict=True)
            if v is not None
            for part in _leaves(v, f"{prefix}{f}.")
        ]
    if isinstance(value, tuple):
        return [f"{prefix.rstrip('.')}=[{len(value)}]"]
    return [f"{prefix.rstrip('.')}={value}"]


class AmqpCodec:
    """FAM-CODEC for ``amqp`` (AMQ-TRACE, AMQ-PICTURE, TRACE-RUNS): the counterexample
    trace writer and its replay, the picture, a state and a step for a person. A system
    handed to :meth:`picture` carries the :class:`AmqpInput` it was built from as
    ``instance``."""

    model = AMQP_MODEL
    version = AMQP_VERSION

    def meta(self, instance: Any) -> Mapping[str, Any]:
        return {"model": AMQP_MODEL, "version": AMQP_VERSION, "graph": instance.document}

    def state_line(self, system: Any, state: Any) -> str:
        return " ".join(_leaves(state, ""))

    def step_words(self, system: Any, action: Any) -> str:
        return str(action)  # AMQ-TS: an action is its rule's name (``send``, ``take_fwd``)

    def picture(self, system: Any, state: Any, title: str) -> str:
        inp = system.instance
        return amqp_dot(inp.topology, inp.document, state, title)

    def counterexample(
        self, inp: AmqpInput, violation: AmqpViolation, source: str, supply: int | None = None
    ) -> dict[str, Any]:
        """AMQ-TRACE: :func:`amqp_trace`."""
        return amqp_trace(inp, violation, source, supply)

    def replay_document(self, doc: Mapping[str, Any], where: str = "trace") -> AmqpReplayed:
        """TRACE-REPLAY, TRACE-RUNS: :func:`replay_amqp_document`."""
        return replay_amqp_document(doc, where)


CODEC = AmqpCodec()
