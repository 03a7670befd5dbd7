"""FAM-EVERY-SUPPLY for AMQP 1.0 (Z3-AMQ-EVERY-SUPPLY, Z3-AMQ-WITNESS): ``check``'s
answer to "every supply" — the proof of ``conformance/families/amqp/supply_encoding.py``
within the engine's deadline (FAM-DEADLINE), then, for a property it leaves open, a
directed run (AMQ-DIRECTED-RUN) at :func:`probe_supply` looking for a witness."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from creditflow.conformance import exit_codes
from creditflow.conformance.explore.results import RunViolation, SupplyCheck
from creditflow.conformance.families.amqp.checking import STALL
from creditflow.conformance.families.amqp.directed import directed_runs
from creditflow.conformance.families.amqp.supply_encoding import (
    AmqpProof,
    probe_supply,
    prove_every_supply,
)
from creditflow.model.amqp.topology import Topology


@dataclass(frozen=True)
class EverySupplyCheck:
    """``check``'s answer to "every supply" for an AMQP topology (Z3-AMQ-EVERY-SUPPLY,
    Z3-AMQ-WITNESS, SCOPE-EXIT): the proof, and the search result whose violation (if
    any) is reported — the explicit search of the topology's own supply, or a directed
    run at :func:`probe_supply` for a property the proof left open."""

    proof: AmqpProof
    result: SupplyCheck
    proof_supply: int = -1
    """The topology's own supply (explored); a witness at another supply came from
    :func:`probe_supply`."""

    @property
    def proved_props(self) -> tuple[str, ...]:
        return tuple(p for p, s in self.proof.verdicts.items() if s == "proved")

    @property
    def claim(self) -> str:
        """The sentence the verdict stands for (SCOPE-TEXT)."""
        v = self.result.search.violation
        if self.proof.proved and v is None:
            return f"holds for every supply (proved: {self.proof.statement})"
        others = ", ".join(p.removeprefix("PROP-AMQ-") for p in self.proved_props)
        proved = f"proved for every supply (Z3-AMQ-EVERY-SUPPLY): {others or 'nothing'}"
        if v is not None and not self.result.shortest and self.result.supply != self.proof_supply:
            return (
                f"{v.prop} violated after {len(v.steps)} steps with supply "
                f"{self.result.supply:,} (a directed run's witness, Z3-AMQ-WITNESS; shortest "
                f"not established); {proved}"
            )
        if v is not None:
            return f"{self.result.claim}; {proved}"
        left = ", ".join(
            (*self.proof.open, *(() if self.proof.serial == "proved" else ("AMQ-SERIAL",)))
        )
        return (
            f"{self.result.claim.removesuffix('; for every supply: not established')}; "
            f"for every supply: not established ({left} not proved{serial_why(self.proof)}); "
            f"{proved}"
        )

    @property
    def exit_code(self) -> int:
        """SCOPE-EXIT: 0 only when every property is proved for every supply; a
        violation's code (10 a stall, 12 another); 4 otherwise."""
        if self.result.search.violation is not None:
            return self.result.exit_code
        return exit_codes.OK if self.proof.proved else exit_codes.INCOMPLETE


def serial_why(proof: AmqpProof) -> str:
    """SCOPE-TEXT for an open AMQ-SERIAL: which serial distance the invariant does not
    bound, what that means (no witness; a count that drifted 2^31 apart would make an
    RFC 1982 comparison undefined), and what to do when that is known; "" when proved."""
    if proof.serial == "proved":
        return ""
    what = "; ".join(proof.serial_open) or "a serial distance"
    text = (
        f": the invariant Z3 found does not keep {what} within 2^31 − 1 of each other, so "
        f"it does not show that every supply stays clear of an undefined serial "
        f"comparison (RFC 1982); this is no witness, nothing was found violated"
    )
    return text + (f"; {proof.serial_hint}" if proof.serial_hint else "")


def check_every_supply(
    t: Topology, explored: SupplyCheck, deadline: float | None = None
) -> EverySupplyCheck | None:
    """Z3-AMQ-EVERY-SUPPLY after the explicit search ``explored`` of ``t``'s own supply;
    ``None`` when Z3-AMQ-ABSTRACTION does not cover ``t``. A violation the search found
    of a property the proof says holds is an internal error (the encoding drifted from
    the model), never a verdict. For a property left open, a directed run at
    :func:`probe_supply` looks for a witness (Z3-AMQ-WITNESS; not proved shortest)."""
    proof = prove_every_supply(t, deadline=deadline)
    if proof is None:
        return None
    v = explored.search.violation
    if v is not None:
        wrong = [p for p in v.props if proof.verdicts.get(p) == "proved"]
        if wrong:
            raise RuntimeError(
                f"Z3-AMQ-EVERY-SUPPLY proved {wrong[0]} but the search violates it: "
                f"the abstraction drifted from the model"
            )
        return EverySupplyCheck(proof, explored, t.supply)
    if proof.proved:
        return EverySupplyCheck(proof, explored, t.supply)
    probe = replace(t, supply=probe_supply(t))
    runs = directed_runs(probe, deadline=deadline)
    w = runs.witness
    if w is None:
        return EverySupplyCheck(proof, explored, t.supply)
    if proof.verdicts.get(w.prop) == "proved":
        raise RuntimeError(
            f"Z3-AMQ-EVERY-SUPPLY proved {w.prop} but a directed run violates it: "
            f"the abstraction drifted from the model"
        )
    found = RunViolation(w.prop, w.steps, w.states, w.props)
    result = SupplyCheck(
        replace(explored.search, violation=found),
        probe.supply,
        True,
        STALL,
        runs.steps_taken,
        False,
    )
    return EverySupplyCheck(proof, result, t.supply)


@dataclass(frozen=True)
class AmqpEverySupply:
    """FAM-EVERY-SUPPLY: Z3-AMQ-EVERY-SUPPLY of an AMQP topology within ``deadline``
    (``time.monotonic()``; past it ``DeadlinePassed``, never a proof)."""

    def prove(self, instance: Any, deadline: float | None) -> AmqpProof | None:
        t = instance.topology if hasattr(instance, "topology") else instance
        return prove_every_supply(t, deadline=deadline)


#: FAM-EVERY-SUPPLY: the AMQP family's proof for every supply
EVERY_SUPPLY = AmqpEverySupply()
