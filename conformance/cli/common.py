"""Pieces every ``creditflow`` command module shares: the error line, the credit-spec
and timeout parameter types, the credit options of a config file (IN-CONFIG), the
console, and the collection of write failures (OUT-FAILURE) that are reported after
the verdict."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PosixPath
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from creditflow.conformance import exit_codes
from creditflow.conformance.family.interface import Family
from creditflow.conformance.inputs import bounds
from creditflow.conformance.inputs.reading import InputError
from creditflow.conformance.outputs import OutputError, derived_path, streams
from creditflow.conformance.outputs.writer import WRITTEN
from creditflow.conformance.runtime import signals
from creditflow.model.credit.spec import CreditSpec, parse_credit

if TYPE_CHECKING:
    from creditflow.conformance.inputs.credit_sources import CreditsInEffect
    from creditflow.model.network.graph import FlowGraph

T = TypeVar("T")
#: AD-TRANSPORT-DEADLINE: the largest --timeout accepted (a day).
MAX_TIMEOUT = bounds.SECONDS.high
#: OUT-NAME: where outputs named after an input go unless the user names a path.
DEFAULT_FOLDER = Path("counterexamples")


def fail(message: str, code: int = exit_codes.USAGE) -> NoReturn:
    """One line on stderr, ``creditflow: error: …``, and exit with ``code``; the names
    from inputs in ``message`` are escaped by the one output mechanism (OUT-TEXT)."""
    click.echo(f"creditflow: error: {streams.printable(message)}", err=True)
    sys.exit(code)


def supply_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """SCOPE-SUPPLY: ``--publishes N`` and ``--graph-supply`` bound the question of
    ``check`` and ``prove``; without them it is every supply."""
    command = click.option(
        "--graph-supply",
        is_flag=True,
        help="Ask for the supplies written in the graph only (default: every supply).",
    )(command)
    return click.option(
        "--publishes",
        type=COUNT,
        help="Ask for this supply per source only (default: every supply, SCOPE-SUPPLY).",
    )(command)


#: a folder named on the command line (written in, created when missing)
FOLDER = click.Path(file_okay=False, path_type=Path)
#: a file named on the command line (never a folder)
FILE = click.Path(dir_okay=False, path_type=Path)


def folder_option(
    flag: str, help: str, default: Path | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An option naming a :data:`FOLDER` (``--out``, ``--corpus``, ``--workdir``): its
    ``default``, when it has one, shown in ``--help``."""
    if default is None:
        return click.option(flag, type=FOLDER, help=help)
    return click.option(flag, type=FOLDER, default=default, show_default=True, help=help)


