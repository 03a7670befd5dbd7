"""The pytest plugin (entry point ``pytest11``): a trace corpus as test items
(AD-CORPUS), so that CI can gate an implementation on every trace ever pinned.

    pytest corpus/ --creditflow-adapter rabbitmq --junitxml=conformance.xml
    pytest corpus/ --creditflow-adapter-cmd "python3 my_adapter.py" \\
        --creditflow-expectations known.json

With an adapter chosen (option or ini ``creditflow_adapter`` / ``creditflow_adapter_cmd``)
every ``*.itf.json`` file collected becomes one item that replays the trace against the
adapter (TRACE-PROCESS-REPLAY); without one the plugin collects nothing. With an
expectations file a trace is judged exactly as ``replay`` and ``conform`` judge it
(AD-EXPECTATIONS-MATCH, AD-EXPECTATIONS-MASK): one whose only divergences are known ones
is ``xfail``, a listed one that passes fails (an unexpected pass, also for a listed trace
not collected). One adapter process serves the whole session (per xdist worker) and is
restarted after a failure.

With an AMQP adapter (``amqp-reference``, ``proton[@VERSION]``, ``rhea[@VERSION]``, …)
the items are AMQP run traces (TRACE-AMQP-RUN), judged as ``creditflow replay`` judges
them (AD-AMQ-REPLAY, AD-AMQ-EXPECTATIONS-MATCH, AD-AMQ-EXPECTATIONS-MASK); the AMQP
engine is imported only then.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from creditflow.adapters.amqp.rabbit_fifo import NAME as RABBIT_FIFO
from creditflow.adapters.registry import (
    UnknownAdapter,
    adapter_factory,
    amqp_adapter_factory,
    command_factory,
    is_amqp_name,
)
from creditflow.conformance.differential.adapter import Adapter, AdapterFailure
from creditflow.conformance.differential.expected import ResolvedExpectations, resolve
from creditflow.conformance.differential.replay import (
    DIVERGED,
    NOT_OFFERED,
    XFAIL,
    XPASS,
    ReplayOutcome,
    replay_trace,
)
from creditflow.conformance.differential.report import divergence_lines
from creditflow.conformance.differential.subprocess import DEFAULT_TIMEOUT
from creditflow.conformance.differential.traces import SUFFIX, load_trace
from creditflow.conformance.inputs import bounds
from creditflow.conformance.inputs.expectations import (
    Expectations,
    ExpectationsError,
    load_expectations,
)
from creditflow.conformance.inputs.reading import InputError
from creditflow.conformance.runtime import children

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from creditflow.conformance.families.amqp.expected import ResolvedAmqpExpectations


class _Session:
    """The adapter shared by every trace item of a test session."""

    def __init__(
        self,
        factory: Callable[[], Any],
        expectations: Expectations | None,
        amqp: bool = False,
    ) -> None:
        self.factory = factory
        self.expectations = expectations
        #: AD-AMQ-REPLAY: the adapter is of the amqp family, the traces AMQP run traces
        self.amqp = amqp
        self._adapter: Adapter | None = None
        #: the trace files collected, by name (AD-EXPECTATIONS-MATCH: witnesses)
        self.collected: dict[str, Path] = {}
        self._resolved: Any = None  #: ResolvedExpectations, or the AMQP one
        self._error: InputError | None = None

    def resolved(self) -> ResolvedExpectations | None:
        """AD-EXPECTATIONS-MATCH: the expectations, each listed trace replayed once per
        session (the collected traces first, then as ``conform`` looks them up).
        Raises ``ExpectationsError`` (every item then fails with it) and
        ``AdapterFailure``."""
        if self.expectations is None:
            return None
        if self._error is not None:
            raise self._error
        if self._resolved is None:
            given = {
                name: load_trace(path)
                for name, path in self.collected.items()
                if name in self.expectations.known
            }
            folders = dict.fromkeys(path.parent for path in self.collected.values())
            try:
                self._resolved = resolve(self.adapter(), self.expectations, folders, given)
            except (ExpectationsError, InputError) as exc:
                self._error = exc
                raise
        return self._resolved

    def resolved_amqp(self) -> ResolvedAmqpExpectations | None:
        """AD-AMQ-EXPECTATIONS-MATCH: as :meth:`resolved`, with AMQP run traces."""
        # deferred: the AMQP model changes NET runs' Hypothesis draws when imported
        from creditflow.conformance.families.amqp.expected import resolve_amqp

        # deferred: as above
        from creditflow.conformance.families.amqp.run_traces import load_amqp_trace

        if self.expectations is None:
            return None
        if self._error is not None:
            raise self._error
        if self._resolved is not None:
            return self._resolved
        folders = dict.fromkeys(path.parent for path in self.collected.values())
        try:
            given = {
                name: load_amqp_trace(path)
                for name, path in self.collected.items()
                if name in self.expectations.known
            }
            self._resolved = resolve_amqp(self.adapter(), self.expectations, folders, given)
        except (ExpectationsError, InputError) as exc:
            self._error = exc
            raise
        return self._resolved

    def unexpected_passes(self) -> tuple[str, ...]:
        """Listed traces that pass and were not collected (a collected one fails as
        its own item)."""
        if self._resolved is None:
            return ()
        return tuple(n for n in self._resolved.unexpected_passes if n not in self.collected)

    def adapter(self) -> Any:
        if self._adapter is None:
            self._adapter = self.factory()
        return self._adapter

    def drop(self) -> None:
        if self._adapter is not None:
            self._adapter.close()
            self._adapter = None


SESSION = pytest.StashKey[_Session]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("creditflow", "creditflow: replay a trace corpus against an adapter")
    group.addoption(
        "--creditflow-adapter",
        metavar="NAME",
        help="Built-in adapter to replay *.itf.json traces against "
        "(reference, rabbitmq, python-template, mutant:NAME, ...).",
    )
    group.addoption(
        "--creditflow-adapter-cmd",
        metavar="CMD",
        help="Command speaking the creditflow adapter protocol.",
    )
    group.addoption(
        "--creditflow-expectations",
        metavar="FILE",
        help="Known divergences (JSON): traces diverging only as listed are xfail; "
        "a listed trace that passes fails.",
    )
    group.addoption(
        "--creditflow-rabbitmq-ebin",
        metavar="DIR",
        help="The rabbit_common ebin folder holding credit_flow.beam.",
    )
    group.addoption(
        "--creditflow-timeout",
        default=None,
        metavar="SECONDS",
        help=f"Adapter response timeout (default {DEFAULT_TIMEOUT:g}).",
    )
    parser.addini("creditflow_adapter", "Built-in adapter for *.itf.json traces.")
    parser.addini("creditflow_adapter_cmd", "Adapter command for *.itf.json traces.")
    parser.addini("creditflow_expectations", "Expectations file (known divergences).")


def _setting(config: pytest.Config, name: str) -> Any:
    value = config.getoption(f"--creditflow-{name.replace('_', '-')}")
    if value is None and name in ("adapter", "adapter_cmd", "expectations"):
        value = config.getini(f"creditflow_{name}") or None
    return value


def pytest_configure(config: pytest.Config) -> None:
    name, command = _setting(config, "adapter"), _setting(config, "adapter_cmd")
    if name is None and command is None:
        return
    if name is not None and command is not None:
        raise pytest.UsageError("give only one of --creditflow-adapter, --creditflow-adapter-cmd")
    try:
        given = _setting(config, "timeout")
        timeout = (
            DEFAULT_TIMEOUT
            if given is None
            else bounds.check_number(given, bounds.SECONDS, "--creditflow-timeout")
        )
        ebin = _setting(config, "rabbitmq_ebin")
        amqp = command is None and is_amqp_name(name)
        factory: Callable[[], Any]
        if command is not None:
            factory = command_factory(command, timeout=timeout)
        elif amqp:  # AD-AMQ-REPLAY
            if name == RABBIT_FIFO:
                raise pytest.UsageError(
                    f"{RABBIT_FIFO} runs queue ops, not AMQP link traces (AD-AMQ-FIFO-CONFORM)"
                )
            factory = amqp_adapter_factory(name, timeout=timeout, rabbitmq_ebin=ebin)
        else:
            factory = adapter_factory(name, rabbitmq_ebin=ebin, timeout=timeout)
        path = _setting(config, "expectations")
        expectations = load_expectations(path) if path else None
    except (UnknownAdapter, ExpectationsError, InputError) as exc:  # IN-BOUNDS, IN-ONE-LINE
        raise pytest.UsageError(str(exc)) from None
    except ValueError as exc:  # shlex: an unbalanced quote (AD-TRANSPORT-DEADLINE)
        raise pytest.UsageError(f"--creditflow-adapter-cmd: {exc}") from None
    config.stash[SESSION] = _Session(factory, expectations, amqp)
    _stop_adapters_on_sigterm(config)


def _stop_adapters_on_sigterm(config: pytest.Config) -> None:
    """SIG-PLUGIN: a test run ended by SIGTERM (a CI cancellation) first kills the
    adapters' process groups (SIG-CHILDREN), then ends as the signal's previous handler
    says (by default: killed by SIGTERM)."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def stop(signum: int, frame: Any) -> None:
        children.kill_all()
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        if callable(previous):
            previous(signum, frame)
        else:
            os.kill(os.getpid(), signum)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    signal.signal(signal.SIGTERM, stop)
    config.add_cleanup(restore)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """AD-EXPECTATIONS: a listed trace that was not collected but passes fails the run,
    as in ``replay`` and ``conform``."""
    state = session.config.stash.get(SESSION, None)
    if state is not None and state.unexpected_passes() and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    state = terminalreporter.config.stash.get(SESSION, None)
    if state is None:
        return
    for name in state.unexpected_passes():
        terminalreporter.write_line(
            f"XPASS {name}: passes, but the expectations list it; remove it from "
            f"{state.expectations and state.expectations.path}"
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION, None)
    if session is not None:
        session.drop()


