"""Reading typed attributes out of networkx graphs (shared by the graph validators).

Graph files carry attributes as JSON values or, from GraphML and DOT, as strings;
these helpers accept both and raise ``error`` (a ``ValueError`` subclass of the
caller's choosing) with a one-line reason.
"""

from __future__ import annotations

from collections.abc import Iterable


def as_bool(value: object, what: str, error: type[ValueError] = ValueError) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    raise error(f"{what} must be true or false, got {value!r}")


def as_int(
    value: object, what: str, minimum: int | None = None, error: type[ValueError] = ValueError
) -> int:
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            number = None
    if number is None:
        raise error(f"{what} must be an integer, got {value!r}")
    if minimum is not None and number < minimum:
        raise error(f"{what} must be >= {minimum}, got {number}")
    return number


def reject_unknown(
    keys: Iterable[str], allowed: frozenset[str], what: str, error: type[ValueError] = ValueError
) -> None:
    """Unknown attributes are errors (a misspelt one must not pass silently), except
    the user's own, prefixed ``x-`` (or ``_``)."""
    for key in keys:
        if key not in allowed and not str(key).startswith(("x-", "_")):
            raise error(
                f"{what}: unknown attribute {key!r} (allowed: {', '.join(sorted(allowed))}; "
                "prefix your own with 'x-')"
            )
