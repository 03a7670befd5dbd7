"""``creditflow conform``, ``creditflow replay`` and ``creditflow adapters``: checking
implementations against the model through the adapter protocol (AD-*)."""

from __future__ import annotations

import dataclasses
import json
import random
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from creditflow.adapters.amqp.rabbit_fifo import NAME as RABBIT_FIFO
from creditflow.adapters.rabbitmq.module import ebin_problem
from creditflow.adapters.registry import (
    AMQP_BUILTIN,
    AMQP_MUTANT_PREFIX,
    HTTP2_BUILTIN,
    UnknownAdapter,
    adapter_factory,
    adapter_names,
    amqp_adapter_factory,
    amqp_mutants,
    command_factory,
    is_amqp_name,
    is_http2_name,
)
from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import (
    OUTPUT_FILE,
    POSITIVE,
    SEED,
    BoundedParam,
    Saver,
    TimeoutParam,
    echo_json_with_update,
    exit_after_update,
    fail,
    file_option,
    folder_option,
)
from creditflow.conformance.cli.family_conform import conform_family, replay_family
from creditflow.conformance.differential.adapter import Adapter, AdapterFailure
from creditflow.conformance.differential.conform import (
    DEFAULT_MAX_EXAMPLES,
    DEFAULT_STEPS,
    PHASES,
    ConformOptions,
    ConformResult,
    run_conform,
)
from creditflow.conformance.differential.hello import adapter_family
from creditflow.conformance.differential.protocol import FAMILY as CREDIT_FLOW_FAMILY
from creditflow.conformance.differential.replay import (
    DIVERGED,
    FAILED,
    NOT_OFFERED,
    PASS,
    XFAIL,
    XPASS,
    replay_traces,
)
from creditflow.conformance.differential.report import divergence_lines
from creditflow.conformance.differential.subprocess import DEFAULT_TIMEOUT
from creditflow.conformance.differential.traces import SUFFIX, load_trace, trace_files
from creditflow.conformance.families.amqp.protocol import (
    AMQP_PHASES,
    DEFAULT_AMQP_EXAMPLES,
    DEFAULT_AMQP_STEPS,
    DEFAULT_DEPTH,
)
from creditflow.conformance.families.amqp.protocol import (
    FAMILY as AMQP_FAMILY,
)
from creditflow.conformance.inputs import bounds
from creditflow.conformance.inputs.expectations import ExpectationsError, load_expectations
from creditflow.conformance.inputs.itf import TraceFormatError
from creditflow.conformance.outputs import derived_path
from creditflow.conformance.outputs.streams import printable
from creditflow.conformance.runtime import signals

if TYPE_CHECKING:
    from creditflow.conformance.differential.findings import Finding
    from creditflow.conformance.families.amqp.conform import AmqpConformResult, AmqpRun
    from creditflow.conformance.families.amqp.protocol import AmqpAdapter


def adapter_options(command: Callable) -> Callable:
    """``--adapter``, ``--adapter-cmd``, ``--rabbitmq-ebin`` and ``--timeout``."""
    for option in reversed(
        [
            click.option(
                "--adapter",
                "adapter_name",
                metavar="NAME",
                help="A built-in adapter: reference, reference-process, "
                "python-template, rabbitmq, mutant:NAME (`creditflow adapters`).",
            ),
            click.option(
                "--adapter-cmd",
                metavar="CMD",
                help="A command that speaks the adapter protocol on stdin/stdout "
                "(spec/adapter-protocol.md), split like a shell command line.",
            ),
            click.option(
                "--rabbitmq-ebin",
                type=click.Path(file_okay=False, path_type=Path),
                help="The rabbit_common ebin folder holding credit_flow.beam "
                "(default: found in the installed rabbitmq-server package).",
            ),
            click.option(
                "--timeout",
                type=TimeoutParam(),
                default=DEFAULT_TIMEOUT,
                show_default=True,
                help="Seconds within which each response must arrive in full, "
                "or the adapter counts as hung (AD-TRANSPORT-DEADLINE).",
            ),
        ]
    ):
        command = option(command)
    return command


def open_factory(
    adapter_name: str | None, adapter_cmd: str | None, rabbitmq_ebin: Path | None, timeout: float
) -> Callable[[], Adapter]:
    """The adapter chosen on the command line; a usage error (exit 2) if not exactly one."""
    if (adapter_name is None) == (adapter_cmd is None):
        raise click.UsageError("give exactly one of --adapter NAME or --adapter-cmd CMD")
    try:
        if adapter_cmd is not None:
            return command_factory(adapter_cmd, timeout=timeout)
        assert adapter_name is not None
        if rabbitmq_ebin is not None and not (rabbitmq_ebin / "credit_flow.beam").is_file():
            fail(ebin_problem(rabbitmq_ebin), exit_codes.USAGE)
        return adapter_factory(adapter_name, rabbitmq_ebin=rabbitmq_ebin, timeout=timeout)
    except UnknownAdapter as exc:
        raise click.UsageError(str(exc)) from None
    except ValueError as exc:  # shlex: an unbalanced quote in --adapter-cmd
        raise click.UsageError(f"--adapter-cmd: {exc}") from None


