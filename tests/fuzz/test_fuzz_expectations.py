"""Expectations with several bugs of one signature (AD-EXPECTATIONS-MATCH,
AD-EXPECTATIONS-MASK; issue 31, point 1): ports with two ``peer_down`` mistakes on
``credit_to`` (tests/expectation_ports.py), one of them listed; ``conform`` with seeds
drawn by Hypothesis must find the other one, never the listed one, and the port with the
listed mistake alone must pass. Derandomized, no example database: the same cases in
every run. Cost: ~40 s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from creditflow.adapters.registry import command_factory
from creditflow.conformance.differential.expected import divergence_signature
from creditflow.conformance.differential.session import check_trace
from tests.expectation_ports import BUGS, SPEC, port_command, write_trace
from tests.fuzz.hostile import fuzz_settings, run_cli

SEEDS = fuzz_settings(2)
#: (listed, second): both mistakes show on their own (``forgets-others`` erases what
#: ``lowers-others`` would lower: that pair is one bug seen from outside)
PAIRS = [
    ("keeps", "forgets-others"),
    ("forgets-others", "keeps"),
    ("keeps", "lowers-others"),
    ("lowers-others", "keeps"),
]


def _signature(folder: Path, bugs: tuple[str, ...], bug: str) -> list[str]:
    """The signature of ``bug``'s own trace on a port with ``bugs``."""
    with command_factory(port_command(folder, *bugs))() as adapter:
        divergence, _ = check_trace(adapter, SPEC, BUGS[bug])
    assert divergence is not None
    return sorted(divergence_signature(divergence).differences)


def _conform(folder: Path, bugs: tuple[str, ...], seed: int, *extra: str) -> tuple[int, dict]:
    known = folder / "known.json"
    result = run_cli(
        [
            "conform", "--adapter-cmd", port_command(folder, *bugs), "--seed", str(seed),
            "--expectations", str(known), "--out", "found", "--json", *extra,
        ],
        folder,
        ("found",),
    )  # fmt: skip
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize(("listed", "second"), PAIRS)
@SEEDS
@given(seed=st.integers(0, 2**32 - 1))
def test_a_listed_bug_never_hides_another_of_the_same_op_and_field(
    tmp_path_factory: pytest.TempPathFactory, listed: str, second: str, seed: int
) -> None:
    folder = tmp_path_factory.mktemp("port")
    write_trace(folder, listed, BUGS[listed])
    (folder / "known.json").write_text(json.dumps({"known_divergences": {listed: listed}}))
    both = (listed, second)
    listed_signature = _signature(folder, both, listed)
    assert listed_signature != _signature(folder, both, second)
    code, report = _conform(folder, both, seed)
    assert code == 1, report
    assert report["divergence"]["op"]["op"] == "peer_down"
    assert "credit_to" in report["divergence"]["fields"]
    assert report["divergence"]["signature"] != listed_signature
    # the listed mistake alone: conformant, the listed divergence met
    code, report = _conform(folder, (listed,), seed, "--phase", "batched-ops")
    assert code == 0, report
    (met,) = report["expected_divergences"]
    assert met["signature"] == listed_signature and met["runs"] > 0
