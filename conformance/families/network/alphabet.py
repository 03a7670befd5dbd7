"""The ``credit_flow`` family's adapter alphabet (FAM-ALPHABET): RabbitMQ's per-process
``credit_flow`` ops (AD-OPS), the model side that answers them (``model_side.py``:
every named process a CF ``ProcessCredit``), ``conform``'s phases and budgets
(AD-BATCHED, the two op machines, the explorer's runs). An adapter of this family
declares no policies: the credit spec comes with each ``reset`` (AD-RESET).

The family record of NET ``credit_flow`` names this part
(``alphabet=Part("creditflow.conformance.families.network.alphabet:ALPHABET")``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from creditflow.conformance.differential.conform import (
    DEFAULT_MAX_EXAMPLES,
    DEFAULT_STEPS,
    PHASES,
)
from creditflow.conformance.differential.model_side import ProcessModel
from creditflow.conformance.differential.protocol import DEFAULT_SPEC, FAMILY, OP_KINDS
from creditflow.conformance.differential.subprocess import SubprocessAdapter
from creditflow.model.credit.spec import CreditSpec


@dataclass(frozen=True)
class NetworkAlphabet:
    """FAM-ALPHABET for ``credit_flow`` (AD-OPS, AD-DIVERGENCE)."""

    family: str = FAMILY
    ops: Sequence[str] = ("reset", *OP_KINDS)
    phases: Sequence[str] = PHASES
    default_examples: int = DEFAULT_MAX_EXAMPLES
    default_steps: int = DEFAULT_STEPS

    def model_side(self, declared: Mapping[str, Any]) -> ProcessModel:
        """The processes of AD-OPS under the run's credit spec (``declared["spec"]``,
        ``[initial, more_after]``; AD-RESET's default without one)."""
        spec = declared.get("spec")
        return ProcessModel(DEFAULT_SPEC if spec is None else CreditSpec(*spec))

    def policies(self, info: Mapping[str, Any]) -> Mapping[str, Any]:
        """None: the credit spec is set by each ``reset`` (AD-RESET)."""
        return {}

    def runs(self, info: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
        """One choice: the phases pick their own specs (AD-RESET)."""
        return [{}]

    def open_command(self, argv: Sequence[str], timeout: float) -> SubprocessAdapter:
        """AD-CMD for ``credit_flow``: the command, driven with pipelined batches."""
        return SubprocessAdapter(list(argv), timeout=timeout)


ALPHABET = NetworkAlphabet()
