"""RabbitMQ configuration files in, credits per edge out (IN-CONFIG).

:func:`load_credit_config` reads the two credit settings of a RabbitMQ config file
(IN-CONFIG-KEYS): ``advanced.config`` (Erlang terms, read by
:mod:`~creditflow.conformance.inputs.erlang_terms`, never evaluated) or ``rabbitmq.conf``
(sysctl style, IN-RABBITMQ-CONF). :func:`apply_credit_settings` gives every edge of a
graph its credit by the role of its receiver (IN-CREDIT-ROLES), with RabbitMQ 3.10.8's
defaults for what the file leaves unset (IN-CONFIG-DEFAULTS), then the command line's
per-role and per-edge overrides (IN-CREDIT-OVERRIDES). Pure apart from reading the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from creditflow.conformance.inputs.credit_sources import (
    CreditOrigin,
    CreditsInEffect,
    EdgeCredit,
)
from creditflow.conformance.inputs.erlang_terms import Term, parse_terms
from creditflow.conformance.inputs.reading import InputError, read_text
from creditflow.model.credit.spec import (
    DEFAULT_CREDIT,
    DEFAULT_MSG_STORE_CREDIT,
    DEFAULT_VERSION,
    CreditSpec,
)
from creditflow.model.network.graph import FlowGraph, GraphError, NodeSpec, check_credit

#: IN-CONFIG-KEYS: the ``rabbit`` application's settings that give credit specs.
DEFAULT_CREDIT_KEY = "credit_flow_default_credit"
MSG_STORE_CREDIT_KEY = "msg_store_credit_disc_bound"
CREDIT_KEYS = (DEFAULT_CREDIT_KEY, MSG_STORE_CREDIT_KEY)
#: AMQ-CONFIG: the ``rabbit`` application's settings of RabbitMQ 4's AMQP 1.0 flow control
#: (positive integers), read for AMQP topologies.
AMQP_KEYS = (
    "max_incoming_window",
    "max_link_credit",
    "max_queue_credit",
    "quorum_commands_soft_limit",
)
#: AMQ-TOPOLOGY-LIMITS: the largest value of an AMQP_KEYS setting (2^31 − 1, the largest
#: addend of RFC 1982 serial addition, AMQ-SERIAL)
MAX_AMQP_VALUE = 2**31 - 1
#: IN-CREDIT-ROLES: the roles of a message-store process (RabbitMQ's module name, and
#: the short name ``creditflow observe`` writes).
MSG_STORE_ROLES = frozenset({"rabbit_msg_store", "msg_store"})


class ConfigFileError(InputError):
    """A config file that cannot be used; ``str()`` is ``FILE:LINE: problem``."""


@dataclass(frozen=True)
class CreditSettings:
    """IN-CONFIG-KEYS: the credit settings a config file gives; ``None`` where the file
    leaves a setting unset (IN-CONFIG-DEFAULTS fills it)."""

    default_credit: CreditSpec | None = None
    msg_store_credit: CreditSpec | None = None
    where: str = ""
    #: AMQ-CONFIG: the AMQP_KEYS the file sets, in the order of AMQP_KEYS
    amqp: tuple[tuple[str, int], ...] = ()

    @property
    def effective_default(self) -> CreditSpec:
        """``credit_flow_default_credit``, or RabbitMQ 3.10.8's ``{400,200}``."""
        return self.default_credit if self.default_credit is not None else DEFAULT_CREDIT

    @property
    def effective_msg_store(self) -> CreditSpec:
        """``msg_store_credit_disc_bound``, or RabbitMQ 3.10.8's ``{4000,800}``."""
        if self.msg_store_credit is not None:
            return self.msg_store_credit
        return DEFAULT_MSG_STORE_CREDIT


#: IN-CONFIG-DEFAULTS: the version whose defaults fill what a file leaves unset.
DEFAULTS_VERSION = DEFAULT_VERSION


@dataclass(frozen=True)
class CreditOverrides:
    """IN-CREDIT-OVERRIDES: credits given on the command line, applied after the config:
    per role of the receiver, then per edge (the more specific wins)."""

    roles: tuple[tuple[str, CreditSpec], ...] = ()
    edges: tuple[tuple[str, str, CreditSpec], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.roles or self.edges)


# -- advanced.config --------------------------------------------------------------------------


