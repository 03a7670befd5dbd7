"""Start-up time (START-LAZY), side by side with an older commit in one run.

Each command runs in a fresh interpreter of this virtualenv; rounds interleave the two
sides and the commands, and each figure is the median over the rounds. A figure is the
wall-clock time from spawning the interpreter to its exit, and its cost is that minus a
bare interpreter's (``python -c pass``, timed in the same rounds):

* ``--help`` and ``presets``: ``creditflow --help`` / ``creditflow presets``;
* ``reference-server`` and ``python-template``: the adapter subprocess answers one
  ``hello`` and exits at the end of its input (what ``conform`` pays per adapter start).

    .venv/bin/python benchmarks/startup_bench.py [--old COMMIT] [--rounds 15]

The old side is ``git archive COMMIT`` made importable by :func:`sides.old_tree`.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

import sides  # the old commit as an importable tree

#: the commit before issue 22's fast start (points 3-5)
DEFAULT_OLD = "2ed868b"
HELLO = b'{"id":1,"op":"hello"}\n'

#: name -> (code run after the tree is chosen, stdin)
COMMANDS: dict[str, tuple[str, bytes]] = {
    "bare": ("pass", b""),
    "--help": (
        "sys.argv = ['creditflow', '--help']\nfrom creditflow.conformance.cli import main\nmain()",
        b"",
    ),
    "presets": (
        "sys.argv = ['creditflow', 'presets']\nfrom creditflow.conformance.cli import main\nmain()",
        b"",
    ),
    "reference-server": (
        "import runpy\nrunpy.run_module('creditflow.adapters.reference.server', "
        "run_name='__main__')",
        HELLO,
    ),
    "python-template": (
        "import runpy\nrunpy.run_module('creditflow.adapters.python_template', "
        "run_name='__main__')",
        HELLO,
    ),
}

#: how a side imports ``creditflow``: the editable install, or an old tree first on the path
CHOOSE_TREE = """import sys
root = {root!r}
if root:
    sys.meta_path[:] = [f for f in sys.meta_path
                        if 'editable' not in getattr(f, '__name__', type(f).__name__).lower()]
    sys.path.insert(0, root)
"""


def run_once(root: str | None, name: str) -> tuple[float, float]:
    """Wall-clock seconds from spawning the interpreter to its exit, and the CPU seconds
    (user + system) it used, which a loaded machine inflates less; fails loudly on a bad
    exit."""
    code, stdin = COMMANDS[name]
    argv = [sys.executable, "-c", code if name == "bare" else CHOOSE_TREE.format(root=root) + code]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode != 0 or (stdin and b'"ok":true' not in done.stdout):
        raise SystemExit(f"{name} ({root or 'this tree'}) failed: {done.stderr[-1000:]!r}")
    return seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default=DEFAULT_OLD, help="the baseline commit")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    old_root = str(sides.old_tree(args.old))
    sides_ = {"old": old_root, "new": None}
    wall: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for side, root in sides_.items():
            for name in COMMANDS:
                seconds, used = run_once(root, name)
                wall.setdefault((side, name), []).append(seconds)
                cpu.setdefault((side, name), []).append(used)
    print(f"start-up, median of {args.rounds} interleaved rounds (old = {args.old}, new = tree)")
    for title, times in (("wall-clock", wall), ("CPU (user + system)", cpu)):
        median = {key: statistics.median(values) for key, values in times.items()}
        bare = statistics.median([median[("old", "bare")], median[("new", "bare")]])
        print(f"\n{title} seconds; over bare = minus the bare interpreter's {bare:.3f} s")
        print(f"{'command':18} {'old':>7} {'new':>7} {'old over':>9} {'new over':>9} {'ratio':>6}")
        for name in COMMANDS:
            old, new = median[("old", name)], median[("new", name)]
            over_old, over_new = old - bare, new - bare
            ratio = over_old / over_new if name != "bare" and over_new > 0 else float("nan")
            print(f"{name:18} {old:7.3f} {new:7.3f} {over_old:9.3f} {over_new:9.3f} {ratio:6.1f}")
            row = {
                "measure": title,
                "command": name,
                "old_s": round(old, 4),
                "new_s": round(new, 4),
            }
            print(json.dumps(row))


if __name__ == "__main__":
    main()
