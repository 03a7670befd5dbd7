"""Write failures of every kind on a real file system, for every command that writes
(OUT-FAILURE, OUT-EXIT): a full disk (a 4 KiB tmpfs), a read-only mount, a file-size
limit (RLIMIT_FSIZE), an output folder that is a regular file. The verdict is always
printed first; the trace is printed on stdout; stderr is one line; the exit code is the
verdict's, or 5 when the verdict was 0.

The mounts are made in a private user and mount namespace (``unshare -rm``, util-linux),
so the tests need no privileges and change nothing outside themselves."""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hardening.helpers import CF, DOCUMENTED, ROOT, invoke, one_error_line, run

ACCOUNTS_SERVER = f"{sys.executable} -m creditflow.adapters.reference.accounts"


def _in_mount(options: str, folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``creditflow ARGS`` with a fresh tmpfs (``options``) mounted on ``folder``."""
    unshare = shutil.which("unshare")
    assert unshare, "the write-failure tests need util-linux's unshare"
    folder.mkdir(exist_ok=True)
    script = 'mount -t tmpfs -o "$1" tmpfs "$2" && shift 2 && exec "$@"'
    return subprocess.run(
        [unshare, "-rm", "sh", "-c", script, "sh", options, str(folder), *CF, *args],
        cwd=folder.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("options", ["size=4k", "ro"], ids=["full-disk", "read-only"])
def test_check_on_a_full_or_read_only_disk_still_prints_the_verdict(tmp_path, options):
    """OUT-FAILURE: ENOSPC / EROFS while writing the trace: verdict, trace on stdout,
    one line naming the file, exit 10 (the verdict's)."""
    done = _in_mount(options, tmp_path / "counterexamples", "check", "cycle2", "--credit", "1,1")
    assert done.returncode == 10, done.stderr
    line = one_error_line(done.stderr)
    reason = "No space left on device" if options.startswith("size") else "Read-only file system"
    assert "could not write counterexamples" in line and reason in line
    assert "PROP-NO-DEADLOCK (blocked-forever) in 4 steps" in done.stdout
    assert "TRACE NOT WRITTEN" in done.stdout and '"#meta"' in done.stdout


def test_file_size_limit_while_writing(tmp_path):
    """OUT-FAILURE: RLIMIT_FSIZE (EFBIG) on the trace; the picture is still written."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (4000, 4000))

    done = run("check", "cycle2", "--credit", "1,1", cwd=tmp_path, preexec_fn=limit)
    assert done.returncode == 10
    line = one_error_line(done.stderr)
    assert "File too large" in line and "cycle2.itf.json" in line
    assert "PROP-NO-DEADLOCK" in done.stdout and "TRACE NOT WRITTEN" in done.stdout
    assert (tmp_path / "counterexamples" / "cycle2.dot").exists()
    assert not (tmp_path / "counterexamples" / "cycle2.itf.json").exists()
    assert not list(tmp_path.rglob(".cf-*"))


def test_conform_divergence_is_not_lost_on_an_unwritable_out(tmp_path, monkeypatch):
    """OUT-FAILURE: `conform --out` unwritable (under a regular file) finds a divergence:
    it is printed with the trace on stdout; exit 1 (the verdict's)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain").write_text("")
    code, out, err = invoke(
        "conform",
        "--adapter",
        "mutant:ack-off-by-one",
        "--seed",
        "1",
        "--max-examples",
        "50",
        "--phase",
        "process-ops",
        "--out",
        "plain/traces",
    )
    assert code == 1, out + err
    assert "DIVERGENCE found by" in out and "TRACE NOT WRITTEN" in out
    assert "is not a folder" in one_error_line(err)


def test_accounts_conform_divergence_is_not_lost(tmp_path, monkeypatch):
    """OUT-FAILURE for accounts conform (its --trace-out under a regular file)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("")
    code, out, err = invoke(
        "accounts",
        "conform",
        "--adapter-cmd",
        f"{ACCOUNTS_SERVER} --mutant strict-check",
        "--trace-out",
        "file/t.itf.json",
    )
    assert code == 1
    assert "DIVERGENCE after" in out and "TRACE NOT WRITTEN" in out
    assert "is not a folder" in one_error_line(err)


def test_demo_into_a_regular_file_exits_5_after_the_table(tmp_path):
    """OUT-EXIT: demo's verdict is 0, so a write failure gives 5, after the table."""
    done = _in_mount("ro", tmp_path / "out", "demo", "--family", "credit_flow", "--out", "out")
    assert done.returncode == 5 and done.returncode in DOCUMENTED
    assert "cycle2" in done.stdout and "NOT WRITTEN" in done.stdout
    line = one_error_line(done.stderr)
    assert line.startswith("creditflow: error: could not write out") and "more files" in line
    assert (ROOT / "README.md").read_text().count("| 5 |") == 1
