"""``python -m creditflow.conformance.cli``: the ``creditflow`` command."""

from creditflow.conformance.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
