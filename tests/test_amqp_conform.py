"""``creditflow conform`` for the AMQP adapters held against the AMQP model
(AD-AMQ-CONFORM): the reference conformant, each of its mutants caught with its shortest
trace, properties of the implementation's own states (exit 12), and the findings of the
pinned proton and rhea releases. Runs are kept small (depth 2–3, a few examples)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.adapters.registry import amqp_adapter_factory
from creditflow.conformance.cli import main
from creditflow.conformance.families.amqp.conform import (
    REFERENCE_SIZES,
    AmqpConformOptions,
    AmqpOp,
    PolicyError,
    model_policy,
    run_amqp_conform,
    run_ops,
    settings_choices,
)
from creditflow.conformance.families.amqp.protocol import AmqpAdapter
from creditflow.model.amqp.policies import CreditWindow, WindowFixed, WindowNever, WindowRing
from tests.adapter_setup import started_amqp_adapter
from tests.cli_runs import seeded_amqp_conform

T, F1, F2, D1 = AmqpOp("transfer"), AmqpOp("flow", 1), AmqpOp("flow", 2), AmqpOp("drain", 1)
DONE, S1, S1K1 = AmqpOp("drained"), AmqpOp("settle", number=1), AmqpOp("settle", number=1, keep=1)


@pytest.fixture(scope="module")
def reference() -> Iterator[AmqpAdapter]:
    yield from started_amqp_adapter("amqp-reference", AmqpAdapter)


@pytest.fixture(autouse=True)
def _in_a_fresh_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failing run's trace goes to counterexamples/ under the cwd
    (AD-AMQ-CONFORM-TRACE): not into the checkout."""
    monkeypatch.chdir(tmp_path)


def conform(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["conform", *args])
    return result.exit_code, result.output


def test_declared_policies_are_the_models() -> None:
    """AD-AMQ-POLICY → the model's parameters; an x-renewal or x-unbounded window is
    not compared (AD-AMQ-CONFORM-COMPARE); a policy without a parameter is refused."""
    ref = model_policy(
        {
            "credit": {"policy": "manual"},
            "window": {"policy": "fixed", "window": 3, "threshold": 1},
        },
        {"message_frames": 2},
    )
    assert (ref.credit, ref.window, ref.frames, ref.uncompared) == (None, WindowFixed(3, 1), 2, ())
    rhea = model_policy(
        {
            "credit": {"policy": "window", "window": 4, "threshold": 3},
            "window": {"policy": "ring", "slots": 2, "x-renewal": "…"},
        },
        {},
    )
    assert rhea.credit == CreditWindow(4, 3) and rhea.window == WindowRing(2)
    assert set(rhea.uncompared) == {"incoming_window", "remote_incoming_window"}
    proton = model_policy(
        {"credit": {"policy": "manual"}, "window": {"policy": "x-unbounded", "window": 7}}, {}
    )
    assert proton.window == WindowNever(7)
    with pytest.raises(PolicyError):
        model_policy({"credit": {"policy": "by-magic"}, "window": {"policy": "fixed"}}, {})


def test_sizes_are_chosen_from_what_the_adapter_offers() -> None:
    """AD-AMQ-CONFORM-SIZES."""
    assert settings_choices({"settings": {"max_frame_size": 0}}) == [{}]
    rhea = settings_choices({"settings": {"session_buffer_size": 1, "credit_window": 1}})
    assert {"session_buffer_size": 2, "credit_window": 0} in rhea and len(rhea) == 4


def test_the_reference_is_conformant_up_to_depth_3_and_random_runs() -> None:
    """AD-AMQ-CONFORM-EXPLORE, AD-AMQ-CONFORM-HYPOTHESIS on the reference: exit 0."""
    result = run_amqp_conform(
        amqp_adapter_factory("amqp-reference"),
        AmqpConformOptions(seed=1, max_examples=15, steps=15, depth=3),
    )
    assert result.failure is None and result.run is None, result.run
    assert result.exit_code == 0 and [p.name for p in result.phases] == [
        "explorer-runs",
        "hypothesis-runs",
    ]
    assert all(p.ops > 0 for p in result.phases)


