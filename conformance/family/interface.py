"""The family interface (FAM-INTERFACE in spec/families.md): one checker for any model,
a family supplying only what is its own (Stateright's ``Model``, TLC).

A :class:`Family` is a small frozen record of *parts*. Each part is named by where it
lives (``"package.module:ATTRIBUTE"``) and loaded only when a command needs it
(START-LAZY), so ``creditflow --help`` imports no family. The engine — the explorer,
``check``/``show``/``prove``/``synth``, the conform driver, replay, the trace
reader/writer, the expectations matcher, sweeps and the CLI's option routing — is written
once against the parts' protocols below and never names a family.

Required parts: ``reader`` (FAM-READER) and ``checking`` (FAM-CHECKING).
Optional parts (``None`` where a family has none): ``codec`` (FAM-CODEC, traces and
pictures), ``every_supply`` (FAM-EVERY-SUPPLY), ``synthesis`` (FAM-SYNTH), ``alphabet``
(FAM-ALPHABET, adapters and ``conform``), ``sweep`` (FAM-SWEEP).

An option declares the families it applies to through :attr:`Family.options`; a
command refuses, in one line and exit 2, an option the family does not take
(FAM-OPTIONS) — it never ignores one.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from creditflow.model.system import TransitionSystem


@runtime_checkable
class Instance(Protocol):
    """A family's input after reading: a graph, a topology, a scenario (FAM-READER).
    Frozen and hashable; ``name`` is what verdicts and file names are derived from."""

    @property
    def name(self) -> str: ...


class Reader(Protocol):
    """FAM-READER: the family's input formats, through the one input layer
    (``conformance/inputs/reading.py``: IN-LIMITS, IN-SCHEMA, one line naming the file,
    exit 2)."""

    #: the ``"family"`` value of the family's JSON documents (``"amqp"``, ``"http2"``)
    document_family: str

    def preset_names(self) -> Sequence[str]:
        """The family's presets (under ``spec/graphs/<family>/``)."""
        ...

    def recognises(self, document: Mapping[str, Any]) -> bool:
        """Whether a parsed JSON document is one of this family's inputs."""
        ...

    def read(self, source: str, settings: Mapping[str, Any]) -> Instance:
        """A preset name or a file path, with the settings of the command line and of a
        ``--config`` file applied (a bad value raises the input layer's one-line error,
        naming the file that holds it: FAM-CONFIG-BLAME)."""
        ...

    def from_trace_meta(self, meta: Mapping[str, Any], where: str) -> Instance:
        """The instance a trace embeds in its ``#meta`` (TRACE-*): ``show`` and
        ``replay`` read a trace of any family through this."""
        ...


class Checking(Protocol):
    """FAM-CHECKING: the family's transition system and how the explorer should treat it.

    ``system`` returns a :class:`~creditflow.model.system.TransitionSystem` that the one
    explorer (``conformance/explore/explorer.py``) searches: packed store, budgets,
    progress lines, shortest counterexamples, EXP-ONLINE; ``symmetry`` the reduction the
    family argues sound (``None``: none)."""

    def system(self, instance: Instance, options: Mapping[str, Any]) -> TransitionSystem[Any]:
        """The transition system of ``instance`` with the options of the command line
        (the supply, bounds) applied."""
        ...

    def symmetry(self, system: TransitionSystem[Any]) -> Any | None: ...

    def supply(self, instance: Instance) -> int | None:
        """The instance's own supply (messages, octets) or ``None``."""
        ...


class Codec(Protocol):
    """FAM-CODEC: how the family's states and actions are written for traces and for a
    person (TRACE-*, TRACE-RUNS apply to every family through the one writer)."""

    #: the ``#meta.creditflow.model`` of the family's counterexample traces
    model: str
    #: the version of that trace format (part of a sweep case's identity, SW-CASE-ID)
    version: int

    def meta(self, instance: Instance) -> Mapping[str, Any]:
        """What a trace embeds so that ``show``/``replay`` can rebuild the instance."""
        ...

    def state_line(self, system: TransitionSystem[Any], state: Any) -> str:
        """One line describing ``state`` for a person."""
        ...

    def step_words(self, system: TransitionSystem[Any], action: int) -> str:
        """An action in words the docs explain (no Python repr)."""
        ...

    def picture(self, system: TransitionSystem[Any], state: Any, title: str) -> str:
        """A DOT picture of ``state`` (EXP-PICTURE)."""
        ...


