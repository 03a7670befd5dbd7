"""The reference model as a protocol subprocess (AD-TRANSPORT), to test the driver:
``python -m creditflow.adapters.reference.server``."""

from __future__ import annotations

import os
import sys

from creditflow.adapters.reference.credit_flow import handle_line
from creditflow.conformance.differential.model_side import ProcessModel


def main() -> None:
    """Answer every complete line of each chunk read, in one write (AD-PIPELINE)."""
    model = ProcessModel()
    pending = b""
    while chunk := os.read(0, 1 << 16):
        *lines, pending = (pending + chunk).split(b"\n")
        answers = [handle_line(line, model) + "\n" for line in lines if line.strip()]
        if answers:
            sys.stdout.write("".join(answers))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