@click.command()
@adapter_options
@click.option(
    "--max-examples",
    type=POSITIVE,
    help="Hypothesis examples of the op machine (the network machine gets half) "
    f"[default: {DEFAULT_MAX_EXAMPLES}; AMQP adapters: {DEFAULT_AMQP_EXAMPLES}].",
)
@click.option(
    "--steps",
    type=POSITIVE,
    help=f"Most steps per example [default: {DEFAULT_STEPS}; AMQP adapters: {DEFAULT_AMQP_STEPS}].",
)
@click.option(
    "--depth",
    type=POSITIVE,
    default=DEFAULT_DEPTH,
    show_default=True,
    help="AMQP adapters: the longest op sequence the explorer-runs phase tries, "
    "shortest first (AD-AMQ-CONFORM-EXPLORE).",
)
@click.option("--seed", type=SEED, help="Seed for a reproducible run (default: random, printed).")
@click.option(
    "--skip-op",
    "skip_ops",
    multiple=True,
    type=click.Choice(("transfer", "flow", "drain", "drained", "settle")),
    help="AMQP adapters: runs draw no such op (repeatable), e.g. to look past a known "
    "drain finding.",
)
@folder_option(
    "--corpus",
    "Write the shrunk failing trace into this corpus folder (replayed by "
    "`creditflow replay` and the pytest plugin).",
)
@folder_option(
    "--out", "Where to write the failing trace without --corpus.", Path("counterexamples")
)
@click.option(
    "--phase",
    "phases",
    multiple=True,
    type=click.Choice(PHASES + AMQP_PHASES),
    help="Run only this phase (repeatable; default: all of the adapter's family, in "
    f"order: {', '.join(PHASES)}; AMQP adapters: {', '.join(AMQP_PHASES)}).",
)
@click.option(
    "--shrink-seconds",
    type=BoundedParam(bounds.BUDGET_SECONDS),
    default=5.0,
    show_default=True,
    help="Time budget of Hypothesis's shrinking (delta debugging follows).",
)
@file_option(
    "--expectations",
    "Known divergences of this implementation (JSON, AD-EXPECTATIONS): a "
    "divergence with exactly the signature of a listed trace's is expected, not a failure.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="AMQP adapters: should and policy findings fail the run too (FIND-EXIT).",
)
@click.option(
    "--max-findings",
    type=POSITIVE,
    default=20,
    show_default=True,
    help="AMQP adapters: stop after this many distinct findings (FIND-EVERY).",
)
@click.option(
    "--update-expectations",
    "update_expectations",
    type=OUTPUT_FILE,
    metavar="FILE",
    help="AMQP, rabbit-fifo and HTTP/2 adapters: after the run, write FILE (the "
    "--expectations format) listing every finding of the run, each by the trace written "
    "for it; an existing FILE's entries are kept (FIND-UPDATE).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def conform(
    adapter_name: str | None,
    adapter_cmd: str | None,
    rabbitmq_ebin: Path | None,
    timeout: float,
    max_examples: int | None,
    steps: int | None,
    depth: int,
    seed: int | None,
    skip_ops: tuple[str, ...],
    corpus: Path | None,
    out: Path,
    phases: tuple[str, ...],
    shrink_seconds: float,
    expectations: Path | None,
    strict: bool,
    max_findings: int,
    update_expectations: Path | None,
    as_json: bool,
) -> None:
    """Search for op sequences on which an implementation and the model disagree.

    First whole examples of random ops, each written to the adapter at once and
    compared op by op after (the fast pass); then Hypothesis state machines drive the
    model and the adapter side by side and compare them after every op: random
    protocol ops over several processes, then process-graph
    runs projected to per-process ops, then the explorer's runs of the presets. The
    first divergence is shrunk to a minimal trace, written to disk (ITF) and shown as
    model vs implementation. With --expectations, a divergence with exactly the
    signature of a listed trace's divergence (its op and how each field differs,
    AD-EXPECTATIONS-MATCH) is expected and the search goes on; any other fails (exit 1),
    and a listed trace that passes is an unexpected pass.
    Exit 0: conformant; 1: divergence or unexpected pass; 2: bad expectations file;
    3: adapter failure. --update-expectations FILE (AMQP, rabbit-fifo, HTTP/2) writes
    FILE from the run's findings after the verdict (FIND-UPDATE).

    AMQP adapters (amqp-reference, amqp-reference:mutant:NAME, proton[@VERSION],
    rhea[@VERSION], azure-pyamqp[@VERSION]) are held against the AMQP model with the
    policy they declare: the explorer's shortest op sequences, then Hypothesis runs,
    comparing both ends' link and session state after every op; exit 12 when the
    implementation breaks a property (a stall, a transfer beyond credit, a negative
    window, over-delivery) while the model with the same policy does the same.
    The failing run is written as an AMQP run trace (AD-AMQ-CONFORM-TRACE);
    --expectations takes AMQP run traces (AD-AMQ-EXPECTATIONS-MATCH). rabbit-fifo is
    held against the model's queue end (AD-AMQ-FIFO-CONFORM).

    \b
    Examples:
      creditflow conform --adapter rabbitmq --seed 1
      creditflow conform --adapter rhea@3.0.5 --seed 1
      creditflow conform --adapter-cmd "python3 my_adapter.py" --corpus traces/
      creditflow conform --adapter-cmd "./my_port" --expectations known.json
    """
    family = _family_of(adapter_name, adapter_cmd, timeout)
    if family == HTTP2_FAMILY:  # FAM-ALPHABET: the family record's own conform
        given = click.get_current_context().get_parameter_source("depth")
        conform_family(
            family, adapter_name, adapter_cmd, timeout, max_examples, steps,
            depth if given == click.core.ParameterSource.COMMANDLINE else None,
            seed, phases, corpus or out, expectations, as_json,
            update=update_expectations,
        )  # fmt: skip
        return
    if family == AMQP_FAMILY:
        assert adapter_name is not None or adapter_cmd is not None
        _conform_amqp(
            adapter_name or "",
            timeout,
            max_examples,
            steps,
            depth,
            seed,
            phases,
            skip_ops,
            as_json,
            expectations=expectations,
            folder=corpus or out,
            rabbitmq_ebin=rabbitmq_ebin,
            adapter_cmd=adapter_cmd,
            strict=strict,
            max_findings=max_findings,
            update=update_expectations,
        )
        return
    if update_expectations is not None:
        raise click.UsageError(
            "--update-expectations: AMQP, rabbit-fifo and HTTP/2 adapters only (FIND-UPDATE)"
        )
    if skip_ops:
        raise click.UsageError("--skip-op: AMQP adapters only")
    if any(p in AMQP_PHASES for p in phases):
        raise click.UsageError(f"--phase {', '.join(AMQP_PHASES)}: AMQP adapters only")
    max_examples = DEFAULT_MAX_EXAMPLES if max_examples is None else max_examples
    steps = DEFAULT_STEPS if steps is None else steps
    factory = open_factory(adapter_name, adapter_cmd, rabbitmq_ebin, timeout)
    try:
        known = load_expectations(expectations) if expectations else None
    except ExpectationsError as exc:
        fail(str(exc), exit_codes.USAGE)
        return
    if seed is None:
        seed = random.randrange(2**32)
    # SIG-POLICY: the seed is known before anything runs, and said again if interrupted.
    click.echo(f"creditflow conform: seed {seed}", err=as_json)
    signals.note(seed=seed, out=corpus or out)
    options = ConformOptions(
        max_examples=max_examples,
        steps=steps,
        seed=seed,
        out_dir=out,
        corpus=corpus,
        shrink_seconds=shrink_seconds,
        expectations=known,
        phases=tuple(p for p in PHASES if p in phases) if phases else PHASES,
    )
    try:
        result = run_conform(factory, options)
    except ExpectationsError as exc:
        fail(str(exc), exit_codes.USAGE)
        return
    how = _adapter_args(adapter_name, adapter_cmd, rabbitmq_ebin, timeout)
    saver = Saver()
    if result.write_error is not None:
        saver.errors.append(result.write_error)
    if as_json:
        out_json = result.to_json()
        if result.trace_path is not None:
            out_json["replay"] = f"creditflow replay {shlex.quote(str(result.trace_path))} {how}"
        click.echo(json.dumps(saver.annotate(out_json)))
    else:
        _print_conform(result, how, expectations, saver)
    saver.exit(result.exit_code)