@dataclass(frozen=True)
class SupplyProof:
    """FAM-EVERY-SUPPLY: what a family's proof for every supply established: ``proved``
    (every property in ``properties`` holds for every supply), ``refuted`` (a property is
    false for some supply; the explorer then finds the witness) or ``open`` (not
    established: ``statement`` names the open obligation, or the deadline that ran out)."""

    status: Literal["proved", "refuted", "open"]
    statement: str
    properties: Mapping[str, bool | None]


class EverySupply(Protocol):
    """FAM-EVERY-SUPPLY: a proof for every supply, within the deadline the engine passes
    (``--prove-timeout``/``--timeout``, honoured: FAM-DEADLINE)."""

    def prove(self, instance: Instance, deadline: float | None) -> SupplyProof:
        """Proved (per property), refuted, or open with the obligation named; a deadline
        (``time.monotonic()``) that passes gives ``open``, never ``proved``."""
        ...


class Synthesis(Protocol):
    """FAM-SYNTH: the settings ``synth`` may minimise and the search for the least one."""

    settings: Sequence[str]

    def synthesize(
        self, instance: Instance, setting: str, options: Mapping[str, Any], deadline: float | None
    ) -> Any: ...


class Alphabet(Protocol):
    """FAM-ALPHABET: what the one conform driver, replay and the expectations matcher
    need of a family: its adapter op alphabet, the model side that answers the same ops,
    the policies an adapter declares in ``hello``, its phases and its runs.

    The engine reads an adapter's family from its ``hello`` (AD-HELLO) and takes the
    alphabet of that family: ``--adapter-cmd`` and ``replay --adapter-cmd`` take an
    adapter of any family that has one."""

    #: the ``family`` an adapter names in its ``hello`` (AD-HELLO)
    family: str
    #: the ops of the family's adapter protocol (AD-OPS, AD-AMQ-OPS, …)
    ops: Sequence[str]
    #: ``conform``'s phases, in the order they run (``--phase``)
    phases: Sequence[str]
    #: ``conform``'s budgets without ``--max-examples`` and ``--steps``
    default_examples: int
    default_steps: int

    def model_side(self, declared: Mapping[str, Any]) -> Any:
        """The model answering the adapter's ops under the policies it declared."""
        ...

    def policies(self, info: Mapping[str, Any]) -> Mapping[str, Any]:
        """The policies an adapter declared in its ``hello`` answer ``info`` (AD-HELLO;
        empty where the family has none)."""
        ...

    def runs(self, info: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
        """The settings the runs choose among for an adapter that said ``info`` in its
        ``hello`` (one empty choice where the family has no settings)."""
        ...

    def open_command(self, argv: Sequence[str], timeout: float) -> Any:
        """The family's driver of an adapter command (AD-CMD), started: it says
        ``hello`` and is probed (AD-ERRORS); an ``AdapterFailure`` if it cannot."""
        ...


class Sweep(Protocol):
    """FAM-SWEEP: the dimensions a sweep file may vary for this family (SW-*)."""

    dimensions: Sequence[str]


@dataclass(frozen=True)
class Part:
    """A part of a family, named ``"package.module:ATTRIBUTE"`` and loaded on first use."""

    target: str

    def load(self) -> Any:
        module, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class Family:
    """FAM-INTERFACE: a protocol family — its name, spec, properties, options and parts."""

    name: str
    #: one line for ``creditflow families`` and the help pages
    title: str
    #: spec files that hold its rules, relative to ``spec/``
    spec_files: tuple[str, ...]
    #: its PROP-* ids, in the order its spec lists them
    property_ids: tuple[str, ...]
    #: FAM-OPTIONS: per command, the options (click parameter names) the family takes
    options: Mapping[str, frozenset[str]]
    reader: Part
    checking: Part
    codec: Part | None = None
    every_supply: Part | None = None
    synthesis: Part | None = None
    alphabet: Part | None = None
    sweep: Part | None = None
    #: FAM-PRESETS: where its presets live, relative to ``spec/`` (``graphs/amqp``), if it
    #: has any: one JSON document a preset, its ``description`` (or ``graph.description``)
    #: what ``creditflow presets`` says of it without loading the reader
    preset_folder: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def takes(self, command: str, option: str) -> bool:
        """FAM-OPTIONS: whether ``command`` takes ``option`` for this family."""
        return option in self.options.get(command, frozenset())
