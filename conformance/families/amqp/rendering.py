"""The AMQP family's rendering part (FAM-CODEC): its states in one line (AMQ-LINK-STATE,
AMQ-SESSION-STATE), a witness's steps with runs gathered (TRACE-STEPS, TRACE-RUNS), the
settings in effect (AMQ-SETTINGS) and the ``--json`` documents of ``check``, ``prove`` and
``synth`` (AMQ-CHECK-JSON, AMQ-SYNTH-JSON, SCOPE-JSON). Pure: text and documents out, the
CLI prints them."""

from __future__ import annotations

from typing import Any

from creditflow.conformance.explore.runs import step_runs
from creditflow.conformance.families.amqp.checking import AmqpCheckResult
from creditflow.conformance.families.amqp.every_supply import EverySupplyCheck
from creditflow.conformance.families.amqp.supply_encoding import AmqpProof
from creditflow.conformance.families.amqp.synthesis import AmqpSynthResult
from creditflow.conformance.inputs.amqp_topologies import AmqpInput, AmqpSetting
from creditflow.model.amqp import properties
from creditflow.model.amqp.system import Action
from creditflow.model.amqp.system import LinkState as AmqpLinkState
from creditflow.model.amqp.system import PublishState as AmqpPublishState
from creditflow.model.amqp.system import State as AmqpState


def _sender_and_wire(state: AmqpLinkState | AmqpPublishState) -> str:
    """The client sender's counts and the frames on the wire, the start of a state's line."""
    snd = state.sender
    return (
        f"sender dc={snd.link.delivery_count} credit={snd.link.credit} "
        f"supply={snd.supply} remote-window={snd.session.remote_incoming_window} | "
        f"wire {len(state.fwd)}> <{len(state.back)} | "
    )


def describe_state(state: AmqpState) -> str:
    """One line per state: both ends' delivery-count and credit, the windows (rendering
    of AMQ-LINK-STATE and AMQ-SESSION-STATE)."""
    if isinstance(state, AmqpLinkState):
        rcv = state.receiver
        return _sender_and_wire(state) + (
            f"receiver dc={rcv.link.delivery_count} "
            f"credit={rcv.link.credit} window={rcv.session.incoming_window} "
            f"unsettled={len(rcv.unsettled)}"
        )
    if isinstance(state, AmqpPublishState):
        b = state.broker
        return _sender_and_wire(state) + (
            f"session dc={b.link.delivery_count} "
            f"credit={b.link.credit} window={b.session.incoming_window} "
            f"unconfirmed={len(b.unconfirmed)} | enqueuer {state.enqueuer.status} "
            f"pending={len(state.enqueuer.pending)} | queue ready={state.ready} "
            f"limit={state.overflow.limit}"
        )
    r, rcv = state.relay, state.receiver
    return (
        f"queue ready={state.msgs.ready} consumer dc={state.consumer.delivery_count} "
        f"credit={state.consumer.credit} | relay client dc={r.client_dc} "
        f"credit={r.client_credit} queue credit={r.queue_credit} in-flight={r.in_flight} | "
        f"session remote-window={state.session.remote_incoming_window} | "
        f"receiver dc={rcv.link.delivery_count} credit={rcv.link.credit} "
        f"window={rcv.session.incoming_window} unsettled={len(rcv.unsettled)}"
    )


def step_lines(steps: tuple[Action, ...], states: tuple[AmqpState, ...]) -> list[str]:
    """The numbered steps of a witness, the start first (TRACE-STEPS for AMQ-TRACE); a
    gathered run (TRACE-RUNS) is one line, ``2–28,673. (send, take_fwd, settle) ×4,096``,
    with the state after its last step."""
    assert len(states) == len(steps) + 1
    lines = [f"   0. {'(start)':<13} {describe_state(states[0])}"]
    for run in step_runs(steps):
        if run.count == 1:
            lines.append(f"{run.first:4}. {run.block[0]:<13} {describe_state(states[run.first])}")
            continue
        block = run.block[0] if len(run.block) == 1 else f"({', '.join(run.block)})"
        after = describe_state(states[run.last])
        lines.append(f"{run.first:4}–{run.last:,}. {block} ×{run.count:,}  {after}")
    return lines


def runs_document(steps: tuple[Action, ...]) -> list[dict[str, Any]]:
    """TRACE-RUNS in ``--json``: the witness's runs (``first`` step, ``steps`` of the
    block, ``count``)."""
    return [{"first": r.first, "steps": list(r.block), "count": r.count} for r in step_runs(steps)]


def settings_lines(settings: tuple[AmqpSetting, ...]) -> list[str]:
    """AMQ-SETTINGS in text: one line per credit, window or limit, with its source."""
    lines = ["credits and windows in effect:"]
    for s in settings:
        lines.append(f"  {s.node} ({s.limits}) {s.key}={s.value} [{s.source}]")
    return lines


