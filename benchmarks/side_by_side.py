"""Run one benchmark script on an older commit and on the work tree, side by side in one
run, and print the ratios (the machine is shared and noisy: only ratios measured
together mean anything).

    .venv/bin/python benchmarks/side_by_side.py OLD_COMMIT benchmarks/explorer_bench.py \
        [--rounds 2] [-- script args]

The old commit is unpacked and made importable as ``creditflow`` by
:func:`sides.old_tree` (the helper of the deadlock and scaling benchmarks); the editable
install's finder is taken out of ``sys.meta_path`` for that side, so each side runs its
*own* copy of the script with its own import paths. Rounds alternate old/new. Lines of
the form the explorer and scaling benchmarks print (``case … states … seconds …``) are
matched by case and compared.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import sides  # the old commit as an importable tree, shared with the #13 benchmarks

ROOT = Path(__file__).resolve().parents[1]

BOOTSTRAP = """
import runpy, sys
sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in type(f).__name__.lower()
                    and 'editable' not in getattr(f, '__name__', '').lower()]
sys.path_hooks[:] = [h for h in sys.path_hooks if 'editable' not in repr(h).lower()]
sys.path.insert(0, {shim!r})
sys.argv = [{script!r}, *{args!r}]
runpy.run_path({script!r}, run_name='__main__')
"""

ROW = re.compile(
    r"^(?P<case>.+?)\s+(?P<mode>reduced|full|-)?\s*(?P<states>[\d,]+)\s+(?P<transitions>[\d,]+)"
    r"\s+(?P<seconds>\d+\.\d+)\b(?P<rest>.*)$"
)


def run_side(tree: Path, shim: Path | None, script: str, args: list[str]) -> str:
    if shim is None:
        argv = [sys.executable, str(tree / script), *args]
    else:
        code = BOOTSTRAP.format(shim=str(shim), script=str(tree / script), args=args)
        argv = [sys.executable, "-c", code]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tree, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {script} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def rows(output: str) -> dict[str, dict[str, str]]:
    found = {}
    for line in output.splitlines():
        m = ROW.match(line.strip())
        if m and not line.startswith("#"):
            key = f"{m['case'].strip()} {m['mode'] or ''}".strip()
            found[key] = m.groupdict()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("old", help="the older commit (e.g. d352253)")
    parser.add_argument("script", help="the benchmark script, relative to the repository")
    parser.add_argument("--rounds", type=int, default=2)
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:split])
    script_args = argv[split + 1 :]
    shim = sides.old_tree(opts.old)  # the old commit, importable as creditflow
    old_tree = shim.parent / "src"
    try:
        runs: dict[str, list[dict[str, dict[str, str]]]] = {"old": [], "new": []}
        for r in range(opts.rounds):
            for side in ("old", "new"):
                out = (
                    run_side(old_tree, shim, opts.script, script_args)
                    if side == "old"
                    else run_side(ROOT, None, opts.script, script_args)
                )
                label = opts.old if side == "old" else "work tree"
                print(f"## round {r + 1}, {side} ({label})")
                print(out.rstrip(), flush=True)
                runs[side].append(rows(out))
    finally:
        shutil.rmtree(shim.parent, ignore_errors=True)
    print(f"\n## old {opts.old} vs work tree: median seconds over {opts.rounds} rounds")
    print(f"{'case':44} {'old s':>8} {'new s':>8} {'new/old':>8}  same states and verdict")
    for key in runs["old"][0]:
        old = [float(r[key]["seconds"]) for r in runs["old"] if key in r]
        new = [float(r[key]["seconds"]) for r in runs["new"] if key in r]
        if not old or not new:
            continue
        same = all(
            (r_old[key]["states"], r_old[key]["rest"].split()[-1:])
            == (r_new[key]["states"], r_new[key]["rest"].split()[-1:])
            for r_old, r_new in zip(runs["old"], runs["new"], strict=True)
            if key in r_old and key in r_new
        )
        o, n = statistics.median(old), statistics.median(new)
        print(f"{key:44} {o:>8.2f} {n:>8.2f} {n / o if o else float('nan'):>8.2f}  {same}")


if __name__ == "__main__":
    main()
