"""``creditflow check`` for any family through its parts (FAM-CHECKING, FAM-CODEC,
FAM-EVERY-SUPPLY, FAM-DEADLINE): the family's proof for every supply where it has one,
else the one explorer over the family's transition system, the counterexample written as
an ITF trace and a picture before it is reported. A family with no renderer of its own
(every family but ``credit_flow`` and ``amqp``) is checked here, so a new family gets
``check`` by supplying its parts. Rendering only; the engines return typed results."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import click

from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import (
    DEFAULT_FOLDER,
    Saver,
    echo_step_lines,
    fail,
    output_path,
    picture_path,
    printable_line,
    refuse_options_not_taken,
)
from creditflow.conformance.explore.counterexamples import Finding
from creditflow.conformance.explore.explorer import NO_DEADLOCK, Progress, explore
from creditflow.conformance.explore.runs import step_runs
from creditflow.conformance.family import registry
from creditflow.conformance.family.interface import Family, SupplyProof
from creditflow.conformance.inputs.itf import write_document
from creditflow.conformance.inputs.reading import InputError
from creditflow.conformance.traces.models import model_trace
from creditflow.conformance.traces.pictures import write_picture
from creditflow.model.system import TransitionSystem


def route(ctx: click.Context, graph: str, config: Path | None, command: str) -> Any | None:
    """FAM-REGISTRY: the family whose reader finds ``graph`` (with ``config`` applied)
    and its instance, after refusing, in one line and exit 2, every option the command
    line set that the family does not take for ``command`` (FAM-OPTIONS); ``None`` when
    no family's reader claims it (a credit_flow graph: the NET commands). A bad input is
    one line naming the file, exit 2 (IN-*)."""
    for family in registry.families():
        find = getattr(family.reader.load(), "find", None)
        if find is None:
            continue
        try:
            found = find(graph, config)
        except InputError as exc:
            fail(str(exc))
        if found is not None:
            refuse_options_not_taken(ctx, family, command)
            return family, found
    return None


@dataclass(frozen=True)
class FamilyCheckResult:
    """What ``check`` decided for one instance of a family (SCOPE-EXIT, OUT-TYPED-RESULT)."""

    family: str
    graph: str
    source: str
    every_supply: bool
    supply: int | None
    max_states: int
    complete: bool
    states: int
    transitions: int
    seconds: float
    properties: Mapping[str, bool | None]
    finding: Finding | None
    #: the finding's property under the family's own name (a stall is the explorer's deadlock)
    violated: str | None
    proof: SupplyProof | None
    exit_code: int
    claim: str
    files: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``check --json`` document of a family (spec/schemas/check.json, third branch)."""
        f = self.finding
        return {
            "family": self.family,
            "graph": self.graph,
            "source": self.source,
            "complete": self.complete,
            "states": self.states,
            "transitions": self.transitions,
            "seconds": round(self.seconds, 4),
            "properties": dict(self.properties),
            "violation": None
            if f is None
            else {
                "property": self.violated,
                "kind": f.kind,
                "length": f.length,
                "shortest": f.shortest,
                "steps": [a for a, _ in f.path[1:]],
            },
            "proof": None
            if self.proof is None
            else {
                "status": self.proof.status,
                "statement": self.proof.statement,
                "properties": dict(self.proof.properties),
            },
            "scope": {
                "supply": "every" if self.every_supply else self.supply,
                "explored_supply": self.supply,
                "max_states": self.max_states,
            },
            "claim": self.claim,
            "exit_code": self.exit_code,
            **self.files,
        }


