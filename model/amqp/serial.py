"""RFC 1982 serial-number arithmetic on 32-bit sequence numbers (AMQ-SERIAL).

>>> add(2**32 - 1, 2)
1
>>> diff(1, 2**32 - 1)
2
>>> compare(1, 2**32 - 1)
'greater'
"""

from __future__ import annotations

from typing import Literal

SERIAL_SPACE = 2**32
MAX_ADDEND = 2**31 - 1
HALF = 2**31


class SerialError(ValueError):
    """An addition or comparison RFC 1982 leaves undefined (AMQ-SERIAL)."""


def add(s: int, n: int) -> int:
    """``s + n`` mod 2^32, for ``0 ≤ n ≤ 2^31 − 1`` only (AMQ-SERIAL)."""
    if not 0 <= n <= MAX_ADDEND:
        raise SerialError(f"undefined serial addition {s} + {n}")
    return (s + n) % SERIAL_SPACE


def compare(a: int, b: int) -> Literal["equal", "less", "greater"]:
    """RFC 1982 comparison; ``|a − b| = 2^31`` is undefined (AMQ-SERIAL)."""
    if a == b:
        return "equal"
    d = (a - b) % SERIAL_SPACE
    if d == HALF:
        raise SerialError(f"undefined serial comparison {a} <> {b}")
    return "greater" if d < HALF else "less"


def diff(a: int, b: int) -> int:
    """The signed distance ``a − b``: the ``d`` in (−2^31, 2^31) with ``add(b, d) = a``
    (AMQ-SERIAL)."""
    d = (a - b) % SERIAL_SPACE
    if d == HALF:
        raise SerialError(f"undefined serial difference {a} - {b}")
    return d if d < HALF else d - SERIAL_SPACE
