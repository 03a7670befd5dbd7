"""The ``creditflow`` command line: one module per command group, wired to the
capabilities below it and to the adapters. Nothing imports the CLI.

:func:`main` is the console script (``creditflow``): the root group of
:mod:`.app` with every other command group attached.
"""

from creditflow.conformance.cli.accounts import accounts, alarms
from creditflow.conformance.cli.app import main
from creditflow.conformance.cli.conform import adapters, conform, replay
from creditflow.conformance.cli.observe import observe
from creditflow.conformance.cli.paging import paging
from creditflow.conformance.cli.prove import prove, synth
from creditflow.conformance.cli.sweep import replay_corpus, report, sweep

for _command in (prove, synth, conform, replay, adapters, paging, accounts, alarms,
                 sweep, report, replay_corpus, observe):
    main.add_command(_command)

__all__ = ["main"]
