"""IN-BOUNDS: the one table of the numbers every command accepts, wherever they enter:
a command-line option, a file (IN-INT) or the pytest plugin's options. Each entry says
what kind of number it is and its inclusive range; :func:`check_number` turns anything
else into one :class:`InputError` line (exit 2)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from creditflow.conformance.inputs.reading import MAX_INT, InputError


@dataclass(frozen=True)
class Bound:
    """A kind of number: ``integer`` or a finite float, from ``low`` to ``high``."""

    integer: bool
    low: float
    high: float
    unit: str = ""

    def describe(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if self.integer:
            return f"an integer from {int(self.low)} to {int(self.high)}{unit}"
        return f"a finite number from {self.low:g} to {self.high:g}{unit}"


#: IN-BOUNDS: seconds of a timeout or budget (AD-TRANSPORT-DEADLINE's 0.01 s to a day).
SECONDS = Bound(False, 0.01, 86_400.0, "seconds")
#: IN-BOUNDS: supplies, limits, bounds, depths, budgets in steps or states (IN-INT's range).
COUNT = Bound(True, 0, MAX_INT)
#: IN-BOUNDS: as :data:`COUNT`, at least 1 (``--max-states``, ``--runs``, ``--steps``).
POSITIVE = Bound(True, 1, MAX_INT)
#: IN-BOUNDS: a seed; at most 18 digits, so that the trace it is written into can be read
#: back (IN-INT) and the printed ``replay:`` command accepts it.
SEED = Bound(True, 0, MAX_INT)
#: IN-BOUNDS: a TCP port (``--epmd-port``, ``ERL_EPMD_PORT``).
PORT = Bound(True, 1, 65_535)
#: IN-BOUNDS: a time budget that may be 0 (``conform --shrink-seconds``).
BUDGET_SECONDS = Bound(False, 0, 86_400.0, "seconds")

#: IN-BOUNDS: publishes of a workload run against a real broker: IN-LIMITS' largest supply
#: (``model.network.graph.MAX_PUBLISHES``, not imported: it loads networkx, START-LAZY).
PUBLISHES = Bound(True, 0, 1_000_000)
#: IN-BOUNDS: a pause in milliseconds (``observe snapshot --max-pause-ms``), 1 ms to a day.
MILLISECONDS = Bound(True, 1, 86_400_000, "ms")

#: IN-OVERSHOOT-WORK: the most (actor, hop) places, summed over accounts, that AC-OVERSHOOT's
#: bounds may be computed over (``max_hops`` 10**6 round a 2-cycle made 2·10**6 of them:
#: 45 s and 1.4 GB); a graph that needs more is refused before any work.
MAX_OVERSHOOT_PLACES = 100_000
#: IN-OVERSHOOT-WORK: the most bits of a potential ``P`` (AC-OVERSHOOT), estimated from the
#: graph as the heaviest forwarding walk's sum of ``log2(events sent per event)``.
MAX_POTENTIAL_BITS = 4_096

BOUNDS = {
    "seconds": SECONDS,
    "budget-seconds": BUDGET_SECONDS,
    "count": COUNT,
    "positive": POSITIVE,
    "seed": SEED,
    "port": PORT,
    "publishes": PUBLISHES,
    "milliseconds": MILLISECONDS,
}


def check_number(value: Any, bound: Bound, where: str) -> int | float:
    """IN-BOUNDS: ``value`` (a string from a command line or environment, or a number)
    as an ``int`` or ``float`` inside ``bound``; else :class:`InputError` naming
    ``where`` (an option, a variable or a file)."""
    text = str(value).strip()
    problem = f"{text[:40]!r} is not {bound.describe()}"
    if bound.integer:
        if isinstance(value, (bool, float)):
            raise InputError(where, problem)
        if isinstance(value, int):
            number: int | float = value
        else:
            digits = text.lstrip("+-")
            if not digits.isdigit() or not digits.isascii() or len(digits) > len(str(MAX_INT)):
                raise InputError(where, problem)
            number = int(text)
    else:
        try:
            number = float(text)
        except ValueError:
            raise InputError(where, problem) from None
        if not math.isfinite(number):
            raise InputError(where, problem)
    if not bound.low <= number <= bound.high:
        raise InputError(where, problem)
    return number