def _conform_amqp(
    name: str,
    timeout: float,
    max_examples: int | None,
    steps: int | None,
    depth: int,
    seed: int | None,
    phases: tuple[str, ...],
    skip_ops: tuple[str, ...],
    as_json: bool,
    expectations: Path | None = None,
    folder: Path = Path("counterexamples"),
    rabbitmq_ebin: Path | None = None,
    adapter_cmd: str | None = None,
    strict: bool = False,
    max_findings: int = 20,
    update: Path | None = None,
) -> None:
    """``conform`` for the AMQP family (AD-AMQ-CONFORM): same options, seed and exit
    codes; the family's own phases; with ``expectations`` known failures masked
    (AD-AMQ-EXPECTATIONS-MASK); the failing run written into ``folder``
    (TRACE-AMQP-RUN). ``adapter_cmd``: a command whose ``hello`` lists ``amqp``
    (AD-CMD, FAM-ALPHABET) instead of the built-in adapter ``name``. The engine (and the
    AMQP model) is imported here only, so that a NET run imports exactly what it did
    before."""
    # deferred: as above, the AMQP engine only for AMQP runs
    from creditflow.conformance.families.amqp.conform import (
        AmqpConformOptions,
        run_amqp_conform,
    )

    # deferred: as above, the AMQP engine only for AMQP runs
    from creditflow.conformance.families.amqp.replay import run_amqp_conform_expecting

    wrong = [p for p in phases if p not in AMQP_PHASES]
    if wrong:
        raise click.UsageError(f"--phase {', '.join(wrong)}: not a phase of AMQP adapters")
    if name == RABBIT_FIFO:  # AD-AMQ-FIFO-CONFORM: the queue end, its own ops
        if skip_ops:
            raise click.UsageError(f"--skip-op: not offered for {RABBIT_FIFO}")
        conform_queue(
            timeout,
            max_examples,
            steps,
            depth,
            seed,
            phases,
            as_json,
            rabbitmq_ebin,
            expectations,
            folder,
            update,
        )
        return
    factory = _amqp_factory(name, adapter_cmd, rabbitmq_ebin, timeout)
    if seed is None:
        seed = random.randrange(2**32)
    click.echo(f"creditflow conform: seed {seed}", err=as_json)
    signals.note(seed=seed)
    options = AmqpConformOptions(
        seed=seed,
        max_examples=DEFAULT_AMQP_EXAMPLES if max_examples is None else max_examples,
        steps=DEFAULT_AMQP_STEPS if steps is None else steps,
        depth=depth,
        phases=tuple(p for p in AMQP_PHASES if p in phases) if phases else AMQP_PHASES,
        skip=skip_ops,
        strict=strict,
        max_findings=max_findings,
    )
    try:
        known = load_expectations(expectations) if expectations else None
        result = (
            run_amqp_conform(factory, options)
            if known is None
            # AD-EXPECTATIONS-CONFORM: the listed traces also where this run writes
            # its own (FIND-UPDATE's entries name them)
            else run_amqp_conform_expecting(factory, options, known, (folder,))
        )
    except ExpectationsError as exc:  # AD-AMQ-EXPECTATIONS-MATCH: a bad file or trace
        fail(str(exc), exit_codes.USAGE)
    saver = Saver()
    signals.note(out=folder)
    result = write_findings(result, folder, saver)  # FIND-TRACE: before any is reported
    same = [
        f.trace
        for f, r in zip(result.findings, result.finding_runs, strict=True)
        if r == result.run
    ]
    path = Path(same[0]) if same and same[0] else write_failing_run(result, folder, saver)
    replay = (
        None
        if path is None
        else f"creditflow replay {shlex.quote(str(path))} "
        f"{_adapter_args(name or None, adapter_cmd, rabbitmq_ebin, DEFAULT_TIMEOUT)}"
    )
    if as_json:
        doc = result.to_json()
        if path is not None:
            doc.update(trace=str(path), replay=replay)
        echo_json_with_update(doc, result, update, saver, write_expectations)
        saver.exit(result.exit_code)
    _print_amqp(result, expectation_lines(result, expectations))
    if path is not None:
        click.echo(f"trace: {printable(str(path))}")
        click.echo(f"replay: {printable(str(replay))}")
    saver.show_unsaved()
    exit_after_update(result, update, saver, write_expectations)


def write_expectations(
    result: Any, path: Path, saver: Saver, echo: bool = False
) -> dict[str, Any] | None:
    """FIND-UPDATE: ``path`` written (merged) from the findings of an AMQP link-end or
    queue-end run, each listed by the trace written for it (FIND-TRACE); the one line
    said (``echo``), the record for ``--json``; a write failure is the saver's (OUT-EXIT:
    said in one line after the verdict, the verdict's exit code kept unless it is 0)."""
    # deferred: the writer only when asked
    from creditflow.conformance.outputs.expectations import (
        finding_reason,
        update_known_divergences,
    )

    if result.failure is not None:  # an adapter failure: nothing to list, nothing written
        return None
    entries = [
        (Path(f.trace).name.removesuffix(SUFFIX), finding_reason(f, result.seed))
        for f in result.findings
        if f.trace is not None
    ]
    # the listed traces that pass now: taken out (FIND-UPDATE), when the file updated is
    # the one the run was given (their names are its entries)
    passing = tuple(getattr(result, "unexpected_passes", ()) or ())
    done = saver.attempt(update_known_divergences, path, result.adapter, entries, passing)
    if done is None:
        return None
    if echo:
        click.echo(printable(done.line()))
    return {
        "path": str(done.path),
        "entries": done.entries,
        "added": list(done.added),
        "removed": list(done.removed),
    }


#: FAM-ALPHABET: the HTTP/2 family (its alphabet supplies conform and replay)
HTTP2_FAMILY = "http2"
#: AD-HELLO: the families whose adapters conform and replay drive, in order of preference
#: (FAM-ALPHABET: each has an alphabet)
COMMAND_FAMILIES = (CREDIT_FLOW_FAMILY, AMQP_FAMILY, HTTP2_FAMILY)


