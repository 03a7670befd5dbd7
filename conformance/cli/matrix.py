"""``creditflow matrix`` (spec/matrix.md, MATRIX-*): one conform per release of an
adapter's library and the table of findings × releases, rendered as text, Markdown, HTML
or JSON (MATRIX-FORMATS); the docs' version matrices are its Markdown between markers
(MATRIX-DOCS)."""

from __future__ import annotations

import html
import json
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from creditflow.adapters import versions as shared_versions
from creditflow.adapters.amqp import versions as amqp_versions
from creditflow.adapters.registry import UnknownAdapter, amqp_adapter_factory, is_amqp_name
from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import POSITIVE, SEED, TimeoutParam, fail, file_option
from creditflow.conformance.differential.subprocess import DEFAULT_TIMEOUT
from creditflow.conformance.families.amqp.protocol import (
    AMQP_PHASES,
    DEFAULT_AMQP_EXAMPLES,
    DEFAULT_AMQP_STEPS,
    DEFAULT_DEPTH,
)
from creditflow.conformance.matrix.table import (
    ConformRelease,
    ReleaseResult,
    VersionMatrix,
    build_matrix,
)

FORMATS = ("text", "markdown", "html", "json")
#: MATRIX-DOCS: a generated block: the command line in the opening marker, then its
#: Markdown output, then the closing marker.
BLOCK = re.compile(
    r"(?P<open><!-- creditflow matrix (?P<args>[^\n]*?) -->\n)"
    r"(?P<body>.*?)(?P<close><!-- end matrix -->)",
    re.S,
)


@dataclass(frozen=True)
class MatrixSettings:
    """MATRIX-COMMAND: the conform options every release's run shares."""

    seed: int
    depth: int
    max_examples: int
    steps: int
    skip: tuple[str, ...]
    timeout: float

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "depth": self.depth,
            "max_examples": self.max_examples,
            "steps": self.steps,
            "skip_op": list(self.skip),
        }


@dataclass(frozen=True)
class MatrixFamily:
    """MATRIX-COMMAND: what the matrix needs of an adapter family: which adapter names are
    its own, its libraries with releases (pinned), the cached releases of one, the
    installer (raising ``InstallFailed``) and its ``conform_release`` hook,
    ``hook(library, unversioned, settings) → (version → ReleaseResult)``."""

    is_name: Callable[[str], bool]
    pinned: Mapping[str, str]
    cached: Callable[[str], tuple[str, ...]]
    install: Callable[[str, str], object]
    hook: Callable[[str, bool, MatrixSettings], ConformRelease]


def _amqp_hook(library: str, unversioned: bool, s: MatrixSettings) -> ConformRelease:
    """MATRIX-COMMAND: the AMQP family's ``conform_release``: ``version`` → one run."""
    # deferred: the AMQP engine only for an AMQP matrix (START-LAZY)
    from creditflow.conformance.families.amqp.conform import AmqpConformOptions

    # deferred: as above
    from creditflow.conformance.matrix.amqp import conform_amqp_release

    options = AmqpConformOptions(
        seed=s.seed,
        max_examples=s.max_examples,
        steps=s.steps,
        depth=s.depth,
        phases=AMQP_PHASES,
        skip=s.skip,
    )

    def run(version: str) -> ReleaseResult:
        name = library if unversioned else f"{library}@{version}"
        result = conform_amqp_release(amqp_adapter_factory(name, s.timeout), options, version)
        if unversioned:  # the one release the adapter is: named by its hello
            label = str(result.settings.get("reported_version", version))
            result = ReleaseResult(
                label,
                result.findings,
                result.exit_code,
                result.seconds,
                result.failure,
                result.settings,
            )
        return result

    return run


#: MATRIX-COMMAND: the families with a matrix hook, by family name (HTTP/2 plugs in here).
FAMILIES: dict[str, MatrixFamily] = {
    "amqp": MatrixFamily(
        is_amqp_name,
        amqp_versions.PINNED,
        amqp_versions.cached_releases,
        amqp_versions.install,
        _amqp_hook,
    ),
}


def family_of(library: str) -> MatrixFamily:
    """The family whose adapter ``library`` is; a usage error (exit 2) if none has a hook."""
    for fam in FAMILIES.values():
        if fam.is_name(library):
            return fam
    raise click.UsageError(
        f"--adapter {library}: no matrix hook for its family (families: {', '.join(FAMILIES)})"
    )


