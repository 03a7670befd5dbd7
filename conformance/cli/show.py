"""``creditflow show TRACE`` and the step listing ``check`` and ``prove`` print after a
counterexample: the words for the steps of :mod:`creditflow.conformance.traces.steps`
(TRACE-STEPS). Rendering only."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any, NoReturn

import click

from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import echo_step_lines, fail, printable_line
from creditflow.conformance.cli.family_check import path_lines
from creditflow.conformance.explore.counterexamples import Finding
from creditflow.conformance.explore.network_system import CheckedNetwork
from creditflow.conformance.explore.runs import step_runs
from creditflow.conformance.families.amqp.codec import (
    AMQP_MODEL,
    AmqpReplayed,
    replay_amqp_document,
)
from creditflow.conformance.families.amqp.rendering import describe_state, runs_document, step_lines
from creditflow.conformance.inputs.itf import TraceFormatError, read_document
from creditflow.conformance.traces.models import ModelReplay, replay_model_document
from creditflow.conformance.traces.network import (
    NETWORK_MODEL,
    TraceReplayError,
    action_runs,
    network_trace,
    replay_network_document,
    trace_too_long,
)
from creditflow.conformance.traces.steps import (
    Effect,
    Step,
    StepRun,
    Witness,
    generic_steps,
    network_witness,
)


def effect_text(effect: Effect, actor: str) -> str:
    """One effect in words; the acting process's own name is left out."""
    who = "" if effect.process == actor else f"{effect.process} "
    if effect.kind == "blocked":
        return f"{who}now blocked on {effect.peer}"
    if effect.kind == "unblocked":
        return f"{who}no longer blocked on {effect.peer}"
    if effect.kind == "grants":
        return f"{who}grants {effect.amount} to {effect.peer}"
    if effect.kind == "defers":
        return f"{who}defers a grant of {effect.amount} to {effect.peer}"
    return f"{who}releases deferred grants of {effect.amount} to {effect.peer}"


def step_text(step: Step, publishes: tuple[int, int] | None = None) -> str:
    """One step (or the same step repeated, reading ``publishes``) in words."""
    if step.action == "read" and (publishes or step.publish is not None):  # a network read
        first, last = publishes or (step.publish or 0, step.publish or 0)
        text = (
            f"{step.node} reads publish {first}"
            if first == last
            else f"{step.node} reads publishes {first}–{last}"
        )
    elif step.action == "take":
        text = f"{step.node} takes from {step.peer}"
    elif step.action == "bump":
        text = f"{step.node} handles a grant of {step.grant} from {step.peer}"
    elif step.action == "crash":
        text = f"{step.node} crashes (NET-CRASH: its mailbox is lost)"
    elif step.action == "down":
        text = f"{step.node} handles the DOWN of {step.peer} (NET-DOWN)"
    else:
        text = f"{step.node} {step.action}".strip() + (f" ({step.peer})" if step.peer else "")
    if step.effects:
        text += "; " + ", ".join(effect_text(e, step.node) for e in step.effects)
    return text


def run_lines(run: StepRun) -> list[str]:
    """A run: one line, or a header and one line per step of a repeated block."""
    where = str(run.first) if run.first == run.last else f"{run.first}–{run.last}"
    if run.period == 1:
        text = step_text(run.steps[0], run.publishes(0))
        if run.repeat > 1:
            text += f" (×{run.repeat})"
        return [f"{where:>13}  {text}"]
    lines = [f"{where:>13}  {run.repeat} times:"]
    lines += [
        f"{'':>13}    {step_text(step, run.publishes(i))}" for i, step in enumerate(run.block)
    ]
    return lines


def witness_lines(witness: Witness) -> list[str]:
    """TRACE-STEPS: the steps of a credit-network trace, the violation and the loop
    marked, then who is blocked in the last state."""
    lines = [f"{'step':>13}  what happens"]
    violation = witness.length
    if violation == 0 and witness.property_id:
        lines.append(_violation_line(witness))
    for run in witness.runs:
        if witness.loop_start is not None and run.first == witness.loop_start + 1:
            lines.append(
                f"{'':>13}  -- from here on the steps repeat forever (the last state is "
                f"the state after step {witness.loop_start}) --"
            )
        lines.extend(run_lines(run))
        if violation is not None and run.last == violation and witness.property_id:
            lines.append(_violation_line(witness))
    if witness.final_blocked:
        who = ", ".join(f"{p} (on {', '.join(b)})" for p, b in witness.final_blocked)
        lines.append(f"blocked after the last step ({witness.steps}): {who}")
    else:
        lines.append(f"nothing is blocked after the last step ({witness.steps})")
    return lines


def _violation_line(witness: Witness) -> str:
    what = f"{witness.property_id} ({witness.kind})"
    if witness.blocked_forever:
        what += f": {', '.join(witness.blocked_forever)} blocked forever from here"
    elif witness.detail:
        what += f": {witness.detail}"
    return f"{'':>13}  == after step {witness.length}: {what} =="


def generic_lines(runs: list[StepRun]) -> list[str]:
    """TRACE-STEPS of a non-network trace: actor, action and picks per step."""
    return [f"{'step':>13}  what happens", *(line for run in runs for line in run_lines(run))]