def decide(
    family: Family,
    instance: Any,
    source: str,
    supply: int | None,
    every_supply: bool,
    max_states: int,
    progress: Progress | None,
    full_search: bool,
    prove: bool,
    prove_timeout: float | None,
) -> tuple[FamilyCheckResult, TransitionSystem[Any] | None]:
    """FAM-CHECKING: the proof for every supply where the family has one and it was asked
    (FAM-EVERY-SUPPLY, within ``prove_timeout``: FAM-DEADLINE), else (or when it is open)
    the explorer over the supply asked or the instance's own."""
    checking = family.checking.load()
    proof: SupplyProof | None = None
    if every_supply and prove and family.every_supply is not None:
        deadline = None if prove_timeout is None else time.monotonic() + prove_timeout
        proof = family.every_supply.load().prove(instance, deadline)
    started = time.perf_counter()
    if proof is not None and proof.status == "proved" and not full_search:
        claim = f"holds for every supply (proved: {proof.statement})"
        result = FamilyCheckResult(
            family.name,
            instance.name,
            source,
            True,
            checking.supply(instance),
            max_states,
            False,
            0,
            0,
            time.perf_counter() - started,
            dict(proof.properties),
            None,
            None,
            proof,
            exit_codes.OK,
            claim,
        )
        return result, None
    system = checking.system(instance, {"supply": supply})
    explored = explore(
        system, max_states=max_states, stop_at_deadlock=not full_search, progress=progress
    )
    stall = getattr(system, "deadlock_property", NO_DEADLOCK)
    finding = explored.primary()
    violated = None
    if finding is not None:
        violated = stall if finding.property_id == NO_DEADLOCK else finding.property_id
    decided = explored.complete
    holds = {
        (stall if pid == NO_DEADLOCK else pid): (ok if decided or not ok else None)
        for pid, ok in explored.holds.items()
    }
    explored_supply = supply if supply is not None else checking.supply(instance)
    if finding is not None:
        code = exit_codes.DEADLOCK if violated == stall else exit_codes.VIOLATION
        shortest = "shortest" if finding.shortest else "not proven shortest"
        claim = f"{violated} violated after {finding.length} steps ({shortest})"
        if explored_supply is not None:
            claim += f" with supply {explored_supply:,}"
    elif not explored.complete:
        code = exit_codes.INCOMPLETE
        claim = f"nothing found within {explored.n_states:,} states; not established"
    else:
        code = exit_codes.INCOMPLETE if every_supply else exit_codes.OK
        claim = (
            f"holds for supply {explored_supply} "
            f"({explored.n_states:,} states, every state explored)"
        )
        if every_supply:
            why = proof.statement if proof is not None else "the family has no proof for it"
            claim += f"; for every supply: not established ({why})"
    result = FamilyCheckResult(
        family.name,
        instance.name,
        source,
        every_supply,
        explored_supply,
        max_states,
        explored.complete,
        explored.n_states,
        explored.transitions,
        explored.seconds,
        holds,
        finding,
        violated,
        proof,
        code,
        claim,
    )
    return result, system


def step_lines(codec: Any, system: TransitionSystem[Any], finding: Finding) -> list[str]:
    """TRACE-STEPS of a finding's path through the family codec (FAM-CODEC)."""
    return path_lines(codec, system, finding.path)


def path_lines(
    codec: Any, system: TransitionSystem[Any], path: Sequence[tuple[Any, Any]]
) -> list[str]:
    """TRACE-STEPS of a run through the family codec (FAM-CODEC); TRACE-RUNS gathers
    repeated blocks of steps into one line."""
    lines = [f"   0. {'(start)':<13} {codec.state_line(system, path[0][1])}"]
    words = tuple(codec.step_words(system, a) for a, _ in path[1:])
    for run in step_runs(words):
        state = codec.state_line(system, path[run.last][1])
        if run.count == 1 and len(run.block) == 1:
            lines.append(f"{run.first:>4}. {run.block[0]:<13} {state}")
        else:
            block = ", ".join(run.block)
            lines.append(f"{run.first:,}–{run.last:,}. ({block}) ×{run.count:,}  {state}")
    return lines


