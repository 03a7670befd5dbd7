"""Issue 20's example cases for classes 1, 2, 4, 5, 9, 10 and 11, run against any
checkout: ``python tests/reliability_round3_cases.py PYTHON`` where PYTHON is the
interpreter of a virtualenv with creditflow installed (editable) from that checkout.
Prints one line per case (ok / FAIL) and the number that fail; used to compare main
with a branch side by side."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class Run:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def clean(self) -> bool:
        return "Traceback" not in self.err + self.out and "INTERNALERROR" not in self.out


def cli(python: str, args: list[str], cwd: Path, stdout: str = "pipe", **env: str) -> Run:
    """Run the program with stdout as ``pipe``, ``full``, ``gone`` or ``closed``, or
    stderr ``closed`` (``stderr-closed``)."""
    argv = [python, "-m", "creditflow.conformance.cli", *args]
    environ = {**os.environ, **env}
    if stdout in ("closed", "stderr-closed"):
        fd = "1" if stdout == "closed" else "2"
        argv = ["sh", "-c", f'exec "$@" {fd}>&-', "sh", *argv]
    out: int | None = subprocess.PIPE
    keep: list[int] = []
    if stdout == "full":
        out = os.open("/dev/full", os.O_WRONLY)
        keep.append(out)
    elif stdout == "gone":
        read_end, out = os.pipe()
        os.close(read_end)
        keep.append(out)
    elif stdout == "closed":
        out = None
    try:
        done = subprocess.run(
            argv, cwd=cwd, stdout=out, stderr=subprocess.PIPE, env=environ, timeout=300
        )
    finally:
        for fd in keep:
            os.close(fd)
    return Run(done.returncode, (done.stdout or b"").decode(errors="replace"), done.stderr.decode())


def hostile_graph(cwd: Path) -> str:
    doc = json.loads((HERE.parent / "spec/graphs/cycle2.json").read_text())
    evil = "B\ud800\x1b[31mX\nY"
    doc["nodes"][1]["id"] = evil
    for edge in doc["edges"]:
        for end in ("source", "target"):
            edge[end] = evil if edge[end] == "B" else edge[end]
    (cwd / "hostile.json").write_text(json.dumps(doc))
    return "hostile.json"


def hostile_timeline(cwd: Path) -> str:
    doc = json.loads((HERE.parent / "spec/alarms/two-sources.json").read_text())
    evil = "pub\x1b[2J\nlisher"
    doc["connections"][0]["name"] = evil
    for step in doc["steps"]:
        step["connection"] = (
            evil if step.get("connection") == "publisher" else step.get("connection")
        )
        if step["connection"] is None:
            del step["connection"]
    (cwd / "timeline.json").write_text(json.dumps(doc))
    return "timeline.json"


def expectations(cwd: Path, name: str) -> str:
    (cwd / "known.json").write_text(json.dumps({"known_divergences": {name: "why"}}))
    return "known.json"


def odd_trace(cwd: Path, mixed_keys: bool = False) -> str:
    """A corpus trace with a value that cannot be hashed as decoded before (a variant
    holding a list as a set member; a map with keys of two types as a map key)."""
    src = sorted((HERE.parent / "conformance/corpus/credit_flow").glob("cf2-*.itf.json"))[0]
    doc = json.loads(src.read_text())
    if mixed_keys:
        odd = {"#set": [{"#map": [[1, 2], ["a", 3]]}]}
        doc["states"][1]["state"]["credit_to"] = {"#map": [[odd, 1]]}
    else:
        doc["states"][1]["mbt::nondetPicks"]["odd"] = {"#set": [{"tag": "t", "value": [3]}]}
    (cwd / "corpus").mkdir(exist_ok=True)
    (cwd / "corpus" / "odd.itf.json").write_text(json.dumps(doc))
    return "corpus/odd.itf.json"


def no_edges(cwd: Path) -> str:
    doc = {
        "directed": True,
        "multigraph": False,
        "graph": {"name": "lone"},
        "nodes": [{"id": "a", "source": True, "publishes": 2}],
        "edges": [],
    }
    (cwd / "lone.json").write_text(json.dumps(doc))
    return "lone.json"


CONFORM = ["conform", "--adapter", "reference", "--seed", "1", "--max-examples", "2"]
CONFORM += ["--phase", "process-ops", "--out", "out"]


def pytest_run(python: str, cwd: Path, *args: str) -> Run:
    done = subprocess.run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def plugin_sigterm(python: str, cwd: Path) -> bool:
    shutil.copytree(HERE.parent / "conformance/corpus/credit_flow", cwd / "corpus")
    pidfile = cwd / "pids"
    adapter = f"{python} {HERE / 'hardening' / 'hostile_adapter.py'} slow {pidfile}"
    proc = subprocess.Popen(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "corpus"]
        + ["--creditflow-adapter-cmd", adapter],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    pids = [int(p) for p in pidfile.read_text().split()] if pidfile.exists() else []
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    time.sleep(3)
    alive = [p for p in pids if Path(f"/proc/{p}").exists()]
    for p in alive:
        os.kill(p, signal.SIGKILL)
    return bool(pids) and not alive


def cases(python: str) -> list[tuple[str, Callable[[Path], bool]]]:
    def c(args: list[str], stdout: str = "pipe", **env: str) -> Callable[[Path], Run]:
        return lambda cwd: cli(python, args, cwd, stdout, **env)

    def verdict(run: Callable[[Path], Run], code: int) -> Callable[[Path], bool]:
        def check(cwd: Path) -> bool:
            r = run(cwd)
            return r.code == code and r.clean()

        return check

    def usage(args: Callable[[Path], list[str]]) -> Callable[[Path], bool]:
        def check(cwd: Path) -> bool:
            r = cli(python, args(cwd), cwd)
            return r.code == 2 and r.clean() and len(r.err.strip().splitlines()) == 1

        return check

    def no_raw(args: Callable[[Path], list[str]], code: int) -> Callable[[Path], bool]:
        def check(cwd: Path) -> bool:
            r = cli(python, args(cwd), cwd)
            return r.code == code and r.clean() and not RAW_CONTROL.search(r.out)

        return check

    hostile_hello = f"{python} {HERE / 'hardening' / 'hostile_adapter.py'} hostile-name"
    return [
        ("1 check --json > /dev/full: 10", verdict(c(["check", "cycle2", "--json"], "full"), 10)),
        ("1 check, reader gone: 10", verdict(c(["check", "cycle2"], "gone"), 10)),
        ("1 check >&-: 10", verdict(c(["check", "cycle2"], "closed"), 10)),
        ("1 check 2>&-: 10", verdict(c(["check", "cycle2"], "stderr-closed"), 10)),
        ("1 presets, reader gone: 5", verdict(c(["presets"], "gone"), 5)),
        ("1 paging > /dev/full: 5", verdict(c(["paging", "small-embedded"], "full"), 5)),
        ("1 alarms > /dev/full: 5", verdict(c(["alarms", "run", "two-sources"], "full"), 5)),
        (
            "1 accounts check > /dev/full: 5",
            verdict(c(["accounts", "check", "seed-small"], "full"), 5),
        ),
        ("1 conform > /dev/full: 5", verdict(c(CONFORM, "full"), 5)),
        ("1 conform >&-: 5", verdict(c(CONFORM, "closed"), 5)),
        (
            "2 surrogate node id: 10, no traceback",
            lambda cwd: verdict(c(["check", hostile_graph(cwd)]), 10)(cwd),
        ),
        (
            "2 escapes in a node id not raw",
            no_raw(lambda cwd: ["check", hostile_graph(cwd), "--no-prove"], 10),
        ),
        (
            "2 escapes in a connection name not raw",
            no_raw(lambda cwd: ["alarms", "run", hostile_timeline(cwd)], 0),
        ),
        (
            "2 escapes in an adapter's hello not raw",
            no_raw(
                lambda cwd: [
                    "conform",
                    "--adapter-cmd",
                    hostile_hello,
                    *CONFORM[3:],
                ],
                0,
            ),
        ),
        *(
            (
                f"4 check --prove-timeout {v}: 2",
                usage(lambda cwd, v=v: ["check", "cycle2", "--prove-timeout", v]),
            )
            for v in ("nan", "inf", "1e308")
        ),
        (
            "4 accounts check --limit 10**23: 2",
            usage(lambda cwd: ["accounts", "check", "seed-small", "--limit", str(10**23)]),
        ),
        ("4 conform --seed of 19 digits: 2", usage(lambda cwd: [*CONFORM[:3], "1" * 19])),
        (
            "4 plugin --creditflow-timeout nan: usage error",
            lambda cwd: (
                pytest_run(
                    python, cwd, "--creditflow-adapter", "reference", "--creditflow-timeout", "nan"
                ).code
                == 4
            ),
        ),
        *(
            (
                f"5 expectation name {n!r}: one line, exit 2",
                usage(
                    lambda cwd, n=n: [
                        *CONFORM,
                        "--expectations",
                        expectations(cwd, n),
                    ]
                ),
            )
            for n in ("/x", "**", "a**b", "cf4*")
        ),
        (
            "5 replay-corpus --glob a**b: one line, exit 2",
            usage(lambda cwd: ["replay-corpus", str(HERE.parent / "spec"), "--glob", "a**b"]),
        ),
        (
            "9 replay a trace with list set members: no traceback",
            lambda cwd: cli(
                python, ["replay", odd_trace(cwd), "--adapter", "reference"], cwd
            ).clean(),
        ),
        (
            "9 replay a trace with a mixed-key map as a key: no traceback",
            lambda cwd: cli(
                python, ["replay", odd_trace(cwd, mixed_keys=True), "--adapter", "reference"], cwd
            ).clean(),
        ),
        (
            "9 the plugin on that trace: no traceback",
            lambda cwd: (
                "Traceback"
                not in pytest_run(
                    python, cwd, odd_trace(cwd), "--creditflow-adapter", "reference"
                ).out.replace("Traceback (most recent call last)", "Traceback")
            ),
        ),
        (
            "10 conform --out out: nothing else in the folder",
            lambda cwd: (
                cli(python, CONFORM, cwd).code == 0
                and sorted(p.name for p in cwd.iterdir()) in ([], ["out"])
            ),
        ),
        ("10 plugin SIGTERM: adapter stopped", lambda cwd: plugin_sigterm(python, cwd)),
        (
            "10 plugin unbalanced quote: usage error",
            lambda cwd: pytest_run(python, cwd, "--creditflow-adapter-cmd", "python3 'x").code == 4,
        ),
        ("10 synth without edges: 2", lambda cwd: usage(lambda _: ["synth", no_edges(cwd)])(cwd)),
        (
            "11 observe reads ERL_EPMD_PORT (99999 refused as a port)",
            lambda cwd: (lambda r: r.code == 2 and "epmd" in r.err.lower() and r.clean())(
                cli(
                    python,
                    ["observe", "snapshot", "--node", "a@b", "--cookie-file", "/dev/null"],
                    cwd,
                    ERL_EPMD_PORT="99999",
                )
            ),
        ),
    ]


def main() -> int:
    python = sys.argv[1] if len(sys.argv) > 1 else sys.executable
    failed = 0
    all_cases = cases(python)
    for name, check in all_cases:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                ok = check(Path(tmp))
            except Exception as exc:  # a case that cannot even run counts as failing
                ok = False
                name += f" ({type(exc).__name__})"
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}", flush=True)
    print(f"{failed} of {len(all_cases)} cases fail")
    return 0


if __name__ == "__main__":
    sys.exit(main())