#: AD-CORPUS: traces seen while no adapter was chosen (the hint counts them).
UNCOLLECTED = pytest.StashKey[int]()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not file_path.name.endswith(SUFFIX):
        return None
    if SESSION in parent.config.stash:
        return TraceFile.from_parent(parent, path=file_path)
    parent.config.stash[UNCOLLECTED] = parent.config.stash.get(UNCOLLECTED, 0) + 1
    return None


def pytest_report_collectionfinish(config: pytest.Config) -> str | None:
    """AD-CORPUS: traces given without an adapter are not tests; say so, and how."""
    seen = config.stash.get(UNCOLLECTED, 0)
    if not seen:
        return None
    return (
        f"creditflow: {seen} {SUFFIX} trace(s) not collected: no adapter chosen "
        "(give --creditflow-adapter NAME or --creditflow-adapter-cmd CMD)"
    )


class TraceFile(pytest.File):
    """A trace file: one item."""

    def collect(self) -> Iterator[pytest.Item]:
        name = self.path.name.removesuffix(SUFFIX)
        self.config.stash[SESSION].collected.setdefault(name, self.path)
        yield TraceItem.from_parent(self, name=name)


class TraceDiverged(Exception):
    def __init__(self, outcome: ReplayOutcome) -> None:
        super().__init__(str(outcome.trace.path))
        self.outcome = outcome


