"""Faulty variants of the Python template, one fault each, that ``creditflow conform``
must kill (README: the kill table; tests/test_mutants.py).

Run one as ``python -m creditflow.adapters.mutants.<module>`` or, through the CLI, as
``creditflow conform --adapter mutant:<name>``.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass

from creditflow.adapters.python_template import Adapter, CreditFlowProcess, main

MODULES = (
    "block_off_by_one",
    "grants_not_deferred",
    "flush_oldest_first",
    "blockers_as_set",
    "peer_down_purges_deferred",
    "peer_down_keeps_credit",
    "negative_credit_clamped",
    "unblock_on_wrong_crossing",
    "bump_unknown_from_initial",
    "ack_off_by_one",
    "flush_while_blocked",
    "peer_down_no_unblock",
)


@dataclass(frozen=True)
class Mutant:
    name: str  #: e.g. ``block-off-by-one``
    module: str  #: the module to run with ``python -m``
    fault: str  #: what is wrong, with the rule it breaks

    def command(self) -> list[str]:
        return [sys.executable, "-m", self.module]


def mutants() -> dict[str, Mutant]:
    """Every shipped mutant by name."""
    out = {}
    for module in MODULES:
        full = f"{__name__}.{module}"
        doc = (importlib.import_module(full).__doc__ or "").strip()
        fault = doc.split(":", 1)[1] if ":" in doc else doc
        fault = " ".join(fault.split()).rstrip(".")
        out[module.replace("_", "-")] = Mutant(module.replace("_", "-"), full, fault)
    return out


def serve_mutant(mutant: str, faulty: type[CreditFlowProcess]) -> None:
    """Run the template's protocol loop with ``faulty`` as every process; hello names it
    ``mutant MUTANT``."""

    class MutantAdapter(Adapter):
        name = f"mutant {mutant}"
        process_class = faulty

    main(MutantAdapter)
