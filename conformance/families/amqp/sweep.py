"""FAM-SWEEP for ``amqp``: the dimensions a sweep file may vary for kind ``amqp`` (SW-AMQP),
the parameters of :data:`~creditflow.conformance.sweep.amqp.AMQP_PARAMS_DEFAULTS`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from creditflow.conformance.sweep.amqp import AMQP_PARAMS_DEFAULTS


@dataclass(frozen=True)
class AmqpSweep:
    """FAM-SWEEP: SW-AMQP's parameters, in the order the sweep file documents them."""

    dimensions: Sequence[str]


#: FAM-SWEEP: the AMQP family's sweep dimensions
SWEEP = AmqpSweep(tuple(AMQP_PARAMS_DEFAULTS))
