"""The ``amqp`` family's adapter alphabet (FAM-ALPHABET): the ops of the AMQP adapter
protocol (AD-AMQ-OPS), the model side that answers them under the policy an adapter
declares in ``hello`` (AD-AMQ-POLICY), ``conform``'s phases and budgets
(AD-AMQ-CONFORM) and the sizes its runs choose among (AD-AMQ-CONFORM-SIZES).

Two ends of the family speak it: :data:`ALPHABET`, the link end every AMQP 1.0 library
adapter drives (``amqp-reference`` and its mutants, proton, rhea, azure-pyamqp,
amqp10-client, rabbitmq-amqp1.0, any ``--adapter-cmd`` whose ``hello`` lists ``amqp``),
and :data:`QUEUE_ALPHABET`, the quorum-queue end ``rabbit-fifo`` drives
(AD-AMQ-FIFO-CONFORM)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from creditflow.conformance.families.amqp.conform import model_policy, settings_choices
from creditflow.conformance.families.amqp.protocol import (
    AMQP_PHASES,
    DEFAULT_AMQP_EXAMPLES,
    DEFAULT_AMQP_STEPS,
    FAMILY,
    OPS,
    AmqpAdapter,
)
from creditflow.conformance.families.amqp.queue_conform import (
    QUEUE_ALPHABET as QUEUE_OPS_DRAWN,
)
from creditflow.conformance.families.amqp.queue_conform import (
    QUEUE_PHASES,
    QUEUE_SIZES,
    QueueModel,
)

#: AD-AMQ-FIFO-CONFORM: ops per Hypothesis run of the queue end without --steps
DEFAULT_QUEUE_STEPS = 15
#: AD-AMQ-FIFO-CONFORM: the queue end's ops (``reset`` and ``state`` besides those runs draw)
QUEUE_OPS = ("reset", *dict.fromkeys(o.op for o in QUEUE_OPS_DRAWN), "state")


@dataclass(frozen=True)
class _AmqpEnd:
    """FAM-ALPHABET: what both ends of the AMQP family share (the family, the examples,
    the policy ``hello`` declares, the adapter's command)."""

    family: str = FAMILY
    ops: Sequence[str] = ()
    phases: Sequence[str] = ()
    default_examples: int = DEFAULT_AMQP_EXAMPLES
    default_steps: int = DEFAULT_AMQP_STEPS

    def policies(self, info: Mapping[str, Any]) -> Mapping[str, Any]:
        """AD-AMQ-HELLO: the ``policy`` object of ``hello``."""
        return dict(info.get("policy") or {})

    def open_command(self, argv: Sequence[str], timeout: float) -> AmqpAdapter:
        """AD-CMD for the ``amqp`` family: the command, driven as an AMQP adapter
        (AD-AMQ-HELLO: it must say ``version``, ``policy`` and ``settings``)."""
        return AmqpAdapter(argv, timeout=timeout)


@dataclass(frozen=True)
class LinkAlphabet(_AmqpEnd):
    """FAM-ALPHABET, the link end (AD-AMQ-CONFORM)."""

    ops: Sequence[str] = OPS
    phases: Sequence[str] = AMQP_PHASES

    def model_side(self, declared: Mapping[str, Any]) -> Any:
        """AD-AMQ-POLICY: the model's policies for the declared ``policy`` and the run's
        ``settings`` (``declared = {"policy": …, "settings": …}``)."""
        return model_policy(declared.get("policy") or {}, declared.get("settings") or {})

    def runs(self, info: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
        """AD-AMQ-CONFORM-SIZES: the settings runs choose among."""
        return settings_choices(info)


@dataclass(frozen=True)
class QueueAlphabet(_AmqpEnd):
    """FAM-ALPHABET, the quorum-queue end (AD-AMQ-FIFO-CONFORM)."""

    ops: Sequence[str] = QUEUE_OPS
    phases: Sequence[str] = QUEUE_PHASES
    default_steps: int = DEFAULT_QUEUE_STEPS

    def model_side(self, declared: Mapping[str, Any]) -> Any:
        """The model's queue end under the sizes of the run (AD-AMQ-FIFO-CONFORM)."""
        return QueueModel.start(dict(declared.get("settings") or QUEUE_SIZES[0]))

    def runs(self, info: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
        """AD-AMQ-FIFO-CONFORM: the consumer modes and queue sizes."""
        return [dict(s) for s in QUEUE_SIZES]


ALPHABET = LinkAlphabet()
QUEUE_ALPHABET = QueueAlphabet()