def properties_document(
    result: AmqpCheckResult, proof: AmqpProof | None = None
) -> dict[str, bool | None]:
    """Per PROP-AMQ-*: ``False`` violated, ``True`` held in a complete search of the
    supply or proved for every supply (Z3-AMQ-EVERY-SUPPLY), ``None`` not decided."""
    v = result.search.violation
    held = result.search.complete and proof is None  # a complete full search decides all
    return {
        p: False
        if (v is not None and p in v.props) or p in result.search.violated
        else True
        if held or (proof is not None and proof.verdicts[p] == "proved")
        else None
        for p in properties.ALL
    }


def proof_document(proof: AmqpProof) -> dict[str, Any]:
    """The ``proof`` member of AMQ-CHECK-JSON (Z3-AMQ-EVERY-SUPPLY)."""
    return {
        "rule": "Z3-AMQ-EVERY-SUPPLY",
        "proved": proof.proved,
        "statement": proof.statement,
        "properties": dict(proof.verdicts),
        "serial": proof.serial,
        "serial_open": list(proof.serial_open),
        "lemmas": list(proof.lemmas),
        "dropped": list(proof.dropped),
        "seconds": round(proof.seconds, 3),
    }


def check_document(
    inp: AmqpInput,
    source: str,
    result: AmqpCheckResult,
    max_states: int,
    files: dict[str, Any],
    every: EverySupplyCheck | None = None,
) -> dict[str, Any]:
    """AMQ-CHECK-JSON (SCOPE-JSON, OUT-JSON-SCHEMA): the ``check --json`` document of
    an AMQP topology (spec/schemas/check.json, its ``amqp`` branch)."""
    if every is not None:
        result = every.result
    proof = every.proof if every is not None else None
    v = result.search.violation
    return {
        "family": "amqp",
        "graph": inp.topology.name,
        "shape": inp.topology.shape,
        "source": source,
        "complete": result.search.complete,
        "states": result.search.states,
        "properties": properties_document(result, proof),
        "violation": None
        if v is None
        else {
            "property": v.prop,
            "properties": list(v.props),
            "length": len(v.steps),
            "steps": list(v.steps),
            "runs": runs_document(v.steps),  # TRACE-RUNS
            "shortest": result.shortest,  # AMQ-DIRECTED-RUN
        },
        "settings": [
            {"node": s.node, "limits": s.limits, "key": s.key, "value": s.value, "source": s.source}
            for s in inp.settings
        ],
        "exit_code": every.exit_code if every is not None else result.exit_code,
        **({"proof": proof_document(proof)} if proof is not None else {}),
        "scope": {
            "supply": "every" if result.every_supply else result.supply,
            "explored_supply": result.supply,
            "max_states": max_states,
        },
        "claim": every.claim if every is not None else result.claim,
        **files,
    }


def synth_document(result: AmqpSynthResult, source: str, files: dict[str, Any]) -> dict[str, Any]:
    """AMQ-SYNTH-JSON: the ``synth --json`` document of an AMQP topology."""
    beyond = result.beyond
    v = beyond.result.search.violation if beyond is not None else None
    return {
        "family": "amqp",
        "graph": result.topology,
        "source": source,
        "status": result.status,
        "minimised": {
            "setting": result.setting,
            "node": result.target.node,
            "attribute": result.target.attribute,
            "policy": result.target.policy,
            "key": result.target.key,
        },
        "value": result.value,
        "range": [result.lowest, result.highest],
        "tried": [
            {
                "value": t.value,
                "complete": t.result.search.complete,
                "violation": None
                if t.result.search.violation is None
                else t.result.search.violation.prop,
                "claim": t.result.claim,
            }
            for t in result.tried
        ],
        "beyond": None
        if beyond is None or v is None
        else {"value": beyond.value, "property": v.prop, "length": len(v.steps), **files},
        "scope": {
            "supply": "every" if result.every_supply else result.supply,
            "explored_supply": result.supply,
        },
        "claim": result.claim,
        "exit_code": result.exit_code,
    }


def prove_document(
    inp: AmqpInput, source: str, proof: AmqpProof | None, claim: str, exit_code: int
) -> dict[str, Any]:
    """The ``prove --json`` document of an AMQP topology: the proof (as in
    AMQ-CHECK-JSON's ``proof``), the claim and the exit code."""
    return {
        "family": "amqp",
        "graph": inp.topology.name,
        "shape": inp.topology.shape,
        "source": source,
        "proof": None if proof is None else proof_document(proof),
        "claim": claim,
        "exit_code": exit_code,
    }
