"""The ``creditflow`` command line: one module per command group, wired to the
capabilities below it and to the adapters. Nothing imports the CLI.

:func:`main` is the console script (``creditflow``): the root group of
:mod:`.app` (``check``, ``presets``, ``demo``) with every other group attached.
"""

from creditflow.conformance.runtime import signals as _signals

_signals.early()  # SIG-POLICY while the rest is imported (a second or more)

from creditflow.conformance.cli import (  # noqa: E402
    accounts,
    conform,
    observe,
    paging,
    prove,
    show,
    sweep,
)
from creditflow.conformance.cli.app import main  # noqa: E402

for _command in (
    prove.prove,
    prove.synth,
    conform.conform,
    conform.replay,
    conform.adapters,
    paging.paging,
    accounts.accounts,
    accounts.alarms,
    sweep.sweep,
    sweep.report,
    sweep.replay_corpus,
    observe.observe,
    show.show,
):
    main.add_command(_command)

__all__ = ["main"]