def _family_of(adapter_name: str | None, adapter_cmd: str | None, timeout: float) -> str:
    """The family of the adapter chosen (AD-HELLO, FAM-ALPHABET): a built-in name's, or
    the one an ``--adapter-cmd``'s ``hello`` lists (its own adapter failure, exit 3, if
    it lists none the engine drives)."""
    if adapter_name is not None and adapter_cmd is None:
        if is_http2_name(adapter_name):
            return HTTP2_FAMILY
        return AMQP_FAMILY if is_amqp_name(adapter_name) else CREDIT_FLOW_FAMILY
    if adapter_cmd is None or adapter_name is not None:
        return CREDIT_FLOW_FAMILY  # open_factory says what is wrong
    try:
        argv = shlex.split(adapter_cmd)
    except ValueError:
        return CREDIT_FLOW_FAMILY  # open_factory says what is wrong
    if not argv:
        return CREDIT_FLOW_FAMILY
    try:
        return adapter_family(argv, COMMAND_FAMILIES, timeout)
    except AdapterFailure as exc:
        fail(str(exc), exit_codes.ADAPTER_FAILURE)
        raise  # unreachable: fail exits


def _amqp_factory(
    name: str, adapter_cmd: str | None, rabbitmq_ebin: Path | None, timeout: float
) -> Callable[[], AmqpAdapter]:
    """The AMQP adapter chosen: ``--adapter-cmd`` through the family's alphabet (AD-CMD,
    FAM-ALPHABET), or a built-in one by name (AD-AMQ-VERSION; AD-AMQ-10: amqp10-client
    finds its ebins as rabbit-fifo does)."""
    if adapter_cmd is not None:
        # deferred: the AMQP model only for AMQP adapters (as in _conform_amqp)
        from creditflow.conformance.families.amqp.alphabet import ALPHABET

        argv = shlex.split(adapter_cmd)
        return lambda: ALPHABET.open_command(argv, timeout)
    try:
        return amqp_adapter_factory(name, timeout=timeout, rabbitmq_ebin=rabbitmq_ebin)
    except UnknownAdapter as exc:
        raise click.UsageError(str(exc)) from None


def _print_amqp(result: AmqpConformResult, expected: list[str] | None = None) -> None:
    # deferred: as in _conform_amqp, the AMQP engine only for AMQP runs
    from creditflow.conformance.families.amqp.conform import run_lines

    if result.failure is not None and not result.phases:
        fail(str(result.failure), exit_codes.ADAPTER_FAILURE)
    named = result.adapter if "@" in result.adapter else f"{result.adapter} {result.version}"
    click.echo(f"creditflow conform: {printable(named)}, seed {result.seed}")
    policy = ", ".join(
        f"{k} {v.get('policy', v.get('formula', '?')) if isinstance(v, dict) else v}"
        for k, v in result.policy.items()
        if k in ("credit", "window", "sender_credit")
    )
    click.echo(f"  policy: {printable(policy)}")
    for line in expected or ():  # AD-AMQ-EXPECTATIONS-MATCH
        click.echo(line)
    for p in result.phases:
        click.echo(f"  {p.name:15} {p.runs:6,} runs {p.ops:9,} ops {p.seconds:7.2f} s")
    if result.failure is not None:
        fail(str(result.failure), exit_codes.ADAPTER_FAILURE)
    for line in findings_lines(result):  # FIND-EVERY, FIND-RECORD
        click.echo(printable(line))
    if result.run is None:
        ops = sum(p.ops for p in result.phases)
        if result.unexpected_passes:  # AD-AMQ-EXPECTATIONS-MATCH
            click.echo(
                f"UNEXPECTED PASS: {len(result.unexpected_passes)} listed trace(s) no longer fail"
            )
            return
        but = " but the expected ones" if result.expected_hits else ""
        click.echo(f"CONFORMANT: no divergence and no property violated{but} in {ops:,} ops")
        return
    if result.run.verdict == "diverged":
        click.echo(f"DIVERGENCE found by {result.found_by}")
    else:
        click.echo(
            f"PROPERTY VIOLATED by the implementation, found by {result.found_by}, while "
            f"the model with the same policy agrees with it"
        )
    for line in run_lines(result.run):
        click.echo(printable(line))


def findings_lines(result: AmqpConformResult) -> list[str]:
    """FIND-EVERY, FIND-RECORD in text: each distinct finding (class, rule, source,
    signature, witness) and the summary: how many, by class, the cap, the budget used."""
    lines = []
    for f in result.findings:
        fails = "fails" if f.fails(result.strict) else "reported"
        lines.append(f"  FINDING   {f.klass} {f.rule.id} ({f.rule.source}), {fails}")
        lines.append(f"            {f.signature}")
        lines.append(f"            witness: {'; '.join(f.witness)}")
        if f.trace is not None:
            lines.append(f"            trace: {f.trace}")
    if result.findings:
        by = ", ".join(
            f"{n} {k}"
            for k in ("must", "should", "contract", "policy")
            if (n := sum(f.klass == k for f in result.findings))
        )
        runs = sum(p.runs for p in result.phases)
        cap = f"; stopped at --max-findings {result.max_findings}" if result.capped else ""
        lines.append(f"  {len(result.findings)} distinct finding(s): {by}; {runs:,} runs{cap}")
    return lines


def _adapter_args(
    adapter_name: str | None, adapter_cmd: str | None, rabbitmq_ebin: Path | None, timeout: float
) -> str:
    """The options that select the same implementation again (for the printed replay
    command, AD-REPRODUCE): the adapter, its ebin folder, a non-default timeout."""
    if adapter_cmd is not None:
        args = ["--adapter-cmd", adapter_cmd]
    else:
        assert adapter_name is not None
        args = ["--adapter", adapter_name]
    if rabbitmq_ebin is not None:
        args += ["--rabbitmq-ebin", str(rabbitmq_ebin.resolve())]
    if timeout != DEFAULT_TIMEOUT:
        args += ["--timeout", f"{timeout:g}"]
    return shlex.join(args)


def implementation_lines(info: dict) -> list[str]:
    """What the implementation says it is beyond its name (AD-HELLO's
    ``implementation``): for the rabbitmq adapter the beam's path, md5 and vsn."""
    impl = info.get("implementation")
    if not isinstance(impl, dict):
        return []
    return [f"  {printable(key)}: {printable(value)}" for key, value in impl.items()]


