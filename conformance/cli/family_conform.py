"""``conform`` and ``replay`` for a family whose alphabet supplies its own entry points
(FAM-ALPHABET ``conform``/``replay``; the HTTP/2 family, AD-H2-CONFORM-CLI): the adapter
chosen by name or ``--adapter-cmd``, the family's typed result rendered here."""

from __future__ import annotations

import json
import random
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from creditflow.adapters.registry import UnknownAdapter, http2_adapter_factory
from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import (
    Saver,
    echo_json_with_update,
    exit_after_update,
    fail,
)
from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.family import registry


def _factory(
    family: str, alphabet: Any, name: str | None, adapter_cmd: str | None, timeout: float
) -> tuple[str, Callable[[], Any]]:
    """The adapter: ``--adapter-cmd`` through the family's alphabet (AD-CMD), else the
    built-in adapter by name (AD-H2-VERSION)."""
    if adapter_cmd is not None:
        argv = shlex.split(adapter_cmd)
        return argv[0].rsplit("/", 1)[-1], lambda: alphabet.open_command(argv, timeout)
    assert name is not None
    if family != "http2":
        raise click.UsageError(f"the {family} family has no built-in adapters here")
    try:
        return name, http2_adapter_factory(name, timeout=timeout)
    except UnknownAdapter as exc:
        raise click.UsageError(str(exc)) from None


def _expected(alphabet: Any, path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    # deferred: START-LAZY, the family's expectations reader only with --expectations
    from creditflow.conformance.families.http2.expected import H2ExpectationsError, load_expected

    try:
        return load_expected(path)
    except H2ExpectationsError as exc:
        fail(str(exc), exit_codes.USAGE)


def conform_family(
    family: str,
    name: str | None,
    adapter_cmd: str | None,
    timeout: float,
    max_examples: int | None,
    steps: int | None,
    depth: int | None,
    seed: int | None,
    phases: tuple[str, ...],
    out: Path,
    expectations: Path | None,
    as_json: bool,
    update: Path | None = None,
) -> None:
    """AD-H2-CONFORM-CLI: ``conform`` through the family record's alphabet; with
    ``update``, FIND-UPDATE: the file written from the run's findings after the verdict."""
    # deferred: START-LAZY, the family's conform engine only for its runs
    from creditflow.conformance.families.http2.conform import H2ConformOptions

    part = registry.get(family).alphabet
    assert part is not None, f"{family}: no alphabet (FAM-ALPHABET)"
    alphabet = part.load()
    bad = [p for p in phases if p not in alphabet.phases]
    if bad:
        raise click.UsageError(
            f"--phase {', '.join(bad)}: the {family} family's phases are "
            f"{', '.join(alphabet.phases)}"
        )
    label, factory = _factory(family, alphabet, name, adapter_cmd, timeout)
    if seed is None:
        seed = random.randrange(2**32)
    click.echo(f"creditflow conform: seed {seed}", err=as_json)
    options = H2ConformOptions(
        seed=seed,
        max_examples=alphabet.default_examples if max_examples is None else max_examples,
        steps=alphabet.default_steps if steps is None else steps,
        depth=1 if depth is None else depth,
        phases=tuple(p for p in alphabet.phases if p in phases)
        if phases
        else tuple(alphabet.phases),
        out_dir=out,
        expected=_expected(alphabet, expectations),
    )
    try:
        result = alphabet.conform(factory, label, options)
    except AdapterFailure as exc:
        fail(str(exc), exit_codes.ADAPTER_FAILURE)
    saver = Saver()
    if as_json:
        doc = result.to_json()
        echo_json_with_update(doc, result, update, saver, _write_expected)
        saver.exit(result.exit_code)
    click.echo(f"creditflow conform: {result.adapter} ({result.implementation}), family {family}")
    click.echo(
        f"  {result.runs} runs, {result.ops} ops in {result.seconds:.1f} s; "
        f"{len(result.findings)} finding(s), {len(result.expected)} expected"
    )
    for f in (*result.findings, *result.expected):
        tag = "EXPECTED" if f in result.expected else f.klass.upper()
        click.echo(f"  {tag:8}  {f.signature}")
        click.echo(f"            {f.detail[0]}" if f.detail else "")
        click.echo(f"            witness: {' ; '.join(f.witness)} ({f.found_by})")
        click.echo(f"            trace:   {f.trace}")
    verdict = "diverged" if result.exit_code else "conforms"
    click.echo(f"{result.adapter}: {verdict} (exit {result.exit_code})")
    exit_after_update(result, update, saver, _write_expected)


def _write_expected(
    result: Any, path: Path, saver: Saver, echo: bool = False
) -> dict[str, Any] | None:
    """FIND-UPDATE for HTTP/2 (AD-H2-CONFORM-EXPECTATIONS' format): every finding of the
    run, the expected ones too, by signature; a write failure is the saver's (OUT-EXIT)."""
    # deferred: the writer only when asked
    from creditflow.conformance.outputs.expectations import finding_reason, update_http2_expected

    entries = [(f.signature, finding_reason(f, result.seed)) for f in result.findings]
    entries += [(f.signature, finding_reason(f, result.seed)) for f in result.expected]
    done = saver.attempt(update_http2_expected, path, result.adapter, entries)
    if done is None:
        return None
    if echo:
        click.echo(done.line())
    return {"path": str(done.path), "entries": done.entries, "added": list(done.added)}


def replay_family(
    family: str,
    traces: tuple[Path, ...],
    name: str | None,
    adapter_cmd: str | None,
    timeout: float,
    expectations: Path | None,
    as_json: bool,
) -> None:
    """AD-H2-CONFORM-REPLAY: ``replay`` of the family's run traces."""
    # deferred: START-LAZY, as conform_family
    from creditflow.conformance.families.http2.traces import H2TraceError, load_run_trace

    part = registry.get(family).alphabet
    assert part is not None, f"{family}: no alphabet (FAM-ALPHABET)"
    alphabet = part.load()
    files: list[Path] = []
    for t in traces:
        files += sorted(t.glob("*.itf.json")) if t.is_dir() else [t]
    if not files:
        fail(f"no *.itf.json traces in {', '.join(map(str, traces))}", exit_codes.USAGE)
    try:
        loaded = [load_run_trace(f) for f in files]
    except H2TraceError as exc:
        fail(str(exc), exit_codes.USAGE)
    label, factory = _factory(family, alphabet, name, adapter_cmd, timeout)
    try:
        report = alphabet.replay(factory, label, loaded, _expected(alphabet, expectations))
    except AdapterFailure as exc:
        fail(str(exc), exit_codes.ADAPTER_FAILURE)
    if as_json:
        click.echo(json.dumps(report.to_json()))
        raise SystemExit(report.exit_code)
    click.echo(f"creditflow replay: {report.adapter} ({report.implementation})")
    for o in report.outcomes:
        detail = f": {o.signature}: {o.detail}" if o.signature else ""
        click.echo(
            f"  {o.status:9} {o.path}" + (f": {o.detail}" if o.status == "NOT RUN" else detail)
        )
    click.echo(f"{len(report.outcomes)} traces")
    raise SystemExit(report.exit_code)
