"""Pieces every ``creditflow`` command module shares: the error line, the credit-spec
parameter type and the console."""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click

from creditflow.conformance import exit_codes
from creditflow.model.credit.spec import CreditSpec, parse_credit


def fail(message: str, code: int = exit_codes.USAGE) -> NoReturn:
    """One line on stderr, ``creditflow: error: …``, and exit with ``code``."""
    click.echo(f"creditflow: error: {message}", err=True)
    sys.exit(code)


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