def parse_versions(adapter: str, versions: str | None) -> tuple[str, tuple[str, ...], bool]:
    """MATRIX-VERSIONS: (library, releases, unversioned). ``all`` is the releases in
    the per-version cache; an adapter without releases (amqp10-client) takes none.
    A bad adapter or release name is a usage error (exit 2)."""
    library, at = shared_versions.split_name(adapter)
    if at is not None:
        raise click.UsageError(
            f"--adapter {adapter}: give the library alone, releases in --versions"
        )
    fam = family_of(library)
    if library not in fam.pinned:
        if versions not in (None, ""):
            raise click.UsageError(f"--versions: {adapter} has no releases to choose")
        return library, ("default",), True
    if versions is None:
        raise click.UsageError("--versions: give V1,V2,… or all")
    chosen = (
        fam.cached(library) if versions == "all" else tuple(v.strip() for v in versions.split(","))
    )
    if not chosen:
        raise click.UsageError(f"--versions all: no release of {library} in the cache")
    for v in chosen:
        if not shared_versions.RELEASE_NAME.match(v):
            raise click.UsageError(f"--versions: {v!r} is not a release name")
    if len(set(chosen)) != len(chosen):
        raise click.UsageError(f"--versions: a release is given twice ({versions})")
    return library, chosen, False


def run_matrix(adapter: str, versions: str | None, settings: MatrixSettings) -> VersionMatrix:
    """MATRIX-COMMAND: install every release first (exit 3 naming the release and the
    cause), then one conform each, then the table."""
    library, releases, unversioned = parse_versions(adapter, versions)
    fam = family_of(library)
    if not unversioned:
        for v in releases:
            try:
                fam.install(library, v)
            except shared_versions.InstallFailed as exc:
                fail(f"release {library}@{v}: {exc}", exit_codes.ADAPTER_FAILURE)
    try:
        hook = fam.hook(library, unversioned, settings)
        results = [hook(v) for v in releases]
    except UnknownAdapter as exc:
        raise click.UsageError(str(exc)) from None
    return build_matrix(library, results, settings.to_json())


def _cell(m: VersionMatrix, release: str, present: dict[str, bool]) -> str:
    if not m.runs[release].ran:
        return "not run"
    return "yes" if present.get(release) else "—"


def _exit_cell(m: VersionMatrix, release: str) -> str:
    r = m.runs[release]
    return f"exit {r.exit_code}" + ("" if r.ran else f" (not run: {r.failure})")


def command_line(m: VersionMatrix) -> str:
    """MATRIX-DOCS: the command that reproduces ``m`` (the docs' opening marker)."""
    s = m.settings
    parts = [f"--adapter {m.adapter}"]
    if any(m.adapter in fam.pinned for fam in FAMILIES.values()):
        parts.append(f"--versions {','.join(m.releases)}")
    parts.append(f"--seed {s['seed']} --depth {s['depth']} --max-examples {s['max_examples']}")
    parts += [f"--skip-op {o}" for o in s["skip_op"]]
    return " ".join(parts)