class AmqpTraceFailed(Exception):
    """An AMQP run trace that fails in no known way (AD-AMQ-REPLAY)."""

    def __init__(self, outcome: Any) -> None:
        super().__init__(str(outcome.trace.path))
        self.outcome = outcome


class UnexpectedPass(Exception):
    """A listed trace that passes (AD-EXPECTATIONS): the file must be kept true."""


class TraceItem(pytest.Item):
    """Replay one trace against the session's adapter (TRACE-PROCESS-REPLAY)."""

    def runtest(self) -> None:
        session = self.config.stash[SESSION]
        if session.amqp:
            self._run_amqp(session)
            return
        loaded = load_trace(self.path)
        try:
            outcome = replay_trace(session.adapter(), loaded, session.resolved())
        except AdapterFailure:
            session.drop()
            raise
        if outcome.status == DIVERGED:
            raise TraceDiverged(outcome)
        if outcome.status == XFAIL:
            pytest.xfail(outcome.reason or "a known divergence (AD-EXPECTATIONS-MATCH)")
        if outcome.status == XPASS:
            raise UnexpectedPass(
                f"{self.path}: passes, but the expectations list it ({outcome.reason}); "
                f"remove it from {session.expectations and session.expectations.path}"
            )
        if outcome.status == NOT_OFFERED:
            # AD-CAPABILITIES: shown as skipped, with the ops, never as passed.
            pytest.skip(
                f"needs {', '.join(outcome.missing_ops)}, which the implementation "
                f"does not offer (AD-CAPABILITIES)"
            )

    def _run_amqp(self, session: _Session) -> None:
        """AD-AMQ-REPLAY: an AMQP run trace, judged as ``creditflow replay`` judges it."""
        # deferred: the AMQP model changes NET runs' Hypothesis draws when imported
        from creditflow.conformance.families.amqp.conform import PolicyError

        # deferred: as above
        from creditflow.conformance.families.amqp.replay import replay_amqp_trace

        # deferred: as above
        from creditflow.conformance.families.amqp.run_traces import load_amqp_trace

        loaded = load_amqp_trace(self.path)
        try:
            outcome = replay_amqp_trace(session.adapter(), loaded, session.resolved_amqp())
        except (AdapterFailure, PolicyError):
            session.drop()
            raise
        if outcome.run is not None:
            raise AmqpTraceFailed(outcome)
        if outcome.status == XFAIL:
            pytest.xfail(outcome.reason or "a known failure (AD-AMQ-EXPECTATIONS-MATCH)")
        if outcome.status == XPASS:
            raise UnexpectedPass(
                f"{self.path}: passes, but the expectations list it ({outcome.reason}); "
                f"remove it from {session.expectations and session.expectations.path}"
            )
        if outcome.status == "not-run":
            pytest.skip(f"not run: {outcome.why_not_run} (AD-AMQ-REPLAY)")

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | TerminalRepr:
        exc = excinfo.value
        if isinstance(exc, TraceDiverged):
            o = exc.outcome
            assert o.divergence is not None and o.executed is not None
            head = f"{o.trace.path}: the implementation diverges from the model"
            if o.trace.description:
                head += f"\n{o.trace.description}"
            return "\n".join([head, *divergence_lines(o.divergence, o.executed)[1:]])
        if isinstance(exc, AmqpTraceFailed):
            # deferred: the AMQP model only for AMQP traces
            from creditflow.conformance.families.amqp.conform import run_lines

            run = exc.outcome.run
            assert run is not None
            what = "diverges from" if run.verdict == "diverged" else "breaks a property, as"
            head = f"{self.path}: the implementation {what} the model"
            return "\n".join([head, *run_lines(run)])
        if isinstance(exc, (AdapterFailure, InputError, UnexpectedPass)):  # IN-ONE-LINE
            return str(exc)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"trace {self.name}"
