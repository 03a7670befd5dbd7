"""Issue #14 for ``conform``: capabilities declared in hello (AD-CAPABILITIES), known
divergences (AD-EXPECTATIONS-CONFORM), reproducible output (AD-REPRODUCE)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.inputs.expectations import shipped_expectations

REPO = Path(__file__).resolve().parent.parent


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _adapter_file(tmp_path: Path, body: str) -> str:
    path = tmp_path / "port.py"
    path.write_text(
        "from creditflow.adapters.python_template import Adapter, CreditFlowProcess, main\n"
        + body
        + "\nif __name__ == '__main__':\n    main(Port)\n",
        encoding="utf-8",
    )
    return shlex.join([sys.executable, str(path)])


def test_conform_with_expectations_reports_the_known_divergence(tmp_path: Path) -> None:
    """AD-EXPECTATIONS-CONFORM: a port with one known deviation (peer_down without
    unblock) passes conform in CI with its expectations file; the deviation is reported
    as expected."""
    code, out, _ = invoke(
        "conform",
        "--adapter",
        "mutant:peer-down-no-unblock",
        "--seed",
        "1",
        "--max-examples",
        "30",
        "--out",
        str(tmp_path),
        "--expectations",
        str(shipped_expectations("mutant-peer-down-no-unblock")),
        "--json",
    )
    report = json.loads(out)
    assert code == 0, report
    assert report["verdict"] == "conformant"
    met = {e["trace"]: e for e in report["expected_divergences"]}
    assert met["cf4-channel-blocked-on-dead-queue"]["op"] == "peer_down"
    assert sum(e["runs"] for e in met.values()) > 0  # the search did meet it
    assert not list(tmp_path.iterdir())  # nothing failed, nothing written


def test_conform_with_expectations_still_fails_on_an_unexpected_divergence(
    tmp_path: Path,
) -> None:
    """AD-EXPECTATIONS-CONFORM, AD-EXPECTATIONS-MATCH: the expectations cover only their
    own divergence: the same deviation plus an ack bug exits 1 with a divergence the
    file does not list. (On this port the listed traces first diverge at an ack, so the
    file stands for the late ack's divergence, and the peer_down one is the new one.)"""
    cmd = _adapter_file(
        tmp_path,
        """
from creditflow.adapters.mutants.peer_down_no_unblock import Process as NoUnblock
from creditflow.adapters.mutants.ack_off_by_one import Process as AckOffByOne

class Process(NoUnblock, AckOffByOne):
    pass

class Port(Adapter):
    name = "port with two faults"
    process_class = Process
""",
    )
    code, out, _ = invoke(
        "conform",
        "--adapter-cmd",
        cmd,
        "--seed",
        "1",
        "--max-examples",
        "60",
        "--out",
        str(tmp_path / "out"),
        "--phase",
        "process-ops",
        "--expectations",
        str(shipped_expectations("mutant-peer-down-no-unblock")),
        "--json",
    )
    report = json.loads(out)
    assert code == 1, report
    listed = [e["signature"] for e in report["expected_divergences"]]
    assert {e["op"] for e in report["expected_divergences"]} == {"ack"}
    assert report["divergence"]["signature"] not in listed
    assert report["divergence"]["op"]["op"] == "peer_down"


def test_conform_unexpected_pass_exits_1(tmp_path: Path) -> None:
    """AD-EXPECTATIONS-CONFORM: a listed trace that passes (the reference model) is an
    unexpected pass: exit 1, so the file is kept true."""
    code, out, _ = invoke(
        "conform",
        "--adapter",
        "reference",
        "--seed",
        "1",
        "--max-examples",
        "5",
        "--phase",
        "process-ops",
        "--out",
        str(tmp_path),
        "--expectations",
        str(shipped_expectations("mutant-peer-down-no-unblock")),
    )
    assert code == 1
    assert "XPASS     cf4-channel-blocked-on-dead-queue" in out


def test_conform_bad_expectations_exit_2(tmp_path: Path) -> None:
    """AD-EXPECTATIONS-CONFORM: a listed trace that exists nowhere: one line, exit 2."""
    bad = tmp_path / "known.json"
    bad.write_text(json.dumps({"known_divergences": {"no-such-trace": "x"}}))
    code, _, err = invoke(
        "conform", "--adapter", "reference", "--seed", "1", "--expectations", str(bad)
    )
    assert code == 2
    assert "no-such-trace" in err and len(err.strip().splitlines()) == 1


def test_capabilities_port_without_peer_down(tmp_path: Path) -> None:
    """AD-CAPABILITIES: a port declaring no peer_down in hello is never sent one; the
    report names the op as not exercised; the run is conformant."""
    cmd = _adapter_file(
        tmp_path,
        """
class Port(Adapter):
    name = "port without peer_down"
    ops = ("send", "ack", "bump", "block", "unblock", "state")
""",
    )
    code, out, _ = invoke(
        "conform",
        "--adapter-cmd",
        cmd,
        "--seed",
        "2",
        "--max-examples",
        "20",
        "--out",
        str(tmp_path / "o"),
        "--json",
    )
    report = json.loads(out)
    assert code == 0, report
    assert report["ops_not_exercised"] == ["peer_down"]
    code, out, _ = invoke(
        "conform",
        "--adapter-cmd",
        cmd,
        "--seed",
        "2",
        "--max-examples",
        "5",
        "--phase",
        "process-ops",
        "--out",
        str(tmp_path / "o"),
    )
    assert (
        "ops not exercised (not offered by the implementation, AD-CAPABILITIES): peer_down" in out
    )


def test_conform_output_reproduces_the_run(tmp_path: Path) -> None:
    """AD-REPRODUCE: found_by names the seed given with --seed, the JSON holds the
    default spec of the diverging ops, and the printed replay command (with every
    option that selects the implementation) reproduces the divergence."""
    code, out, _ = invoke(
        "conform",
        "--adapter",
        "mutant:ack-off-by-one",
        "--seed",
        "7",
        "--max-examples",
        "30",
        "--timeout",
        "20",
        "--out",
        str(tmp_path),
        "--json",
    )
    report = json.loads(out)
    assert code == 1
    assert report["found_by"].endswith("seed 7)")
    spec = report["divergence"]["spec"]
    assert isinstance(spec, list) and len(spec) == 2
    argv = shlex.split(report["replay"])
    assert argv[:2] == ["creditflow", "replay"] and "--timeout" in argv
    code, out, _ = invoke(*argv[1:], "--json")
    assert code == 1 and json.loads(out)["counts"]["diverged"] == 1


def test_empty_rabbitmq_ebin_is_one_line_without_install_hint(tmp_path: Path) -> None:
    """AD-RABBITMQ: an ebin folder without credit_flow.beam: one line saying so, exit 2."""
    code, _, err = invoke("conform", "--adapter", "rabbitmq", "--rabbitmq-ebin", str(tmp_path))
    assert code == 2
    assert err.strip() == (
        f"creditflow: error: --rabbitmq-ebin {tmp_path}: holds no "
        "credit_flow.beam (give the rabbit_common ebin folder that holds "
        "the credit_flow.beam to check)"
    )