def _credit_value(term: Term, key: str, where: str) -> CreditSpec:
    """IN-CONFIG-KEYS: ``{I, M}``, two integers (any integers credit_flow accepts, within
    IN-LIMITS)."""
    items = term.items
    if term.kind != "tuple" or len(items) != 2:
        raise ConfigFileError(
            f"{where}:{term.line}: {key} must be {{InitialCredit, MoreCreditAfter}}, "
            f"got {term.describe()}"
        )
    numbers: list[int] = []
    for item, name in zip(items, ("InitialCredit", "MoreCreditAfter"), strict=True):
        if item.kind != "integer" or not isinstance(item.value, int):
            raise ConfigFileError(
                f"{where}:{item.line}: {key}: {name} must be an integer, got {item.describe()}"
            )
        numbers.append(item.value)
    spec = CreditSpec(numbers[0], numbers[1])
    try:
        return check_credit(spec, key)
    except GraphError as exc:
        raise ConfigFileError(f"{where}:{term.line}: {exc}") from None


def _as_list(term: Term) -> Term:
    """IN-ERLANG-TERMS: a string is a list of character codes in Erlang (``""`` is
    ``[]``): ``term`` as that list where it is a string (its first code only, for the
    error message), else ``term``."""
    if term.kind != "string":
        return term
    # the first code is enough: a list of integers is refused at its first item, and a
    # long string never becomes one Term per character (IN-LINEAR)
    codes = tuple(Term("integer", ord(c), term.line) for c in str(term.value)[:1])
    return Term("list", codes, term.line)


def credit_settings_from_terms(terms: list[Term], where: str) -> CreditSettings:
    """IN-CONFIG-KEYS: the credit settings of a parsed ``advanced.config``: one term, a
    list of ``{Application, [{Key, Value}, ...]}``; other applications and keys are
    ignored, but the ``rabbit`` entries must be well formed and given once."""
    if not terms:
        raise ConfigFileError(f"{where}:1: no term in the file (expected [{{rabbit, [...]}}].)")
    if len(terms) > 1:
        raise ConfigFileError(
            f"{where}:{terms[1].line}: a second term; a config file is one list ending in '.'"
        )
    top = _as_list(terms[0])
    if top.kind != "list":
        raise ConfigFileError(
            f"{where}:{top.line}: a config file is a list of {{Application, Settings}}, "
            f"got {top.describe()}"
        )
    found: dict[str, CreditSpec] = {}
    found_amqp: dict[str, int] = {}
    seen_apps: set[str] = set()
    for entry in top.items:
        if entry.kind == "string":
            raise ConfigFileError(
                f"{where}:{entry.line}: includes the config file {entry.value!r}; "
                "give that file's settings in this one (includes are not followed)"
            )
        if entry.kind != "tuple" or len(entry.items) != 2 or entry.items[0].kind != "atom":
            raise ConfigFileError(
                f"{where}:{entry.line}: expected {{Application, Settings}}, got {entry.describe()}"
            )
        app, settings = entry.items[0], _as_list(entry.items[1])
        if app.value != "rabbit":
            continue
        if "rabbit" in seen_apps:
            raise ConfigFileError(f"{where}:{app.line}: the rabbit application is given twice")
        seen_apps.add("rabbit")
        if settings.kind != "list":
            raise ConfigFileError(
                f"{where}:{settings.line}: rabbit's settings must be a list of "
                f"{{Key, Value}}, got {settings.describe()}"
            )
        for setting in settings.items:
            if setting.kind != "tuple" or len(setting.items) != 2:
                raise ConfigFileError(
                    f"{where}:{setting.line}: a rabbit setting must be {{Key, Value}}, "
                    f"got {setting.describe()}"
                )
            key, value = setting.items
            if key.kind == "atom" and key.value in AMQP_KEYS:
                _amqp_value(value, str(key.value), where, found_amqp)
                continue
            if key.kind != "atom" or key.value not in CREDIT_KEYS:
                continue
            name = str(key.value)
            if name in found:
                raise ConfigFileError(f"{where}:{key.line}: {name} is set twice (IN-DUPLICATE)")
            found[name] = _credit_value(value, name, where)
    amqp = tuple((k, found_amqp[k]) for k in AMQP_KEYS if k in found_amqp)
    return CreditSettings(
        found.get(DEFAULT_CREDIT_KEY), found.get(MSG_STORE_CREDIT_KEY), where, amqp
    )


def _amqp_value(term: Term, key: str, where: str, found: dict[str, int]) -> None:
    """AMQ-CONFIG: one of AMQP_KEYS, a positive integer at most 2^31 − 1
    (AMQ-TOPOLOGY-LIMITS), given once; a value out of range is blamed on this file, not
    on the topology it is applied to (FAM-CONFIG-BLAME)."""
    if key in found:
        raise ConfigFileError(f"{where}:{term.line}: {key} is set twice (IN-DUPLICATE)")
    if term.kind != "integer" or not isinstance(term.value, int) or term.value < 1:
        raise ConfigFileError(
            f"{where}:{term.line}: {key} must be a positive integer, got {term.describe()}"
        )
    if term.value > MAX_AMQP_VALUE:
        raise ConfigFileError(
            f"{where}:{term.line}: {key}: {term.value} exceeds the maximum "
            f"{MAX_AMQP_VALUE} (AMQ-TOPOLOGY-LIMITS)"
        )
    found[key] = term.value


