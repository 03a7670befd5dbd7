"""``python -m creditflow.conformance.cli``: the ``creditflow`` command."""

from creditflow.conformance.cli import main

main()