def _print_conform(
    result: ConformResult, how: str, expectations: Path | None, saver: Saver
) -> None:
    head = f"creditflow conform: {printable(result.adapter)}"
    if result.implementation and result.implementation != result.adapter:
        head += f" ({printable(result.implementation)})"
    click.echo(f"{head}, seed {result.seed}")
    for line in implementation_lines(result.info):
        click.echo(line)
    if result.unexercised:
        click.echo(
            f"ops not exercised (not offered by the implementation, AD-CAPABILITIES): "
            f"{', '.join(result.unexercised)}"
        )
    for known in result.known:
        hits = result.expected_hits.get(known.name, 0)
        click.echo(
            f"  EXPECTED  {known.name} ({known.signature}): "
            f"met in {hits} run{'s' * (hits != 1)}; {known.reason}"
        )
    for name in result.unexpected_passes:
        click.echo(
            f"  XPASS     {name}: passes, but the expectations list it; remove it "
            f"from {expectations}"
        )
    for name, missing in result.known_not_run.items():
        click.echo(
            f"  NOT RUN   {name}: needs {', '.join(missing)}, which the implementation "
            f"does not offer (AD-CAPABILITIES)"
        )
    for p in result.phases:
        unit = "runs" if p.name == "explorer-runs" else "examples"
        click.echo(f"  {p.name:14} {p.examples:6,} {unit:8} {p.ops:9,} ops {p.seconds:7.2f} s")
    if result.failure is not None:
        if result.trace_path is not None:
            click.echo(f"trace (up to the failure): {result.trace_path}")
        saver.show_unsaved()
        fail(str(result.failure), exit_codes.ADAPTER_FAILURE)
    if result.divergence is None:
        if result.unexpected_passes:
            click.echo(
                f"UNEXPECTED PASS: {len(result.unexpected_passes)} listed trace(s) no "
                f"longer diverge"
            )
            return
        but = " but the expected ones" if result.expected_hits else ""
        click.echo(f"CONFORMANT: no divergence{but} in {result.ops:,} ops ({result.seconds:.1f} s)")
        return
    assert result.trace is not None
    click.echo(f"DIVERGENCE found by {result.found_by}")
    for note in result.notes:
        click.echo(f"note: {note}")
    for line in divergence_lines(
        result.divergence,
        result.trace,
        f"minimal diverging trace: {len(result.trace.steps)} ops, default spec {result.trace.spec}",
    ):
        click.echo(line)
    if result.trace_path is None:
        saver.show_unsaved()
        return
    click.echo(f"trace: {result.trace_path}")
    click.echo(f"replay: creditflow replay {shlex.quote(str(result.trace_path))} {how}")


