"""Checks of family parameter values that more than one family kind uses (SW-FAMILIES)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def word_or_count(word: str, least: int, error: type[ValueError]) -> Callable[[Any], int | str]:
    """The check of a parameter that is ``word`` itself or an integer >= ``least``; a
    value that is neither raises ``error`` with a one-line message."""

    def check(value: Any) -> int | str:
        if value == word:
            return word
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise error(f'must be "{word}" or an integer >= {least}, got {value!r}')
        return value

    return check
