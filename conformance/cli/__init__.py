"""The ``creditflow`` command line: one module per command group, wired to the
capabilities below it and to the adapters. Nothing imports the CLI.

:func:`main` is the console script (``creditflow``): the root group of
:mod:`.app` (``check``, ``presets``, ``demo``) with every other group attached.
"""

from creditflow.conformance.cli import accounts, conform, observe, paging, prove, sweep
from creditflow.conformance.cli.app import main

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
):
    main.add_command(_command)

__all__ = ["main"]