def render_markdown(m: VersionMatrix) -> str:
    """MATRIX-FORMATS: the Markdown table (no timings: the docs' blocks are compared
    with a fresh run, MATRIX-DOCS)."""
    head = ["finding (signature)", "class", "witness", *m.releases, "introduced", "fixed"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in m.rows:
        cells = [f"`{row.signature}`", row.klass, f"`{row.description}`"]
        cells += [_cell(m, v, row.present) for v in m.releases]
        cells += [row.introduced or "—", row.fixed or "—"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines.append("| conform | | | " + " | ".join(_exit_cell(m, v) for v in m.releases) + " | | |")
    return "\n".join(lines) + "\n"


def render_text(m: VersionMatrix) -> str:
    """MATRIX-FORMATS: a plain table with each release's exit code and seconds."""
    out = [f"creditflow matrix {command_line(m)}"]
    for v in m.releases:
        r = m.runs[v]
        out.append(f"  {v}: {_exit_cell(m, v)}, {len(r.findings)} finding(s), {r.seconds:.1f} s")
    width = max((len(row.signature) for row in m.rows), default=7)
    cols = [max(len(v), 7) for v in m.releases]
    out.append(
        f"{'finding':{width}}  "
        + "  ".join(f"{v:{w}}" for v, w in zip(m.releases, cols, strict=True))
        + "  introduced / fixed"
    )
    for row in m.rows:
        cells = "  ".join(
            f"{_cell(m, v, row.present):{w}}" for v, w in zip(m.releases, cols, strict=True)
        )
        out.append(
            f"{row.signature:{width}}  {cells}  {row.introduced or '—'} / {row.fixed or '—'}"
        )
    if not m.rows:
        out.append("no findings in any release")
    return "\n".join(out) + "\n"


def render_html(m: VersionMatrix) -> str:
    """MATRIX-FORMATS: one HTML table (escaped), no timings."""
    e = html.escape
    head = ["finding (signature)", "class", "witness", *m.releases, "introduced", "fixed"]
    rows = ["<tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr>"]
    for row in m.rows:
        cells = [row.signature, row.klass, row.description]
        cells += [_cell(m, v, row.present) for v in m.releases]
        cells += [row.introduced or "—", row.fixed or "—"]
        rows.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>")
    rows.append(
        "<tr><td>conform</td><td></td><td></td>"
        + "".join(f"<td>{e(_exit_cell(m, v))}</td>" for v in m.releases)
        + "<td></td><td></td></tr>"
    )
    title = e(f"creditflow matrix {command_line(m)}")
    return f'<table class="creditflow-matrix" title="{title}">\n' + "\n".join(rows) + "\n</table>\n"


RENDER: dict[str, Callable[[VersionMatrix], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "html": render_html,
    "json": lambda m: json.dumps(m.to_json(), indent=2) + "\n",
}


def doc_blocks(text: str) -> list[tuple[str, str]]:
    """MATRIX-DOCS: the generated blocks of a page: (the command's arguments, body)."""
    return [(b["args"], b["body"]) for b in BLOCK.finditer(text)]


def replace_blocks(text: str, produce: Callable[[str], str]) -> str:
    """MATRIX-DOCS: the page with every block's body replaced by ``produce(args)``."""
    return BLOCK.sub(lambda b: b["open"] + produce(b["args"]) + b["close"], text)


def block_args(args: str) -> Sequence[str]:
    """A block's arguments as the command's argv (``--format markdown`` added)."""
    return [*shlex.split(args), "--format", "markdown"]


@click.command()
@click.option(
    "--adapter",
    "adapter",
    required=True,
    metavar="NAME",
    help="An AMQP library: rhea, proton, azure-pyamqp (releases in --versions), or "
    "amqp10-client (its one release).",
)
@click.option(
    "--versions",
    metavar="V1,V2,…|all",
    help="The releases, comma-separated, or all: those in the per-version cache.",
)
@click.option(
    "--seed",
    type=SEED,
    default=1,
    show_default=True,
    help="Seed of every release's run (the same for all).",
)
@click.option(
    "--depth",
    type=POSITIVE,
    default=DEFAULT_DEPTH,
    show_default=True,
    help="The explorer's longest op sequence (AD-AMQ-CONFORM-EXPLORE).",
)
@click.option(
    "--max-examples",
    type=POSITIVE,
    default=DEFAULT_AMQP_EXAMPLES,
    show_default=True,
    help="Hypothesis examples per release.",
)
@click.option(
    "--steps",
    type=POSITIVE,
    default=DEFAULT_AMQP_STEPS,
    show_default=True,
    help="Most ops per Hypothesis example.",
)
@click.option(
    "--skip-op",
    "skip_ops",
    multiple=True,
    type=click.Choice(("transfer", "flow", "drain", "drained", "settle")),
    help="Runs draw no such op (repeatable).",
)
@click.option(
    "--timeout",
    type=TimeoutParam(),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds within which each adapter response must arrive.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="How to print the matrix.",
)
@file_option("--out", "Write the matrix to this file instead of stdout.")
def matrix(
    adapter: str,
    versions: str | None,
    seed: int,
    depth: int,
    max_examples: int,
    steps: int,
    skip_ops: tuple[str, ...],
    timeout: float,
    fmt: str,
    out: Path | None,
) -> None:
    """Run conform on each release of an adapter's library and print the table of
    findings × releases: which release introduced or fixed each finding (MATRIX-*).

    Exit 0 when every release ran (findings are data), 2 for a bad adapter or release
    name, 3 when a release cannot be installed, 4 when some release did not run.

    \b
    Examples:
      creditflow matrix --adapter rhea --versions 2.0.8,3.0.4,3.0.5 --depth 3
      creditflow matrix --adapter proton --versions all --format markdown --out m.md
    """
    settings = MatrixSettings(seed, depth, max_examples, steps, skip_ops, timeout)
    m = run_matrix(adapter, versions, settings)
    text = RENDER[fmt](m)
    if out is None:
        click.echo(text, nl=False)
    else:
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            fail(f"{out}: cannot write: {exc.strerror or exc}", exit_codes.OUTPUT_FAILED)
    raise SystemExit(m.exit_code)
