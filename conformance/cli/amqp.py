"""The printing of the AMQP family's answers to ``check``, ``prove`` and ``synth``
(the routing is :func:`creditflow.conformance.cli.family_check.route`; the texts and
documents are the family's rendering part, ``families/amqp/rendering.py``): the verdict
in words or as one ``--json`` document (SCOPE-TEXT, SCOPE-JSON, OUT-JSON-SCHEMA), the
settings in effect (AMQ-SETTINGS), the counterexample written as an ITF trace and a
picture (AMQ-TRACE, AMQ-PICTURE) before it is reported. The searches, proofs and
syntheses are the family's parts, given the engine's deadlines (FAM-DEADLINE)."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import (
    DEFAULT_FOLDER,
    Saver,
    echo_step_lines,
    fail,
    output_path,
    picture_path,
)
from creditflow.conformance.explore.explorer import DeadlinePassed, Progress
from creditflow.conformance.families.amqp.codec import amqp_dot, amqp_trace
from creditflow.conformance.families.amqp.every_supply import (
    check_every_supply,
    serial_why,
)
from creditflow.conformance.families.amqp.rendering import (
    check_document,
    prove_document,
    settings_lines,
    step_lines,
    synth_document,
)
from creditflow.conformance.families.amqp.supply_encoding import (
    SERIAL_OBLIGATION,
    SUPPORTED,
)
from creditflow.conformance.families.amqp.supply_encoding import (
    DeadlinePassed as ProofDeadlinePassed,
)
from creditflow.conformance.families.amqp.synthesis import (
    AmqpSynthError,
    SynthSetting,
    synthesize_amqp,
    with_value,
)
from creditflow.conformance.family.interface import Family
from creditflow.conformance.inputs.amqp_topologies import AmqpInput
from creditflow.conformance.inputs.itf import write_document
from creditflow.conformance.traces.pictures import layout_refusal, write_picture


def run_check(
    family: Family,
    inp: AmqpInput,
    source: str,
    publishes: int | None,
    every_supply: bool,
    max_states: int,
    as_json: bool,
    trace_out: Path | None,
    dot_out: Path | None,
    progress: Progress | None = None,
    full_search: bool = False,
    prove: bool = True,
    prove_timeout: float | None = None,
) -> None:
    """``creditflow check`` on an AMQP topology (AMQ-TS, SCOPE-EXIT): search on the one
    explorer (EXP-FIRST, EXP-INTERN, progress lines: OUT-PROGRESS), write a violation's
    trace and picture (AMQ-TRACE, AMQ-PICTURE), print, exit. ``prove``: answer "every
    supply" by the family's proof (Z3-AMQ-EVERY-SUPPLY) within ``prove_timeout`` seconds
    (FAM-DEADLINE: past it the proof is dropped, said on stderr; exit 4)."""
    checking = family.checking.load()
    options = {
        "publishes": publishes,
        "every_supply": every_supply,
        "max_states": max_states,
        "progress": progress,
        "full_search": full_search,
    }
    result = checking.check(inp, options)
    # Z3-AMQ-EVERY-SUPPLY: "every supply" is answered by proof where the shape allows
    every = None
    if every_supply and prove and family.every_supply is not None:
        deadline = None if prove_timeout is None else time.monotonic() + prove_timeout
        try:
            every = check_every_supply(inp.topology, result, deadline)
        except (ProofDeadlinePassed, DeadlinePassed):
            click.echo(
                f"creditflow: warning: the proof for every supply did not finish within "
                f"--prove-timeout {prove_timeout:g} s (FAM-DEADLINE); not established",
                err=True,
            )
    if every is not None:
        result = every.result
    claim = every.claim if every is not None else result.claim
    exit_code = every.exit_code if every is not None else result.exit_code
    saver = Saver()
    files: dict[str, Any] = {}
    v = result.search.violation
    if v is not None:
        name = inp.topology.name
        trace_path = output_path(trace_out, DEFAULT_FOLDER, name, ".itf.json")
        saved = saver.attempt(write_document, amqp_trace(inp, v, source, result.supply), trace_path)
        dot_path = picture_path(dot_out, trace_path)
        title = f"{name}: {v.prop} after {len(v.steps)} steps"
        picture = amqp_dot(inp.topology, inp.document, v.states[-1], title)
        written = saver.attempt(write_picture, picture, dot_path)
        dot_file, svg_file = written or (None, None)
        if written and (refusal := layout_refusal(picture)):
            click.echo(f"picture: {refusal}", err=True)
        files = {
            "trace": str(saved) if saved else None,
            "dot": str(dot_file) if dot_file else None,
            "svg": str(svg_file) if svg_file else None,
        }
    if as_json:
        doc = check_document(inp, source, result, max_states, files, every)
        click.echo(json.dumps(saver.annotate(doc)))
        saver.exit(exit_code)
    t = inp.topology
    click.echo(f"creditflow check {source}: AMQP {t.shape} topology {t.name}")
    for line in settings_lines(inp.settings):
        click.echo(line)
    click.echo(claim)
    if v is not None:
        click.echo(f"violated: {', '.join(v.props)}")
        echo_step_lines(step_lines(v.steps, v.states))
        click.echo(f"trace: {files.get('trace') or 'NOT WRITTEN'}")
        click.echo(f"picture: {files.get('svg') or files.get('dot') or 'NOT WRITTEN'}")
        saver.show_unsaved()
    saver.exit(exit_code)


def run_synth(
    inp: AmqpInput,
    source: str,
    setting: SynthSetting,
    publishes: int | None,
    highest: int | None,
    as_json: bool,
    trace_out: Path | None,
    timeout_s: float | None = None,
) -> None:
    """``creditflow synth`` on an AMQP topology (AMQ-SYNTH): minimise one setting within
    ``--timeout`` (FAM-DEADLINE: past it ``unknown``, exit 4), write the witness one
    step below the answer as an ITF trace, print, exit (SCOPE-EXIT)."""
    started = time.perf_counter()
    name = inp.topology.name
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    try:
        result = synthesize_amqp(
            inp.document,
            name,
            setting,
            publishes,
            publishes is None,
            highest or 16,
            deadline=deadline,
        )
    except AmqpSynthError as exc:
        fail(f"{source}: {exc}")
    saver = Saver()
    files: dict[str, Any] = {}
    beyond = result.beyond
    if beyond is not None and beyond.result.search.violation is not None:
        v = beyond.result.search.violation
        below = with_value(result.document, result.target, beyond.value)
        t = replace(inp.topology, supply=beyond.result.supply)
        trace_inp = AmqpInput(t, below, inp.where, inp.settings)
        path = output_path(trace_out, DEFAULT_FOLDER, name, ".synth.itf.json")
        saved = saver.attempt(write_document, amqp_trace(trace_inp, v, source, t.supply), path)
        files = {"trace": str(saved) if saved else None}
    if as_json:
        click.echo(json.dumps(saver.annotate(synth_document(result, source, files))))
        saver.exit(result.exit_code)
    method = (
        "search"
        if not any(not t.result.shortest for t in result.tried)
        else "search, directed runs"
    )
    click.echo(f"creditflow synth {source} --minimise {setting}: {result.status} ({method})")
    if result.value is not None:
        click.echo(
            f"  {result.target.node}: {result.target.policy}.{result.target.key}={result.value}"
        )
    click.echo(f"  {result.claim}")
    click.echo(
        f"  synthesised: {result.target.words()}; every other credit, window and limit "
        "kept as in the topology"
    )
    if beyond is not None and beyond.result.search.violation is not None:
        v = beyond.result.search.violation
        click.echo(
            f"  one step beyond ({result.target.key}={beyond.value}): {v.prop} after "
            f"{len(v.steps)} steps - {files.get('trace') or 'NOT WRITTEN'}"
        )
    click.echo(f"  {round(time.perf_counter() - started, 3):.2f} s")
    for line in settings_lines(inp.settings):  # AMQ-SETTINGS, as read
        click.echo(line)
    saver.show_unsaved()
    saver.exit(result.exit_code)


def run_prove(
    family: Family,
    inp: AmqpInput,
    source: str,
    timeout_s: float | None = None,
    as_json: bool = False,
) -> None:
    """``creditflow prove`` on an AMQP topology (Z3-AMQ-EVERY-SUPPLY, through the
    family's every-supply part): the proof for every supply, per property, and what was
    proved; exit 0 only when every property and AMQ-SERIAL are proved, 4 otherwise
    (SCOPE-EXIT), and 4 when ``--timeout`` ran out first (FAM-DEADLINE: never
    "proved"). A property not proved is not a finding: ``check`` looks for its witness
    (Z3-AMQ-WITNESS)."""
    t = inp.topology
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    assert family.every_supply is not None
    try:
        proof = family.every_supply.load().prove(inp, deadline)
    except ProofDeadlinePassed:
        claim = (
            f"for every supply: not established (--timeout {timeout_s:g} s ran out before "
            "the proof was done; FAM-DEADLINE)"
        )
        if as_json:
            click.echo(json.dumps(prove_document(inp, source, None, claim, 4)))
        else:
            click.echo(f"creditflow prove {source}: AMQP {t.shape} topology {t.name}")
            click.echo(claim)
        raise SystemExit(exit_codes.INCOMPLETE) from None
    if as_json:
        if proof is None:
            claim = f"for every supply: not established (outside Z3-AMQ-ABSTRACTION; {SUPPORTED})"
        elif proof.proved:
            claim = f"holds for every supply (proved: {proof.statement})"
        else:
            claim = "for every supply: not established"
        code = exit_codes.OK if proof is not None and proof.proved else exit_codes.INCOMPLETE
        click.echo(json.dumps(prove_document(inp, source, proof, claim, code)))
        raise SystemExit(code)
    click.echo(f"creditflow prove {source}: AMQP {t.shape} topology {t.name}")
    for line in settings_lines(inp.settings):
        click.echo(line)
    if proof is None:
        click.echo(
            f"for every supply: not established (this {t.shape} topology is outside "
            f"Z3-AMQ-ABSTRACTION; covered: {SUPPORTED})"
        )
        raise SystemExit(exit_codes.INCOMPLETE)
    for prop, status in proof.verdicts.items():
        said = "proved for every supply" if status == "proved" else "not proved"
        click.echo(f"  {prop:<22} {said}")
    click.echo(
        f"  {SERIAL_OBLIGATION:<22} {'proved' if proof.serial == 'proved' else 'not proved'}"
        f"{serial_why(proof)}"
    )
    click.echo(
        f"invariant: {len(proof.lemmas)} lemmas kept, {len(proof.dropped)} dropped "
        f"({', '.join(proof.dropped) or 'none'}); {proof.seconds:.2f} s"
    )
    if proof.proved:
        click.echo(f"holds for every supply (proved: {proof.statement})")
        raise SystemExit(exit_codes.OK)
    click.echo(
        f"for every supply: not established ({', '.join(proof.open) or SERIAL_OBLIGATION} "
        f"not proved; `creditflow check {source}` looks for a witness)"
    )
    raise SystemExit(exit_codes.INCOMPLETE)