def run_check(
    family: Family,
    instance: Any,
    source: str,
    supply: int | None,
    every_supply: bool,
    max_states: int,
    as_json: bool,
    trace_out: Path | None,
    dot_out: Path | None,
    progress: Progress | None,
    full_search: bool,
    prove: bool,
    prove_timeout: float | None,
) -> NoReturn:
    """Decide, write the counterexample before it is reported (OUT-FAILURE), print, exit."""
    result, system = decide(
        family,
        instance,
        source,
        supply,
        every_supply,
        max_states,
        progress,
        full_search,
        prove,
        prove_timeout,
    )
    codec = family.codec.load() if family.codec is not None else None
    saver = Saver()
    files: dict[str, str] = {}
    finding = result.finding
    if finding is not None and system is not None:
        subject = dict(codec.meta(instance)) if codec is not None else {"graph": instance.name}
        subject.setdefault("supply", result.supply)  # TRACE-REPLAY: the supply explored
        model = codec.model if codec is not None else family.name
        named = dataclasses.replace(finding, property_id=result.violated or finding.property_id)
        doc = model_trace(system, named, model, subject, source)
        path = output_path(trace_out, DEFAULT_FOLDER, instance.name, ".itf.json")
        if saver.attempt(write_document, doc, path) is not None:
            files["trace"] = str(path)
        if codec is not None:
            title = f"{instance.name}: {result.violated} after {finding.length} steps"
            dot_path = picture_path(dot_out, path)
            drawn = saver.attempt(
                write_picture, codec.picture(system, finding.path[-1][1], title), dot_path
            )
            if drawn:
                files["dot"] = str(drawn[0])
                if drawn[1] is not None:
                    files["svg"] = str(drawn[1])
    result = dataclasses.replace(result, files=files)
    if as_json:
        click.echo(json.dumps(saver.annotate(result.to_json())))
    else:
        click.echo(printable_line(f"{instance.name} ({family.name}): {result.claim}"))
        if finding is not None and system is not None and codec is not None:
            echo_step_lines(step_lines(codec, system, finding))
        saver.show_unsaved()
        for key in ("trace", "dot", "svg"):
            if key in files:
                click.echo(f"{key}: {files[key]}")
    saver.exit(result.exit_code)


#: FAM-CHECKING, FAM-CODEC: the families whose ``check`` and ``prove`` are still printed
#: by their own CLI module (AMQP, ``cli/amqp.py``: the settings in effect, its directed
#: runs, its proof's obligations); credit_flow's graphs never reach the routing; every
#: other family is printed here.
OWN_RENDERING = frozenset({"amqp"})


def run_prove(
    family: Family, instance: Any, source: str, timeout_s: float | None, as_json: bool
) -> NoReturn:
    """``creditflow prove`` for any family with an every-supply part (FAM-EVERY-SUPPLY,
    FAM-DEADLINE): the proof's status, statement and properties; exit 0 proved, 10/12
    refuted (a stall / another property false for some supply), 4 open (SCOPE-EXIT)."""
    assert family.every_supply is not None
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    proof: SupplyProof = family.every_supply.load().prove(instance, deadline)
    false = [pid for pid, ok in proof.properties.items() if ok is False]
    if proof.status == "proved":
        code, claim = exit_codes.OK, f"holds for every supply (proved: {proof.statement})"
    elif proof.status == "refuted":
        stall = any(pid.endswith(("NO-STALL", "NO-DEADLOCK")) for pid in false)
        code = exit_codes.DEADLOCK if stall else exit_codes.VIOLATION
        claim = (
            f"violated for some supply: {', '.join(false) or proof.statement} "
            f"({proof.statement}); `creditflow check {source}` prints the witness"
        )
    else:
        code = exit_codes.INCOMPLETE
        claim = f"for every supply: not established ({proof.statement})"
    if as_json:
        doc = {
            "family": family.name,
            "graph": instance.name,
            "source": source,
            "proof": {
                "status": proof.status,
                "statement": proof.statement,
                "properties": dict(proof.properties),
            },
            "claim": claim,
            "exit_code": code,
        }
        click.echo(json.dumps(doc))
    else:
        click.echo(printable_line(f"creditflow prove {source} ({family.name})"))
        for pid, ok in proof.properties.items():
            said = {True: "proved for every supply", False: "violated", None: "open"}[ok]
            click.echo(f"  {pid:<24} {said}")
        click.echo(printable_line(claim))
    raise SystemExit(code)
