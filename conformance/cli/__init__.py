"""The ``creditflow`` command line: one module per command group, wired to the
capabilities below it and to the adapters. Nothing imports the CLI.

:func:`main` is the console script (``creditflow``): the root group of :mod:`.root`,
which imports each command's module only when that command runs (START-LAZY).
"""

from creditflow.conformance.runtime import signals as _signals

_signals.early()  # SIG-POLICY while the rest is imported

from creditflow.conformance.cli.root import main  # noqa: E402

__all__ = ["main"]