@click.command()
@click.argument("traces", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@adapter_options
@file_option(
    "--expectations",
    "Known divergences of this implementation (JSON, AD-EXPECTATIONS): the "
    "same file and the same verdict as conform --expectations.",
)
@click.option(
    "--shrink",
    is_flag=True,
    help="Shrink each diverging trace to a minimal one and write it under --out.",
)
@folder_option("--out", "Where --shrink writes.", Path("counterexamples"))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def replay(
    traces: tuple[Path, ...],
    adapter_name: str | None,
    adapter_cmd: str | None,
    rabbitmq_ebin: Path | None,
    timeout: float,
    expectations: Path | None,
    shrink: bool,
    out: Path,
    as_json: bool,
) -> None:
    """Replay saved traces against an implementation, deterministically.

    TRACES are trace files or folders of them (`*.itf.json`): per-process traces
    (written by `conform`, or the shipped corpus) and the explorer's network traces
    (written by `check`), which are projected to per-process ops. With --expectations,
    known divergences are masked and judged as in `conform` (AD-EXPECTATIONS-MATCH,
    AD-EXPECTATIONS-MASK). Exit 0: every trace passes or diverges only in known ways;
    1: a divergence or an unexpected pass;
    2: a bad trace or expectations file; 3: adapter failure; 4: no trace ran (every one
    NOT RUN, REPLAY-NOTHING-RAN).

    With an AMQP adapter (amqp-reference[:mutant:NAME], proton[@VERSION],
    rhea[@VERSION]) TRACES are AMQP run traces (written by conform), held against the
    model with the policy that adapter declares (AD-AMQ-REPLAY); exit 12: a property
    violated by the implementation while the model agrees.

    \b
    Examples:
      creditflow replay counterexamples/ --adapter rabbitmq
      creditflow replay corpus/ --adapter-cmd "python3 my_adapter.py" --expectations known.json
      creditflow replay found/ --adapter rhea@3.0.5
    """
    family = _family_of(adapter_name, adapter_cmd, timeout)
    if family == HTTP2_FAMILY:  # FAM-ALPHABET: the family record's own replay
        if shrink:
            raise click.UsageError("--shrink: adapters of the credit_flow family only")
        replay_family(family, traces, adapter_name, adapter_cmd, timeout, expectations, as_json)
        return
    if family == AMQP_FAMILY:
        if shrink:
            raise click.UsageError("--shrink: adapters of the credit_flow family only")
        if adapter_name == RABBIT_FIFO:  # AD-AMQ-FIFO-REPLAY: queue-run traces
            replay_queue(traces, timeout, rabbitmq_ebin, expectations, as_json)
            return
        amqp_factory = _amqp_factory(adapter_name or "", adapter_cmd, rabbitmq_ebin, timeout)
        replay_amqp(traces, amqp_factory, expectations, as_json)
        return
    factory = open_factory(adapter_name, adapter_cmd, rabbitmq_ebin, timeout)
    try:
        known = load_expectations(expectations) if expectations else None
        files = trace_files(list(traces))
        if not files:
            raise TraceFormatError(f"no *.itf.json traces in {', '.join(map(str, traces))}")
        loaded = [load_trace(f) for f in files]
    except (TraceFormatError, ExpectationsError) as exc:
        fail(str(exc), exit_codes.USAGE)
        return
    if shrink:
        signals.note(out=out)
    report = replay_traces(factory, loaded, known, shrink_to=out if shrink else None)
    if report.expectations_error is not None:  # AD-EXPECTATIONS-MATCH: a listed trace
        fail(str(report.expectations_error), exit_codes.USAGE)
        return
    saver = Saver()
    saver.errors.extend(report.write_errors)
    if as_json:
        click.echo(json.dumps(saver.annotate(report.to_json())))
        saver.exit(report.exit_code)
    if report.failure is not None and not report.outcomes:
        fail(str(report.failure), exit_codes.ADAPTER_FAILURE)
    click.echo(
        f"creditflow replay: {report.adapter}"
        + (f" ({report.implementation})" if report.implementation else "")
    )
    if report.expectations is not None:
        for k in report.expectations.known:
            click.echo(f"  EXPECTED  {k.name} ({k.signature}): {k.reason}")
        for name in report.unexpected_passes:
            click.echo(
                f"  XPASS     {name}: passes, but the expectations list it; remove it "
                f"from {expectations}"
            )
        for name, missing in report.expectations.not_run.items():
            click.echo(
                f"  NOT RUN   {name}: needs {', '.join(missing)}, which the implementation "
                f"does not offer (AD-CAPABILITIES)"
            )
    for o in report.outcomes:
        n = len(o.trace.trace.steps)
        if o.status == PASS:
            click.echo(f"  PASS      {o.trace.path} ({n} ops)")
        elif o.status == XFAIL:
            click.echo(f"  XFAIL     {o.trace.path}: {o.reason}")
        elif o.status == XPASS:
            click.echo(
                f"  XPASS     {o.trace.path}: passes, but the expectations list it "
                f"({o.reason}); remove it from {expectations}"
            )
        elif o.status == FAILED:
            click.echo(f"  FAILED    {o.trace.path}: {o.failure}")
        elif o.status == NOT_OFFERED:
            click.echo(
                f"  NOT RUN   {o.trace.path}: needs {', '.join(o.missing_ops)}, which "
                f"the implementation does not offer (AD-CAPABILITIES)"
            )
        elif o.status == DIVERGED:
            assert o.divergence is not None and o.executed is not None
            click.echo(f"  DIVERGED  {o.trace.path}")
            for line in divergence_lines(o.divergence, o.executed)[1:]:
                click.echo("    " + line)
            if o.shrunk is not None:
                click.echo(f"    shrunk trace: {o.shrunk}")
    counts = report.counts
    summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
    if report.unexpected_passes:  # AD-EXPECTATIONS: listed, not replayed, passing
        summary += f"; {len(report.unexpected_passes)} listed trace(s) pass (XPASS)"
    click.echo(f"{len(report.outcomes)} traces: {summary}")
    if report.failure is not None:
        fail(f"could not restart the adapter: {report.failure}", exit_codes.ADAPTER_FAILURE)
    saver.show_unsaved()
    saver.exit(report.exit_code)


@click.command()
def adapters() -> None:
    """List the built-in adapters (for --adapter).

    The ``credit_flow`` family's first, then the ``amqp`` family's (AD-AMQ-VERSION:
    ``NAME@VERSION`` picks a release) and the AMQP reference's mutants.
    ``--adapter-cmd`` takes an adapter of either family (AD-HELLO)."""
    for name, text in adapter_names().items():
        click.echo(f"{name:34} {text}")
    for name, text in AMQP_BUILTIN.items():
        click.echo(f"{name:34} amqp: {text}")
    for name, text in amqp_mutants().items():
        click.echo(f"{AMQP_MUTANT_PREFIX + name:34} amqp mutant: {text}")
    for name, text in HTTP2_BUILTIN.items():
        click.echo(f"{name + '[@VERSION]':34} http2: {text}")


# -- the amqp family (AD-AMQ-*): rendering and writing; the engines are in
# conformance/families/amqp/ ------------------------------------------------------------


def write_failing_run(
    result: AmqpConformResult,
    folder: Path,
    saver: Saver,
    run: AmqpRun | None = None,
    finding: Finding | None = None,
) -> Path | None:
    """AD-AMQ-CONFORM-TRACE, TRACE-AMQP-RUN: a failing run of an AMQP ``conform`` (the
    result's first, or ``run``) written into ``folder`` (the ``--corpus`` or ``--out``
    folder), named after the adapter and the run's content, before the verdict is
    reported; with ``finding``, its rule, class and signature in the trace's meta
    (FIND-TRACE)."""
    # deferred: the AMQP model changes the NET runs' Hypothesis draws when imported
    from creditflow.conformance.families.amqp.run_traces import (
        amqp_trace_digest,
        trace_of_run,
        write_amqp_trace,
    )

    run = result.run if run is None else run
    if run is None:
        return None
    trace = trace_of_run(run)
    name = f"{result.adapter}-{amqp_trace_digest(trace)}"
    assert run.index is not None
    what = "diverges" if run.verdict == "diverged" else "breaks a property"
    found_by = finding.found_by if finding is not None and finding.found_by else result.found_by
    description = (
        f"{result.adapter} {result.version} {what} at op {run.index + 1} "
        f"({run.ops[run.index]}), found by {found_by}, seed {result.seed}"
    )
    meta: dict[str, Any] = {"adapter": result.adapter, "verdict": run.verdict}
    if finding is not None:
        meta.update(rule=finding.rule.id, **{"class": finding.klass}, signature=finding.signature)
    return saver.attempt(
        write_amqp_trace,
        trace,
        derived_path(folder, name, SUFFIX),
        description,
        f"creditflow conform --adapter {result.adapter} --seed {result.seed}",
        meta,
    )


def write_findings(result: AmqpConformResult, folder: Path, saver: Saver) -> AmqpConformResult:
    """FIND-TRACE: every finding's own run written as a trace before any is reported; the
    result with each finding's ``trace`` set to the file written (None if it was not)."""
    written = []
    for finding, run in zip(result.findings, result.finding_runs, strict=True):
        path = write_failing_run(result, folder, saver, run, finding)
        written.append(dataclasses.replace(finding, trace=None if path is None else str(path)))
    return dataclasses.replace(result, findings=tuple(written))


def expectation_lines(result: AmqpConformResult, expectations: Path | None) -> list[str]:
    """AD-AMQ-EXPECTATIONS-MATCH in text: each known failure and how often it was met."""
    lines = []
    for name, why, sig in result.known:
        hits = result.expected_hits.get(name, 0)
        lines.append(f"  EXPECTED  {name} ({sig}): met in {hits} run{'s' * (hits != 1)}; {why}")
    for name in result.unexpected_passes:
        lines.append(
            f"  XPASS     {name}: passes, but the expectations list it; remove it from "
            f"{expectations}"
        )
    for name, why in result.known_not_run.items():
        lines.append(f"  NOT RUN   {name}: {why}")
    return [printable(line) for line in lines]


def replay_amqp(
    traces: tuple[Path, ...],
    factory: Callable[[], AmqpAdapter],
    expectations: Path | None,
    as_json: bool,
) -> None:
    """``creditflow replay TRACES --adapter NAME`` for an AMQP adapter (AD-AMQ-REPLAY):
    exit 0 every trace passes or fails only in known ways, 1 a divergence or an
    unexpected pass, 2 a bad trace or expectations file, 3 the adapter failed, 12 a
    property violated by the implementation while the model agrees."""
    # deferred: the AMQP model only for AMQP adapters (as in _conform_amqp)
    from creditflow.conformance.families.amqp.conform import run_lines

    # deferred: as above
    from creditflow.conformance.families.amqp.replay import (
        NOT_RUN,
        PROPERTY,
        replay_amqp_traces,
    )

    # deferred: as above
    from creditflow.conformance.families.amqp.run_traces import load_amqp_trace

    try:
        known = load_expectations(expectations) if expectations else None
        files = trace_files(list(traces))
        if not files:
            raise TraceFormatError(f"no *{SUFFIX} traces in {', '.join(map(str, traces))}")
        loaded = [load_amqp_trace(f) for f in files]
    except (TraceFormatError, ExpectationsError) as exc:
        fail(str(exc), exit_codes.USAGE)
    report = replay_amqp_traces(factory, loaded, known)
    if report.expectations_error is not None:
        fail(report.expectations_error, exit_codes.USAGE)
    saver = Saver()
    if as_json:
        click.echo(json.dumps(saver.annotate(report.to_json())))
        saver.exit(report.exit_code)
    if report.failure is not None and not report.outcomes:
        fail(report.failure, exit_codes.ADAPTER_FAILURE)
    named = report.adapter if "@" in report.adapter else f"{report.adapter} {report.version}"
    click.echo(f"creditflow replay: {printable(named)}")
    if report.expectations is not None:
        for k in report.expectations.known:
            click.echo(printable(f"  EXPECTED  {k.name} ({k.signature}): {k.reason}"))
        for name in report.unexpected_passes:
            click.echo(
                printable(
                    f"  XPASS     {name}: passes, but the expectations list it; remove it "
                    f"from {expectations}"
                )
            )
        for name, why in report.expectations.not_run.items():
            click.echo(printable(f"  NOT RUN   {name}: {why}"))
    for o in report.outcomes:
        path = printable(str(o.trace.path))
        if o.status == PASS:
            click.echo(f"  PASS      {path} ({len(o.trace.trace.ops)} ops)")
        elif o.status == XFAIL:
            click.echo(printable(f"  XFAIL     {o.trace.path}: {o.reason}"))
        elif o.status == XPASS:
            click.echo(
                printable(
                    f"  XPASS     {o.trace.path}: passes, but the expectations list it "
                    f"({o.reason}); remove it from {expectations}"
                )
            )
        elif o.status == FAILED:
            click.echo(printable(f"  FAILED    {o.trace.path}: {o.failure}"))
        elif o.status == NOT_RUN:
            click.echo(printable(f"  NOT RUN   {o.trace.path}: {o.why_not_run}"))
        elif o.status in (DIVERGED, PROPERTY):
            assert o.run is not None
            head = "DIVERGED " if o.status == DIVERGED else "PROPERTY "
            click.echo(f"  {head} {path}")
            for line in run_lines(o.run):
                click.echo("    " + printable(line))
    summary = ", ".join(f"{v} {k}" for k, v in report.counts.items() if v)
    if report.unexpected_passes:
        summary += f"; {len(report.unexpected_passes)} listed trace(s) pass (XPASS)"
    click.echo(f"{len(report.outcomes)} traces: {summary}")
    if report.failure is not None:
        fail(f"could not restart the adapter: {report.failure}", exit_codes.ADAPTER_FAILURE)
    saver.exit(report.exit_code)


#: AD-AMQ-FIFO-CONFORM: ops per Hypothesis run without --steps
DEFAULT_QUEUE_STEPS = 15


def conform_queue(
    timeout: float,
    max_examples: int | None,
    steps: int | None,
    depth: int,
    seed: int | None,
    phases: tuple[str, ...],
    as_json: bool,
    rabbitmq_ebin: Path | None,
    expectations: Path | None = None,
    folder: Path = Path("counterexamples"),
    update: Path | None = None,
) -> None:
    """AD-AMQ-FIFO-CONFORM: exit 0 conformant, 1 a failing finding or an unexpected pass
    (every distinct finding listed with its rule, class and trace, AD-AMQ-FIFO-FINDINGS,
    written into ``folder`` before it is shown, AD-AMQ-FIFO-TRACE), 2 a bad expectations
    file (AD-AMQ-FIFO-EXPECTATIONS), 3 the adapter failed (no Erlang or beams: one line)."""
    # deferred: the AMQP model only for AMQP adapters (as in _conform_amqp)
    from creditflow.conformance.families.amqp.queue_conform import (
        QUEUE_PHASES,
        queue_run_lines,
        run_queue_conform,
    )

    # deferred: as above
    from creditflow.conformance.families.amqp.queue_expected import resolve_queue

    # deferred: as above
    from creditflow.conformance.families.amqp.queue_traces import (
        queue_trace_digest,
        trace_of_queue_run,
        write_queue_trace,
    )

    factory = amqp_adapter_factory("rabbit-fifo", timeout=timeout, rabbitmq_ebin=rabbitmq_ebin)
    try:
        known = load_expectations(expectations) if expectations else None
    except ExpectationsError as exc:
        fail(str(exc), exit_codes.USAGE)
    if seed is None:
        seed = random.randrange(2**32)
    click.echo(f"creditflow conform: seed {seed}", err=as_json)
    signals.note(seed=seed, out=folder)
    saver = Saver()

    def write(run: Any, finding: Any, phase: str) -> str | None:
        trace = trace_of_queue_run(run)
        assert run.index is not None
        description = (
            f"rabbit-fifo diverges at op {run.index + 1} ({run.ops[run.index]}), "
            f"{finding.rule.id} ({finding.klass}), found by {phase}, seed {seed}"
        )
        path = saver.attempt(
            write_queue_trace,
            trace,
            derived_path(folder, f"rabbit-fifo-{queue_trace_digest(trace)}", SUFFIX),
            description,
            f"creditflow conform --adapter rabbit-fifo --seed {seed}",
            {
                "adapter": "rabbit-fifo",
                "verdict": run.verdict,
                "op_index": run.index,
                "diverging": [d.field for d in run.diffs],
                "rule": finding.rule.id,
                "class": finding.klass,
                "signature": finding.signature,
            },
        )
        return None if path is None else str(path)

    try:
        result = run_queue_conform(
            factory,
            seed,
            depth,
            DEFAULT_AMQP_EXAMPLES if max_examples is None else max_examples,
            DEFAULT_QUEUE_STEPS if steps is None else steps,
            tuple(p for p in QUEUE_PHASES if p in phases) if phases else QUEUE_PHASES,
            write=write,
            resolve=None if known is None else (lambda a: resolve_queue(a, known, (folder,))),
        )
    except ExpectationsError as exc:  # AD-AMQ-FIFO-EXPECTATIONS: a listed trace unusable
        fail(str(exc), exit_codes.USAGE)
    how = _adapter_args(RABBIT_FIFO, None, rabbitmq_ebin, DEFAULT_TIMEOUT)
    if as_json:
        doc = result.to_json()
        if result.findings and result.findings[0].trace is not None:
            doc["trace"] = result.findings[0].trace
            doc["replay"] = f"creditflow replay {shlex.quote(result.findings[0].trace)} {how}"
        echo_json_with_update(doc, result, update, saver, write_expectations)
        saver.exit(result.exit_code)
    if result.failure is not None and not result.phases:
        fail(result.failure, exit_codes.ADAPTER_FAILURE)
    click.echo(f"creditflow conform: {printable(result.adapter)} {result.version}, seed {seed}")
    policy = ", ".join(f"{k} {_words(v)}" for k, v in result.policy.items())
    click.echo(f"  policy: {printable(policy)}")
    for name, why, sig in result.known:
        hits = result.expected_hits.get(name, 0)
        click.echo(
            printable(f"  EXPECTED  {name} ({sig}): met in {hits} run{'s' * (hits != 1)}; {why}")
        )
    for name in result.unexpected_passes:
        click.echo(
            printable(
                f"  XPASS     {name}: passes, but the expectations list it; remove it from "
                f"{expectations}"
            )
        )
    for p in result.phases:
        click.echo(f"  {p.name:15} {p.runs:6,} runs {p.ops:9,} ops {p.seconds:7.2f} s")
    if result.failure is not None:
        fail(result.failure, exit_codes.ADAPTER_FAILURE)
    ops = sum(p.ops for p in result.phases)
    if not result.findings:
        masked = " (known findings masked)" if result.known else ""
        click.echo(f"CONFORMANT: no divergence from the model's queue end in {ops:,} ops{masked}")
    else:
        n = len(result.findings)
        click.echo(f"DIVERGENCE found by {result.found_by}")
        click.echo(f"{n} distinct finding{'s' * (n != 1)} in {ops:,} ops")
    for f, run in zip(result.findings, result.runs, strict=True):
        click.echo(printable(f"FINDING {f.id} [{f.klass}] {f.rule.id}, found by {f.found_by}"))
        click.echo(printable(f"  rule: {f.rule.source}"))
        click.echo(printable(f"  signature: {f.signature}"))
        for line in queue_run_lines(run):
            click.echo(printable(line))
        if f.trace is not None:
            click.echo(f"  trace: {printable(f.trace)}")
            click.echo(f"  replay: creditflow replay {printable(shlex.quote(f.trace))} {how}")
    saver.show_unsaved()
    exit_after_update(result, update, saver, write_expectations)


def replay_queue(
    traces: tuple[Path, ...],
    timeout: float,
    rabbitmq_ebin: Path | None,
    expectations: Path | None,
    as_json: bool,
) -> None:
    """``replay TRACES --adapter rabbit-fifo`` (AD-AMQ-FIFO-REPLAY): exit 0 every trace
    passes or fails only in known ways, 1 a divergence or an unexpected pass, 2 a bad
    trace or expectations file, 3 the adapter failed, 4 nothing ran."""
    # deferred: the AMQP model only for AMQP adapters (as in _conform_amqp)
    from creditflow.conformance.families.amqp.queue_conform import queue_run_lines

    # deferred: as above
    from creditflow.conformance.families.amqp.queue_expected import replay_queue_traces

    # deferred: as above
    from creditflow.conformance.families.amqp.queue_traces import load_queue_trace

    try:
        known = load_expectations(expectations) if expectations else None
        files = trace_files(list(traces))
        if not files:
            raise TraceFormatError(f"no *{SUFFIX} traces in {', '.join(map(str, traces))}")
        loaded = [load_queue_trace(f) for f in files]
    except (TraceFormatError, ExpectationsError) as exc:
        fail(str(exc), exit_codes.USAGE)
    factory = amqp_adapter_factory("rabbit-fifo", timeout=timeout, rabbitmq_ebin=rabbitmq_ebin)
    report = replay_queue_traces(factory, loaded, known)
    if report.expectations_error is not None:
        fail(report.expectations_error, exit_codes.USAGE)
    saver = Saver()
    if as_json:
        click.echo(json.dumps(saver.annotate(report.to_json())))
        saver.exit(report.exit_code)
    if report.failure is not None and not report.outcomes:
        fail(report.failure, exit_codes.ADAPTER_FAILURE)
    click.echo(f"creditflow replay: {printable(report.adapter)} {report.version}")
    if report.expectations is not None:
        for name, why, sig in report.expectations.known:
            click.echo(printable(f"  EXPECTED  {name} ({sig}): {why}"))
        for name in report.expectations.unexpected_passes:
            click.echo(
                printable(
                    f"  XPASS     {name}: passes, but the expectations list it; remove it "
                    f"from {expectations}"
                )
            )
    for o in report.outcomes:
        path = printable(str(o.trace.path))
        if o.status == "PASS":
            click.echo(f"  PASS      {path} ({len(o.trace.trace.ops)} ops)")
        elif o.status == "XFAIL":
            click.echo(printable(f"  XFAIL     {o.trace.path}: {o.reason}"))
        elif o.status == "XPASS":
            click.echo(
                printable(
                    f"  XPASS     {o.trace.path}: passes, but the expectations list it "
                    f"({o.reason}); remove it from {expectations}"
                )
            )
        else:
            click.echo(f"  DIVERGED  {path}")
            click.echo(printable(f"    {o.run.rule.id} [{o.run.rule.klass}]: {o.run.signature}"))
            for line in queue_run_lines(o.run):
                click.echo("    " + printable(line))
    summary = ", ".join(f"{v} {k}" for k, v in report.counts.items() if v)
    click.echo(f"{len(report.outcomes)} traces: {summary}")
    if report.failure is not None:
        fail(f"could not restart the adapter: {report.failure}", exit_codes.ADAPTER_FAILURE)
    saver.exit(report.exit_code)


def _words(value: Any) -> str:
    """A declared policy value as words, never a Python repr (``credited/simple_prefetch``,
    ``formula x-unwrapped``, ``false``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "/".join(_words(v) for v in value)
    if isinstance(value, dict):
        return " ".join(f"{k} {_words(v)}" for k, v in value.items())
    return str(value)
