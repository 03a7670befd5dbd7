"""The one signal policy under attack (SIG-POLICY, SIG-CHILDREN, SIG-Z3): SIGINT and
SIGTERM sent to a real ``creditflow`` process in the middle of check, conform, replay,
prove (inside a Z3 call), check while it settles with Z3, and accounts conform. Each
must exit 130 / 143 (never 1 or 10) with one line on stderr naming the signal (and the
seed where there is one), and leave no child or grandchild process behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hardening.helpers import (
    CF,
    ROOT,
    descendants,
    gone,
    hostile_adapter,
    one_error_line,
)

TRACE = ROOT / "conformance" / "corpus" / "credit_flow" / "cf13-disabled-0-0.itf.json"
ACCOUNTS = f"{sys.executable} -m creditflow.adapters.reference.accounts"


def _wait_for(condition, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "the command never got going"
        time.sleep(0.05)


def _policy_in_force(pid: int) -> bool:
    """Whether the command is running under SIG-POLICY: the process catches SIGTERM
    (Python alone does not) and the policy's watcher thread exists."""
    try:
        return _catches(pid, signal.SIGTERM) and len(list(Path(f"/proc/{pid}/task").iterdir())) > 1
    except OSError:
        return False


def _interrupt(tmp_path: Path, args: list[str], signum: int, ready) -> tuple[str, str, set]:
    """Start ``creditflow ARGS``, wait until ``ready(proc)``, send ``signum``; return
    stdout, stderr and the pids that were below it when the signal was sent."""
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen([*CF, *args], cwd=tmp_path, stdout=o, stderr=e)
        try:
            _wait_for(
                lambda: proc.poll() is not None or (_policy_in_force(proc.pid) and ready(proc))
            )
            assert proc.poll() is None, f"finished before the signal: {err.read_text()}"
            below = descendants(proc.pid)
            sent = time.monotonic()
            proc.send_signal(signum)
            code = proc.wait(timeout=20)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
    expected = 130 if signum == signal.SIGINT else 143
    assert code == expected, (code, err.read_text())
    assert took < 10
    line = one_error_line(err.read_text())
    assert line.startswith(f"creditflow: interrupted by {signal.Signals(signum).name}")
    assert gone(sorted(below)), "a child survived"
    return out.read_text(), line, below


def _after(seconds: float):
    """Ready once the policy has been in force for ``seconds``."""
    since: list[float] = []

    def ready(proc: subprocess.Popen) -> bool:
        since.append(time.monotonic())
        return since[-1] - since[0] > seconds

    return ready


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_check(tmp_path, signum):
    """SIG-POLICY: a long exploration stops with 130/143, not 1 or 10."""
    _, line, _ = _interrupt(
        tmp_path,
        [
            "check",
            "fanout",
            "--credit",
            "5,1",
            "--publishes",
            "400",
            "--no-reduction",
            "--no-symmetry",
        ],
        signum,
        _after(0.7),
    )
    assert "nothing was saved" in line


def test_conform_prints_its_seed_and_kills_adapter_and_grandchild(tmp_path):
    """SIG-POLICY, SIG-CHILDREN: the seed is printed at the start and in the line; the
    adapter and its grandchild are gone."""
    pidfile = tmp_path / "pids"
    out, line, below = _interrupt(
        tmp_path,
        ["conform", "--adapter-cmd", hostile_adapter("slow", pidfile)],
        signal.SIGTERM,
        lambda proc: pidfile.exists(),
    )
    seed = out.splitlines()[0].removeprefix("creditflow conform: seed ")
    assert seed.isdigit() and f"seed {seed} (rerun with --seed {seed})" in line
    pids = list(map(int, pidfile.read_text().split()))
    assert set(pids) <= below and gone(pids)


def test_replay_kills_the_adapter_group(tmp_path):
    """SIG-CHILDREN: SIGINT during replay: exit 130, adapter and grandchild gone."""
    pidfile = tmp_path / "pids"
    _, _, _ = _interrupt(
        tmp_path,
        ["replay", str(TRACE), "--adapter-cmd", hostile_adapter("slow", pidfile)],
        signal.SIGINT,
        lambda proc: pidfile.exists(),
    )
    assert gone(list(map(int, pidfile.read_text().split())))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_prove_interrupts_z3(tmp_path, signum):
    """SIG-Z3: a signal inside a long Z3 call ends it at once; no verdict, no trace."""
    out, _, _ = _interrupt(
        tmp_path,
        ["prove", "cycle3", "--credit", "2,1", "--publishes", "30", "--depth", "300"],
        signum,
        _after(1.5),
    )
    assert "result:" not in out and not (tmp_path / "counterexamples").exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_check_interrupts_its_settlement(tmp_path, signum):
    """SIG-Z3, EXP-SETTLE: `check` past its budget is proving (about 4 s of Z3 on this
    graph); a signal then ends it at once: 130/143, one line, no verdict, no trace."""
    out, _, _ = _interrupt(
        tmp_path,
        ["check", "cycle3", "--credit", "2,1", "--publishes", "30", "--max-states", "50", "--json"],
        signum,
        _after(2.0),
    )
    assert out == "" and not (tmp_path / "counterexamples").exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_while_starting(tmp_path, signum):
    """SIG-POLICY before the command runs (imports): one line, 130/143."""
    proc = subprocess.Popen(
        [*CF, "check", "cycle2"], cwd=tmp_path, stderr=subprocess.PIPE, text=True
    )
    _wait_for(lambda: proc.poll() is not None or _catches(proc.pid, signal.SIGTERM))
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 128 + signum
    assert one_error_line(err).startswith("creditflow: interrupted by")


def _catches(pid: int, signum: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    caught = int(
        next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16
    )
    return bool(caught & (1 << (signum - 1)))


def test_accounts_conform(tmp_path):
    """SIG-POLICY for accounts conform: 143, its seed, the adapter subprocess gone."""
    _, line, below = _interrupt(
        tmp_path,
        ["accounts", "conform", "--adapter-cmd", ACCOUNTS, "--runs", "1000000", "--seed", "7"],
        signal.SIGTERM,
        lambda proc: bool(descendants(proc.pid)) and time.sleep(0.5) is None,
    )
    assert "seed 7" in line and below


def test_a_command_stops_only_the_children_it_started():
    """SIG-CHILDREN: a command run in-process (as tests do, next to a module's broker)
    kills its own process groups on the way out, not those that were running before."""
    from creditflow.conformance.runtime import children
    from tests.hardening.helpers import alive, invoke

    before = children.track(subprocess.Popen(["sleep", "60"], start_new_session=True))
    try:
        pidfile = Path(f"/tmp/cf-hostile-{time.monotonic_ns()}")
        code, _, _ = invoke(
            "replay", str(TRACE), "--adapter-cmd", hostile_adapter("grandchild", pidfile)
        )
        assert code == 0
        assert gone(list(map(int, pidfile.read_text().split())))
        pidfile.unlink()
        assert alive(before.pid)
    finally:
        children.stop_group(before)
    assert gone([before.pid])