def parse_advanced_config(text: str, where: str) -> CreditSettings:
    """IN-ERLANG-TERMS + IN-CONFIG-KEYS on the text of an ``advanced.config``."""
    return credit_settings_from_terms(parse_terms(text, where), where)


# -- rabbitmq.conf ----------------------------------------------------------------------------

_CONF_LINE = re.compile(r"^\s*([A-Za-z0-9_.$\-]+(?:\.[A-Za-z0-9_.$\-]+)*)\s*=\s*(.*?)\s*$")


def parse_rabbitmq_conf(text: str, where: str) -> CreditSettings:
    """IN-RABBITMQ-CONF: a ``rabbitmq.conf`` (``key = value`` lines, ``#`` comments).
    RabbitMQ's schema maps neither credit setting, so a file that sets one is refused
    (RabbitMQ itself would refuse it); a key naming one of AMQP_KEYS is refused too
    (AMQ-CONFIG reads them from advanced.config only, never ignores them); every other
    key is ignored."""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _CONF_LINE.match(line)
        if match is None:
            raise ConfigFileError(f"{where}:{number}: expected 'key = value', got {line!r}")
        key = match.group(1)
        # any dotted part naming a credit setting: `credit_flow_default_credit = …`,
        # `rabbit.msg_store_credit_disc_bound = …`, `credit_flow_default_credit.initial_credit`
        named = [part for part in key.split(".") if part in CREDIT_KEYS]
        amqp = [part for part in key.split(".") if part in AMQP_KEYS]
        if amqp:
            # AMQ-CONFIG: never silently ignored; creditflow reads them from advanced.config
            raise ConfigFileError(
                f"{where}:{number}: {key}: creditflow reads the AMQP setting {amqp[0]} "
                "from advanced.config only; give it there as {rabbit, [{"
                + amqp[0]
                + ", N}]} (AMQ-CONFIG)"
            )
        if named:
            raise ConfigFileError(
                f"{where}:{number}: {key} is not a rabbitmq.conf setting (RabbitMQ's "
                "schema has no mapping for it and refuses the file); set it in "
                "advanced.config as {rabbit, [{" + named[0] + ", {I, M}}]}"
            )
    return CreditSettings(where=where)


def load_credit_config(path: str | Path) -> CreditSettings:
    """IN-CONFIG: the credit settings of a RabbitMQ config file: ``*.conf`` is read as
    ``rabbitmq.conf``, anything else (``advanced.config``, ``rabbitmq.config``) as
    Erlang terms. :class:`ConfigFileError` in one line (IN-ONE-LINE)."""
    path = Path(path)
    where = str(path)
    try:
        # IN-ERLANG-TERMS: Erlang (file:consult/1, RabbitMQ's loader) refuses a
        # byte-order mark, so advanced.config keeps it for the reader to refuse
        text = read_text(path, where, keep_bom=path.suffix.lower() != ".conf")
        if not text.strip():
            raise ConfigFileError(f"{where}: empty file")
        if path.suffix.lower() == ".conf":
            return parse_rabbitmq_conf(text, where)
        return parse_advanced_config(text, where)
    except ConfigFileError:
        raise
    except InputError as exc:
        raise ConfigFileError(str(exc)) from None


# -- command-line overrides -------------------------------------------------------------------


def _spec(text: str, what: str) -> CreditSpec:
    parts = [p.strip() for p in text.strip().strip("{}").split(",")]
    if len(parts) != 2 or not all(re.fullmatch(r"[+-]?[0-9]{1,18}", p) for p in parts):
        raise ValueError(f"{what}: the credit must be I,M (two integers), got {text!r}")
    return CreditSpec(int(parts[0]), int(parts[1]))


def parse_edge_credit(text: str) -> tuple[str, str, CreditSpec]:
    """IN-CREDIT-OVERRIDES: ``SENDER->RECEIVER=I,M``; ``ValueError`` naming the problem."""
    edge, eq, spec = text.rpartition("=")
    sender, arrow, receiver = edge.partition("->")
    if not eq or not arrow or not sender.strip() or not receiver.strip():
        raise ValueError(f"expected SENDER->RECEIVER=I,M, got {text!r}")
    return sender.strip(), receiver.strip(), _spec(spec, text)