def file_option(flag: str, help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An option naming a :data:`FILE` (``--expectations``, ``--config``)."""
    return click.option(flag, type=FILE, help=help)


class CreditParam(click.ParamType):
    """A credit spec written ``I,M`` (CF-SPEC)."""

    name = "I,M"

    def convert(self, value: Any, param: Any, ctx: Any) -> CreditSpec:
        if isinstance(value, CreditSpec):
            return value
        try:
            return parse_credit(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def console() -> Any:
    """A rich console on stdout; wide when stdout is not a terminal (logs, CI)."""
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else 160)


class BoundedParam(click.ParamType):
    """IN-BOUNDS: a number checked against one entry of the input layer's bounds table
    (the same bounds as in files and the pytest plugin); anything else is a usage
    error, exit 2."""

    def __init__(self, bound: bounds.Bound) -> None:
        self.bound = bound
        self.name = "INTEGER" if bound.integer else "SECONDS" if bound.unit else "NUMBER"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            return bounds.check_number(value, self.bound, "value")
        except InputError as exc:
            self.fail(exc.problem, param, ctx)


class TimeoutParam(BoundedParam):
    """AD-TRANSPORT-DEADLINE, IN-BOUNDS: seconds, finite, from 0.01 to a day (``inf``,
    ``nan``, ``1e308`` and negative values are usage errors, exit 2)."""

    def __init__(self) -> None:
        super().__init__(bounds.SECONDS)


#: IN-BOUNDS: the option types of counts, positive counts and seeds
COUNT = BoundedParam(bounds.COUNT)
POSITIVE = BoundedParam(bounds.POSITIVE)
SEED = BoundedParam(bounds.SEED)


class Saver:
    """The write failures of one command (OUT-FAILURE): each write is attempted, a
    failure is remembered, and :meth:`exit` reports them in one line *after* the verdict
    was printed, with the exit code of OUT-EXIT."""

    def __init__(self) -> None:
        self.errors: list[OutputError] = []

    def attempt(self, write: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
        """``write(*args, **kwargs)``'s result, or ``None`` if it raised
        :class:`OutputError`."""
        try:
            return write(*args, **kwargs)
        except OutputError as exc:
            self.errors.append(exc)
            return None

    def annotate(self, report: dict[str, Any]) -> dict[str, Any]:
        """Add the failures (and any unsaved trace) to a ``--json`` report: the two optional
        keys every schema of spec/schemas/ allows (OUT-JSON-SCHEMA)."""
        if self.errors:
            report["write_errors"] = [str(e) for e in self.errors]
            unsaved = {str(e.path): _document(e.payload) for e in self.errors if _is_trace(e)}
            if unsaved:
                report["unsaved_traces"] = unsaved
        return report

    def show_unsaved(self) -> None:
        """OUT-FAILURE: say loudly on stdout that a trace was not written, and print it."""
        for e in self.errors:
            if _is_trace(e):
                click.echo(f"TRACE NOT WRITTEN ({e}); here it is:")
                assert e.payload is not None
                click.echo(e.payload.decode("utf-8", "replace").rstrip("\n"))

    def exit(self, verdict: int) -> NoReturn:
        """Exit with ``verdict``, or report the write failures in one line (OUT-EXIT)."""
        if not self.errors:
            sys.exit(verdict)
        more = f" (and {len(self.errors) - 1} more files)" if len(self.errors) > 1 else ""
        fail(f"{self.errors[0]}{more}", exit_codes.with_write_failure(verdict))


def _is_trace(error: OutputError) -> bool:
    """OUT-FAILURE: a trace (JSON) that was not written, whatever the path the user gave
    (``--trace-out DIR`` names a folder, not a ``.json`` file); pictures are not JSON."""
    if error.payload is None:
        return False
    return error.path.name.endswith(".json") or error.payload.lstrip()[:1] == b"{"


def _document(payload: bytes | None) -> Any:
    try:
        return json.loads(payload or b"")
    except ValueError:
        return (payload or b"").decode("utf-8", "replace")


class FolderPath(PosixPath):
    """OUT-TARGET: a path the user wrote with a trailing separator (``out/``): a folder,
    whether or not it exists yet (a :class:`~pathlib.Path` forgets the separator). A
    POSIX path: creditflow runs on Debian."""


class OutputTarget(click.ParamType):
    """OUT-TARGET, OUT-FAILURE: the type of ``--trace-out`` and ``--dot-out``. ``DIR/``
    (a trailing separator) is a folder, created when missing; so is a path that names
    an existing folder; any other path is the file itself. Nothing else is checked when
    the command line is parsed: a missing or read-only folder, a name too long are
    refused by the one writer when the file is written, after the verdict, which is
    printed first with its own exit code (OUT-EXIT)."""

    name = "path"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        if isinstance(value, Path):
            return value
        text = str(value)
        separators = {"/", *(sep for sep in (os.sep, os.altsep) if sep)}
        if len(text) > 1 and text[-1] in separators:
            return FolderPath(text)
        return Path(text)


OUTPUT_FILE = OutputTarget()


def is_folder_target(path: Path) -> bool:
    """OUT-TARGET: ``path`` (given by the user) names a folder to write inside: written
    with a trailing separator, or an existing folder."""
    if isinstance(path, FolderPath):
        return True
    try:
        return path.is_dir()
    except (OSError, ValueError):  # a name too long, a NUL: the writer says so (OUT-FAILURE)
        return False


def output_path(explicit: Path | None, folder: Path, name: str, suffix: str) -> Path:
    """OUT-NAME, OUT-TARGET: the user's explicit file path as given; a folder the user
    gave (``DIR/`` or an existing folder) holds the output under its default name; else
    a safe file named after the input's ``name`` inside ``folder``."""
    if explicit is None:
        return derived_path(folder, name, suffix)
    if is_folder_target(explicit):
        return derived_path(Path(explicit), name, suffix)
    return explicit


def picture_path(explicit: Path | None, trace: Path) -> Path:
    """OUT-TARGET: where ``--dot-out`` puts the picture of the trace written at
    ``trace``: beside it by default (``NAME.dot``), inside a folder the user gave under
    that name, else the user's file path as given."""
    beside = trace.with_name(trace.name.removesuffix(".itf.json").removesuffix(".json") + ".dot")
    if explicit is None:
        return beside
    if is_folder_target(explicit):
        return Path(explicit) / beside.name
    return explicit


def printable_line(text: str) -> str:
    """``text`` as one printable line (OUT-TEXT: line breaks, control characters and
    lone surrogates escaped)."""
    return streams.printable(text)


#: OUT-WRAP: the step number (``  40``, ``   3.``, ``2–28,673.``) a continuation line is
#: indented past, so that it sits under the step's text
_STEP_PREFIX = re.compile(r"\s*(?:\d[\d,–-]*\.?\s+)?")
#: OUT-WRAP: the narrowest text column a wrapped line keeps right of its indent
MIN_WRAP = 24


def terminal_width() -> int | None:
    """OUT-WRAP: the width step lines are wrapped to: the terminal's when stdout is a
    terminal; ``None`` (every line left whole) for a pipe, a file or a CI log."""
    try:
        if not sys.stdout.isatty():
            return None
    except (AttributeError, ValueError, OSError):
        return None
    return shutil.get_terminal_size().columns


def step_line(text: str, width: int | None) -> list[str]:
    """OUT-TEXT, OUT-WRAP: one step line of a witness, printable; wrapped at word
    boundaries to ``width`` with the continuation lines indented under the step's text
    (past its number), or left whole when ``width`` is ``None``."""
    line = streams.printable(text)
    if width is None or len(line) <= width:
        return [line]
    match = _STEP_PREFIX.match(line)
    indent = max(match.end() if match else 0, 2)
    if width - indent < MIN_WRAP:
        indent = 2
    head, body = line[:indent], line[indent:]
    parts = textwrap.wrap(
        body,
        max(width - indent, MIN_WRAP),
        break_on_hyphens=False,
        drop_whitespace=True,
    ) or [body]
    return [head + parts[0], *(" " * indent + part for part in parts[1:])]


def echo_step_lines(lines: Iterable[str]) -> None:
    """OUT-WRAP: the one place the steps of a witness are printed (``check``, ``prove``,
    ``show``, every family): each line printable, wrapped to the terminal when stdout
    is one, else whole (one line per step, for grep)."""
    width = terminal_width()
    for line in lines:
        for part in step_line(line, width):
            click.echo(part)


def shown(name: object) -> str:
    """OUT-TEXT: a name from an input or an adapter as one printable line, safe inside
    rich markup (``[`` escaped) too."""
    from rich.markup import escape

    return escape(streams.printable(name))


def names(items: Any) -> str:
    """OUT-TEXT: names joined for a report line, each :func:`shown`."""
    return ", ".join(shown(item) for item in items)


class PolicyGroup(click.Group):
    """The root command group: every command runs under the one signal policy
    (SIG-POLICY), and a usage error is one line, exit 2. Click would turn Ctrl-C into
    "Aborted!" and exit 1 (the code of a divergence); here an interrupt stops every
    child process group, prints one line with the seed and what was saved, and exits
    130 (SIGINT) or 143 (SIGTERM). The program's standard streams are guarded
    (OUT-STREAM): a full, broken or closed stdout or stderr never ends a command, and
    the verdict's exit code survives it."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if not signals.is_program():
            return super().main(*args, **kwargs)
        streams.guard()
        try:
            result = super().main(*args, **kwargs)
        except SystemExit as exc:
            raise SystemExit(streams.exit_code(exc.code)) from None
        code = streams.exit_code(exit_codes.OK)
        if code != exit_codes.OK:
            raise SystemExit(code)
        return result

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["creditflow.argv"] = list(args)  # IN-MEMORY names them
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:

        del WRITTEN[:]
        with signals.policy():
            try:
                return super().invoke(ctx)
            except click.UsageError as exc:  # bad usage: one line, exit 2, like bad input
                where = exc.ctx.command_path if exc.ctx is not None else "creditflow"
                fail(printable_line(f"{where}: {exc.format_message()}"), exit_codes.USAGE)
            except MemoryError:
                fail(printable_line(_out_of_memory(ctx)), exit_codes.USAGE)
            except BaseException as exc:
                # An interrupt may surface as another exception (a library's own error
                # while it unwinds) or be followed by an exit: the signal decides.
                if not isinstance(exc, KeyboardInterrupt) and signals.received() is None:
                    raise
                signals.handled()
                if isinstance(exc, SystemExit) and exc.code in (
                    exit_codes.INTERRUPTED,
                    exit_codes.INTERRUPTED_SIGTERM,
                ):
                    raise  # the command reported the interrupt itself (sweep)
                _report_interrupt(exc if isinstance(exc, KeyboardInterrupt) else None)


def _out_of_memory(ctx: click.Context) -> str:
    """IN-MEMORY: the one line for a command that ran out of memory, naming its files."""
    words = [str(w) for w in ctx.meta.get("creditflow.argv", [])]
    files = [w for w in words if not w.startswith("-") and Path(w).is_file()]
    given = f" on {', '.join(files[:3])}" if files else ""
    command = [w for w in words[:2] if not w.startswith("-") and w not in files]
    return (
        f"{' '.join(['creditflow', *command])}: out of memory{given} (the input is "
        "too large for the memory this process may use; IN-MEMORY)"
    )


def _report_interrupt(exc: BaseException | None) -> NoReturn:
    """SIG-POLICY: stop the children, say what was saved, exit 130 / 143."""

    signals.kill_ours()
    facts = signals.notes()
    parts = [f"creditflow: interrupted by {signals.signal_name(exc)}"]
    if "seed" in facts:
        parts.append(f"seed {facts['seed']} (rerun with --seed {facts['seed']})")
    if WRITTEN:
        parts.append("saved: " + ", ".join(str(p) for p in WRITTEN[-5:]))
    elif "out" in facts:
        parts.append(f"output folder: {facts['out']}")
    else:
        parts.append("nothing was saved")
    click.echo("; ".join(parts), err=True)
    signals.leave(signals.exit_code(exc))


class _OverrideParam(click.ParamType):
    """IN-CREDIT-OVERRIDES: one credit override of the command line, parsed by the
    config reader (:meth:`parse`); a bad one is a usage error."""

    def parse(self, text: str) -> Any:
        """The override ``text`` names (a :class:`ValueError` when it is malformed)."""
        raise NotImplementedError

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, tuple):
            return value
        try:
            return self.parse(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class EdgeCreditParam(_OverrideParam):
    """IN-CREDIT-OVERRIDES: ``SENDER->RECEIVER=I,M``."""

    name = "S->R=I,M"

    def parse(self, text: str) -> tuple[str, str, CreditSpec]:
        # deferred: START-LAZY, the config reader loads the graph model (networkx)
        from creditflow.conformance.inputs.rabbitmq_config import parse_edge_credit

        return parse_edge_credit(text)


class RoleCreditParam(_OverrideParam):
    """IN-CREDIT-OVERRIDES: ``ROLE=I,M``."""

    name = "ROLE=I,M"

    def parse(self, text: str) -> tuple[str, CreditSpec]:
        # deferred: START-LAZY, the config reader loads the graph model (networkx)
        from creditflow.conformance.inputs.rabbitmq_config import parse_role_credit

        return parse_role_credit(text)


def credit_settings_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--config``, ``--edge-credit`` and ``--role-credit`` (IN-CONFIG,
    IN-CREDIT-OVERRIDES) on ``check``, ``prove`` and ``synth``; the command passes them
    to :func:`credits_in_effect` as :class:`CreditOptions`."""
    command = click.option(
        "--role-credit",
        "role_credit",
        type=RoleCreditParam(),
        multiple=True,
        help="Set the credit of every edge into a process with this role, after --config "
        "(msg_store matches rabbit_msg_store), e.g. msg_store=4000,0. Repeatable.",
    )(command)
    command = click.option(
        "--edge-credit",
        "edge_credit",
        type=EdgeCreditParam(),
        multiple=True,
        help="Set one edge's credit, after --config and --role-credit, e.g. "
        "'reader->channel=100,200'. Repeatable.",
    )(command)
    return click.option(
        "--config",
        "config",
        type=click.Path(dir_okay=False, path_type=Path),
        help="RabbitMQ config file (advanced.config, or rabbitmq.conf) whose "
        "credit_flow_default_credit / msg_store_credit_disc_bound set the edges' credits "
        "by role (RabbitMQ 3.10.8's defaults where unset). Excludes --credit.",
    )(command)


@dataclass(frozen=True)
class CreditOptions:
    """IN-CONFIG, IN-CREDIT-OVERRIDES: the credit options of one command line:
    ``--credit``, ``--config``, ``--edge-credit`` and ``--role-credit``."""

    credit: CreditSpec | None
    config: Path | None
    edge_credit: tuple[tuple[str, str, CreditSpec], ...]
    role_credit: tuple[tuple[str, CreditSpec], ...]


def credits_in_effect(
    graph: FlowGraph, options: CreditOptions
) -> tuple[FlowGraph, CreditSpec | None, CreditsInEffect]:
    """IN-CREDIT-OVERRIDES: ``graph`` with the credits of ``--config``, then
    ``--role-credit``, then ``--edge-credit``; with ``--credit`` (which excludes
    ``--config``) first when overrides follow it. Returns the graph, the ``--credit``
    still to apply (``None`` once applied here) and every edge's credit with where it
    came from (IN-CREDIT-SOURCES). A bad file or override: one line, exit 2."""
    # deferred: START-LAZY, the config reader loads the graph model (networkx)
    from creditflow.conformance.inputs.rabbitmq_config import (
        CreditOverrides,
        credits_with_sources,
        load_credit_config,
    )
    from creditflow.model.network.graph import GraphError  # deferred: START-LAZY, networkx

    credit, config = options.credit, options.config
    if config is not None and credit is not None:
        fail("--config and --credit exclude each other (--credit sets every edge)")
    overrides = CreditOverrides(roles=tuple(options.role_credit), edges=tuple(options.edge_credit))
    try:
        settings = load_credit_config(config) if config is not None else None
        configured, sources = credits_with_sources(graph, settings, overrides, credit)
    except (InputError, GraphError) as exc:
        fail(str(exc))
    if config is None and not overrides:
        return graph, credit, sources  # --credit is applied by the engine itself
    return configured, None, sources


def credits_text(credits: CreditsInEffect | None) -> list[str]:
    """IN-CREDIT-SOURCES, OUT-TEXT: the credits in effect, one line per credit and
    origin (its edges named, at most 4), when any came from the command line or a
    config file; nothing when every credit is the graph file's own."""
    if credits is None or credits.only_graph:
        return []
    groups: dict[tuple[str, str], list[str]] = {}
    for edge in credits.edges:
        key = (f"{{{edge.initial},{edge.more_after}}}", f"{edge.origin}: {edge.detail}")
        groups.setdefault(key, []).append(f"{edge.sender}->{edge.receiver}")
    lines = ["credits in effect:"]
    for (spec, origin), edges in groups.items():
        named = ", ".join(shown(e) for e in edges[:4])
        more = f" and {len(edges) - 4} more" if len(edges) > 4 else ""
        count = f"{len(edges)} edge{'s' if len(edges) != 1 else ''}"
        lines.append(f"  {spec} on {count} ({named}{more}) from {shown(origin)}")
    return lines


def read_graph_with_credits(
    graph_arg: str, options: CreditOptions
) -> tuple[FlowGraph, CreditSpec | None, CreditsInEffect, tuple[str, ...]]:
    """The graph ``graph_arg`` names, read once for ``check`` and ``prove``: its
    NET-FAULT-NOOP warnings said on stderr at read time (and returned for ``--json``),
    then :func:`credits_in_effect`. A bad graph raises the input layer's error."""
    # deferred: START-LAZY, the graph reader loads networkx
    from creditflow.conformance.inputs.graphs import input_warnings, load_graph

    read = load_graph(graph_arg)
    warnings = tuple(input_warnings(read, graph_arg))
    for line in warnings:
        click.echo(printable_line(f"warning: {line}"), err=True)
    flow_graph, credit, credits = credits_in_effect(read, options)
    return flow_graph, credit, credits, warnings


def refuse_options_not_taken(ctx: click.Context, family: Family, command: str) -> None:
    """FAM-OPTIONS: exit 2, in one line, when the command line sets an option that
    ``family`` does not take for ``command`` — an option is never silently ignored.

    An option counts as set when its value did not come from its default (click's
    parameter source), so a flag's default or an unset option never trips this."""
    taken = family.options.get(command, frozenset())
    for param in ctx.command.params:
        name = param.name
        if name is None or name in taken or name in UNIVERSAL_OPTIONS:
            continue
        source = ctx.get_parameter_source(name)
        if source in (None, click.core.ParameterSource.DEFAULT):
            continue
        flag = param.opts[0] if param.opts else name
        fail(
            f"{command} {flag}: not an option of the {family.name} family "
            f"(it takes: {', '.join(sorted(_flags(ctx, taken))) or 'none'}) (FAM-OPTIONS)"
        )


#: FAM-OPTIONS: options every family takes (the output, the budget, the input itself)
UNIVERSAL_OPTIONS = frozenset({"graph", "as_json", "timeout", "trace_out", "dot_out", "help"})


def _flags(ctx: click.Context, names: frozenset[str]) -> list[str]:
    return [
        p.opts[0]
        for p in ctx.command.params
        if p.name in names and p.name not in UNIVERSAL_OPTIONS and p.opts
    ]


#: FIND-UPDATE: writes an expectations file from a run's findings (called as
#: ``write(result, path, saver, echo=...)``) and returns the record of what it wrote for
#: ``--json``, or ``None`` when nothing was written
ExpectationsWriter = Callable[..., "dict[str, Any] | None"]


def echo_json_with_update(
    doc: dict[str, Any], result: Any, update: Path | None, saver: Saver, write: ExpectationsWriter
) -> None:
    """``--json`` of a ``conform`` run: ``doc`` with the record of the expectations file
    ``update`` written by ``write`` (FIND-UPDATE) and the write failures (OUT-FAILURE)."""
    if update is not None:
        doc["expectations_written"] = write(result, update, saver)
    click.echo(json.dumps(saver.annotate(doc)))


def exit_after_update(
    result: Any, update: Path | None, saver: Saver, write: ExpectationsWriter
) -> NoReturn:
    """After a ``conform`` run's text verdict: the expectations file ``update`` written by
    ``write`` (FIND-UPDATE, its one line said), then the verdict's exit (OUT-EXIT)."""
    if update is not None:
        write(result, update, saver, echo=True)
    saver.exit(result.exit_code)