def print_witness_steps(
    system: CheckedNetwork, finding: Finding, source: str, doc: Mapping[str, Any] | None = None
) -> None:
    """The steps of a counterexample ``check`` or ``prove`` found: TRACE-STEPS in full
    (from ``doc``, its trace, when the caller already built it), or for a run over
    TRACE-LIMIT its steps with equal consecutive ones merged."""
    if trace_too_long(finding) is None:
        print_steps(doc if doc is not None else network_trace(system, finding, source))
        return
    click.echo(f"steps (the first {finding.length:,}, equal consecutive steps merged):")
    done = 0
    for text, times in action_runs(system, finding):
        first, done = done + 1, done + times
        where = f"{first:,}" if times == 1 else f"{first:,}–{done:,}"
        more = f" (×{times:,})" if times > 1 else ""
        echo_step_lines([f"{where:>21}  {text}{more}"])


def print_steps(doc: Mapping[str, Any]) -> None:
    """Print the steps of a counterexample ``check`` or ``prove`` just wrote."""
    click.echo("steps:")
    echo_step_lines(witness_lines(network_witness(doc)))


def _show_amqp(trace: Path, replayed: AmqpReplayed, as_json: bool) -> NoReturn:
    """AMQ-TRACE: the steps of a replayed AMQP trace, each with both ends' delivery-count
    and credit and the session windows."""
    t = replayed.topology
    if as_json:
        steps = [
            {"number": i, "action": a, "state": describe_state(s)}
            for i, (a, s) in enumerate(zip(("init", *replayed.steps), replayed.states, strict=True))
        ]
        body = {
            "model": AMQP_MODEL,
            "graph": t.name,
            "shape": t.shape,
            "property": replayed.prop,
            "properties": list(replayed.props),
            "steps": steps,
            "runs": runs_document(replayed.steps),  # TRACE-RUNS
        }
        click.echo(json.dumps(body))
        raise SystemExit(exit_codes.OK)
    head = f"{trace}: AMQP {t.shape} topology {t.name}, {len(replayed.steps)} steps"
    if replayed.prop:
        head += f", {replayed.prop} at the end"
    click.echo(printable_line(head))
    echo_step_lines(step_lines(replayed.steps, replayed.states))
    raise SystemExit(exit_codes.OK)


def _show_family(trace: Path, replayed: ModelReplay, as_json: bool) -> NoReturn:
    """TRACE-STEPS of a replayed trace of any family with a codec (FAM-CODEC): the
    family's own state lines and step words, repeated blocks gathered (TRACE-RUNS)."""
    assert replayed.family.codec is not None  # found by its codec's model
    codec, system, run = replayed.family.codec.load(), replayed.system, replayed.run
    words = tuple(codec.step_words(system, a) for a, _ in run[1:])
    name = getattr(replayed.instance, "name", "")
    if as_json:
        body = {
            "model": codec.model,
            "family": replayed.family.name,
            "graph": name,
            "property": replayed.property_id,
            "length": replayed.length,
            "steps": [
                {
                    "number": i,
                    "action": "init" if a is None else codec.step_words(system, a),
                    "state": codec.state_line(system, s),
                }
                for i, (a, s) in enumerate(run)
            ],
            "runs": [
                {"first": r.first, "steps": list(r.block), "count": r.count}
                for r in step_runs(words)
            ],  # TRACE-RUNS
        }
        click.echo(json.dumps(body))
        raise SystemExit(exit_codes.OK)
    head = f"{trace}: {replayed.family.name} {name}, {len(run) - 1} steps"
    if replayed.property_id:
        head += f", {replayed.property_id} after {replayed.length}"
    click.echo(printable_line(head))
    echo_step_lines(path_lines(codec, system, run))
    raise SystemExit(exit_codes.OK)


@click.command()
@click.argument("trace", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the steps as one JSON object.")
def show(trace: Path, as_json: bool) -> None:
    """Print the steps of an ITF TRACE written by creditflow (check, prove, synth,
    conform, the corpus), one line per step, repeated steps gathered ("reader reads
    publishes 1-400 (x400)"), and who is blocked at the end.

    A credit-network or AMQP trace (AMQ-TRACE), or a counterexample of any family with
    a trace codec, is replayed through the model first (TRACE-REPLAY); a trace that does
    not replay is refused (exit 2).

    \b
    Examples:
      creditflow show counterexamples/stalled-queue.itf.json
      creditflow show counterexamples/rabbitmq-publish.prove.itf.json --json
    """
    family_run: ModelReplay | None = None
    try:
        doc = read_document(trace)
        model = doc.get("#meta", {}).get("creditflow", {}).get("model")
        if model == AMQP_MODEL:
            replayed = replay_amqp_document(doc, where=str(trace))
        elif model == NETWORK_MODEL:
            replay_network_document(doc, where=str(trace))
            found = network_witness(doc, where=str(trace))
            witness: Witness | None = found
            runs = list(found.runs)
        else:
            family_run = replay_model_document(doc, where=str(trace))
            witness, runs = None, generic_steps(doc)
    except (TraceFormatError, TraceReplayError) as exc:
        fail(str(exc))
        return
    if model == AMQP_MODEL:
        _show_amqp(trace, replayed, as_json)
    if model != NETWORK_MODEL and family_run is not None:
        _show_family(trace, family_run, as_json)
    if as_json:
        body: dict[str, Any] = asdict(witness) if witness else {"runs": [asdict(r) for r in runs]}
        body["model"] = model
        click.echo(json.dumps(body))
        raise SystemExit(exit_codes.OK)
    if witness is not None:
        head = f"{trace}: {witness.graph}, {witness.steps} steps"
        if witness.property_id:
            head += f", {witness.property_id} ({witness.kind}) after {witness.length}"
        click.echo(printable_line(head))
        lines = witness_lines(witness)
    else:
        steps = sum(len(run.steps) for run in runs)
        click.echo(printable_line(f"{trace}: {model or 'ITF trace'}, {steps} steps"))
        lines = generic_lines(runs)
    echo_step_lines(lines)