def test_a_drain_ended_by_transfers_is_over_on_the_reference(reference: AmqpAdapter) -> None:
    """AD-AMQ-CONFORM-OPS: the run conform first found on the reference (its receiver kept
    asking for a drain that transfers had ended, AMQ-LINK-DRAIN) now agrees."""
    run = run_ops(reference, REFERENCE_SIZES[0], [T, D1, F1, DONE])
    assert run.verdict == "pass", run


#: AD-AMQ-REFERENCE mutants: the verdict and the length of the shortest catching trace.
MUTANTS = {
    "delta-credit": ("diverged", 2),
    "per-frame-count": ("diverged", 3),
    "missed-drain-echo": ("diverged", 2),
    "no-serial-wrap": ("diverged", 3),
    "window-never-renewed": ("diverged", 3),
    "ignores-credit": ("diverged", 1),
    "double-grant": ("diverged", 1),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_is_caught_with_its_shortest_trace(mutant: str) -> None:
    """AD-AMQ-CONFORM-EXPLORE: breadth-first, so no shorter op sequence fails."""
    verdict, length = MUTANTS[mutant]
    result = run_amqp_conform(
        amqp_adapter_factory(f"amqp-reference:mutant:{mutant}"),
        AmqpConformOptions(seed=1, depth=3, phases=("explorer-runs",)),
    )
    assert result.run is not None and result.run.verdict == verdict, result
    assert len(result.run.ops) == length and result.run.index == length - 1
    assert result.exit_code == 1


def test_hypothesis_runs_shrink_a_mutant_to_one_op() -> None:
    """AD-AMQ-CONFORM-HYPOTHESIS: Hypothesis then delta debugging (shrink_sequence)."""
    result = run_amqp_conform(
        amqp_adapter_factory("amqp-reference:mutant:double-grant"),
        AmqpConformOptions(seed=3, max_examples=20, steps=12, phases=("hypothesis-runs",)),
    )
    assert result.run is not None and len(result.run.ops) == 1
    assert str(result.run.ops[0]) in ("flow 1", "flow 2", "drain 1")
    assert result.found_by == "hypothesis-runs"


def test_a_policy_that_stalls_is_a_property_violation(reference: AmqpAdapter) -> None:
    """AD-AMQ-CONFORM-PROPERTY, AD-AMQ-CONFORM-VERDICT: a window of 3 renewed at 0 with
    2-frame messages leaves 1 frame of window and no arrival to renew it: the reference
    stalls and so does the model with the same policy (its state agrees): exit 12."""
    stalling = {"window": 3, "threshold": 0, "message_frames": 2, "initial_delivery_count": 0}
    run = run_ops(reference, stalling, [T, T, F1, F2])
    assert run.verdict == "property" and not run.diffs
    assert [v.rule for v in run.violations] == ["stall"]
    # the same ops with a threshold that renews in time pass
    assert run_ops(reference, REFERENCE_SIZES[2], [T, T, F1, F2]).verdict == "pass"


def test_cli_mutant_diverges_with_the_trace_and_json() -> None:
    """AD-AMQ-CONFORM-VERDICT through `creditflow conform` (exit 1)."""
    code, out = conform(
        "--adapter", "amqp-reference:mutant:delta-credit", "--seed", "1", "--depth", "2"
    )
    assert code == 1, out
    assert "DIVERGENCE found by explorer-runs" in out
    assert "  >  2  flow 1" in out and "sender.credit" in out
    code, out = conform(
        "--adapter", "amqp-reference:mutant:ignores-credit", "--seed", "1", "--json"
    )
    doc = json.loads(out.splitlines()[-1])
    assert (code, doc["verdict"], doc["run"]["ops"]) == (1, "divergence", ["transfer"])
    assert {v["rule"] for v in doc["run"]["violations"]} == {"no-credit", "over-delivery"}


def test_cli_rhea_3_0_5_missing_drain_echo_and_ring_stall() -> None:
    """The pinned rhea's known findings: the drain echo never sent (exit 1,
    drain-unanswered) and, looking past drains, its ring stalls while the model with
    the same ring policy agrees (exit 12)."""
    code, out = conform("--adapter", "rhea@3.0.5", "--seed", "1", "--depth", "2")
    assert code == 1, out
    assert "conform: rhea@3.0.5, seed 1" in out and "property drain-unanswered" in out
    assert "     1  drain 1\n  >  2  drained" in out
    # the first finding only (FIND-EVERY's cap): the stall, the model agreeing (exit 12)
    args = ("--seed", "1", "--depth", "3", "--skip-op", "drain", "--max-findings", "1")
    code, out = conform("--adapter", "rhea", *args)
    assert code == 12, out
    assert "PROPERTY VIOLATED" in out and "property stall (L)" in out
    assert "FINDING   contract PROP-AMQ-NO-STALL" in out


def test_cli_proton_grant_during_a_drain_cancels_it() -> None:
    """The pinned proton 0.40.0: `flow(n)` while a drain is asked sends drain=false — a
    choice §2.7.4 leaves to the receiver, declared by the adapter (AMQ-POL-GRANT-DRAIN,
    FIND-POLICY-DECLARED) and made by the model too: conformant (exit 0)."""
    code, out = conform("--adapter", "proton", "--seed", "1", "--depth", "3")
    assert code == 0, out
    assert "proton 0.40.0" in out and "CONFORMANT" in out and "FINDING" not in out


def test_cli_proton_without_drains_is_conformant() -> None:
    """proton 0.40.0 with transfers, grants and settles only: exit 0."""
    code, out = conform(
        *seeded_amqp_conform("proton", depth=3, max_examples=10),
        "--skip-op",
        "drain",
        "--skip-op",
        "drained",
    )
    assert code == 0, out
    assert "CONFORMANT" in out


def test_cli_a_release_that_cannot_be_installed_is_exit_3() -> None:
    """AD-AMQ-VERSION through conform: one line, exit 3."""
    code, out = conform("--adapter", "rhea@0.0.0-no-such-release", "--seed", "1")
    assert code == 3, out
    assert out.count("\n") <= 2 and "rhea@0.0.0-no-such-release" in out


def test_cli_net_phases_and_options_are_refused_for_amqp() -> None:
    code, out = conform("--adapter", "amqp-reference", "--phase", "batched-ops")
    assert code == 2 and "not a phase of AMQP adapters" in out
    code, out = conform("--adapter", "reference", "--skip-op", "drain")
    assert code == 2 and "AMQP adapters only" in out


def test_cli_rhea_2_0_8_missing_drain_echo() -> None:
    """rhea 2.0.8 from the version cache (AD-AMQ-VERSION): the drain echo is missing
    there too (exit 1); its fixed 2048-slot ring is not offered as a size."""
    code, out = conform("--adapter", "rhea@2.0.8", "--seed", "1", "--depth", "2")
    assert code == 1, out
    assert "(sizes: credit_window 0)" in out and "property drain-unanswered" in out


def test_rhea_held_delivery_pins_the_ring_and_the_model_agrees() -> None:
    """rhea 3.0.5's held-delivery ring stall (amqp/rhea#452) as a property verdict
    (AD-AMQ-CONFORM-PROPERTY): with credit by hand and a ring of 3, settling the second
    delivery while the first is held frees no slot, 2 messages wait with credit 3; the
    model's ring policy is in the same state (exit 12). proton with the same ops passes."""
    ops = [F2, F2, F2, T, T, T, T, T, S1K1, S1K1]
    rhea = amqp_adapter_factory("rhea@3.0.5")()
    try:
        run = run_ops(
            rhea, {"session_buffer_size": 3, "outgoing_buffer_size": 64, "credit_window": 0}, ops
        )
    finally:
        rhea.close()
    assert run.verdict == "property" and not run.diffs and run.index == 8
    assert [v.rule for v in run.violations] == ["stall"]
    proton = amqp_adapter_factory("proton")()
    try:
        assert run_ops(proton, {}, ops).verdict == "pass"
    finally:
        proton.close()