def parse_role_credit(text: str) -> tuple[str, CreditSpec]:
    """IN-CREDIT-OVERRIDES: ``ROLE=I,M``; ``ValueError`` naming the problem."""
    role, eq, spec = text.rpartition("=")
    if not eq or not role.strip():
        raise ValueError(f"expected ROLE=I,M, got {text!r}")
    return role.strip(), _spec(spec, text)


# -- the assignment ---------------------------------------------------------------------------


def _role_name(role: str) -> str:
    return role.removeprefix("rabbit_")


def is_msg_store(node: NodeSpec) -> bool:
    """IN-CREDIT-ROLES: a message-store process is one whose ``role`` is
    ``rabbit_msg_store`` (the presets) or ``msg_store`` (``creditflow observe``)."""
    return node.role in MSG_STORE_ROLES


def apply_credit_settings(
    graph: FlowGraph,
    settings: CreditSettings | None,
    overrides: CreditOverrides = CreditOverrides(),
) -> FlowGraph:
    """``graph`` with its credits from a config file and the command line (see
    :func:`credits_with_sources`)."""
    return credits_with_sources(graph, settings, overrides)[0]


def credits_with_sources(
    graph: FlowGraph,
    settings: CreditSettings | None,
    overrides: CreditOverrides = CreditOverrides(),
    credit_flag: CreditSpec | None = None,
) -> tuple[FlowGraph, CreditsInEffect]:
    """``graph`` with its credits from ``--credit``, a config file and the command line,
    and the credit of every edge with where it came from (IN-CREDIT-SOURCES).

    ``credit_flag`` (``--credit``) sets every edge first. IN-CREDIT-ROLES: with
    ``settings``, every edge into a message store gets ``msg_store_credit_disc_bound``,
    every other edge ``credit_flow_default_credit`` (IN-CONFIG-DEFAULTS: 3.10.8's where
    unset); without either, the graph's own credits stay. IN-CREDIT-OVERRIDES: then each
    role override sets the edges whose receiver has that role (``msg_store`` matches
    ``rabbit_msg_store``), then each edge override its edge. A role or edge the graph
    does not have is a :class:`GraphError`; so is a credit beyond IN-LIMITS."""
    by_pair: dict[tuple[str, str], tuple[CreditSpec, CreditOrigin, str]] = {}
    for edge in graph.edges:
        entry: tuple[CreditSpec, CreditOrigin, str] = (edge.credit, "graph", "the graph file")
        if credit_flag is not None:
            entry = (credit_flag, "flag", "--credit")
        if settings is not None:
            store = is_msg_store(graph.node(edge.receiver))
            key = MSG_STORE_CREDIT_KEY if store else DEFAULT_CREDIT_KEY
            given = settings.msg_store_credit if store else settings.default_credit
            if given is not None:
                entry = (given, "file", f"{key} in {settings.where}")
            else:
                spec = settings.effective_msg_store if store else settings.effective_default
                entry = (spec, "default", f"RabbitMQ {DEFAULTS_VERSION}'s {key}")
        by_pair[(edge.sender, edge.receiver)] = entry
    roles = {n.role for n in graph.nodes if n.role}
    for role, spec in overrides.roles:
        matching = [
            (e.sender, e.receiver)
            for e in graph.edges
            if graph.node(e.receiver).role
            and _role_name(graph.node(e.receiver).role) == _role_name(role)
        ]
        if not matching:
            known = ", ".join(sorted(roles)) or "none"
            raise GraphError(
                f"--role-credit {role}: no edge leads into a process with role {role!r} "
                f"(roles: {known})"
            )
        for pair in matching:
            checked = check_credit(spec, f"--role-credit {role}")
            by_pair[pair] = (checked, "flag", f"--role-credit {role}")
    for sender, receiver, spec in overrides.edges:
        if (sender, receiver) not in by_pair:
            raise GraphError(f"--edge-credit: the graph has no edge {sender}->{receiver}")
        checked = check_credit(spec, f"--edge-credit {sender}->{receiver}")
        by_pair[(sender, receiver)] = (checked, "flag", "--edge-credit")
    for pair, (spec, _, _) in by_pair.items():
        check_credit(spec, f"credit of {pair[0]}->{pair[1]}")
    configured = replace(
        graph,
        edges=tuple(replace(e, credit=by_pair[(e.sender, e.receiver)][0]) for e in graph.edges),
    )
    sources = CreditsInEffect(
        tuple(
            EdgeCredit(e.sender, e.receiver, spec.initial, spec.more_after, origin, detail)
            for e in graph.edges
            for spec, origin, detail in [by_pair[(e.sender, e.receiver)]]
        )
    )
    return configured, sources
