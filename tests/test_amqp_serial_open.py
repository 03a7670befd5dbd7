"""Issue 38 point 4: an open AMQ-SERIAL explains itself (spec/symbolic.md
Z3-AMQ-EVERY-SUPPLY). `check rabbitmq4-consume --config` with `max_queue_credit 1` proves
the nine properties and exits 4; the verdict names the serial distance the invariant does
not bound (the relay's two delivery-counts), says it is no witness, and what to do
(max_queue_credit ≥ the client's credit window, which closes the proof)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from creditflow.conformance.families.amqp.every_supply import serial_why
from creditflow.conformance.families.amqp.reader import READER
from creditflow.conformance.families.amqp.supply_encoding import (
    RELAY_COUNTS,
    AmqpProof,
    prove_every_supply,
)


def consume_with(tmp_path: Path, max_queue_credit: int) -> AmqpProof:
    config = tmp_path / "advanced.config"
    config.write_text(f"[{{rabbit, [{{max_queue_credit, {max_queue_credit}}}]}}].\n")
    found = READER.find("rabbitmq4-consume", config)
    assert found is not None
    proof = prove_every_supply(found.topology)
    assert proof is not None
    return proof


def test_max_queue_credit_below_the_credit_window_leaves_the_relay_counts_open(tmp_path):
    proof = consume_with(tmp_path, 1)
    assert all(v == "proved" for v in proof.verdicts.values())  # the nine properties
    assert proof.serial == "not-proved" and not proof.proved
    assert proof.serial_open == (RELAY_COUNTS,)
    why = serial_why(proof)
    assert RELAY_COUNTS in why and "no witness" in why
    assert "max_queue_credit 1 is below the client's credit window 100" in why
    assert "max_queue_credit ≥ 100" in why
    assert "And(" not in why and "rqd" not in why  # words, never a formula


def test_max_queue_credit_at_the_credit_window_closes_the_proof(tmp_path):
    """The advice is true: the same topology with max_queue_credit 100 is proved."""
    proof = consume_with(tmp_path, 100)
    assert proof.proved and proof.serial == "proved" and proof.serial_open == ()
    assert serial_why(proof) == ""


def test_the_explanation_without_a_known_remedy_and_the_json_member():
    from creditflow.conformance.families.amqp.rendering import proof_document

    proof = AmqpProof("t", "link", {}, (), (), "not-proved", 0.0)
    assert "a serial distance" in serial_why(proof) and "no witness" in serial_why(proof)
    named = dataclasses.replace(proof, serial_open=("a", "b"))
    assert "keep a; b within 2^31 − 1" in serial_why(named)
    assert proof_document(named)["serial_open"] == ["a", "b"]
    json.dumps(proof_document(named))
