"""Reading a file with one long string (IN-LINEAR), OLD commit vs this tree, in one run.

Each case reads one file in its own process on each side (``sides.py``): an
``advanced.config`` whose ``kernel`` setting is a string of N MB, plain (``config``) or
one escape ``\\n`` in three characters (``config-escapes``), read by
``load_credit_config`` (IN-READ, IN-ERLANG-TERMS, IN-CONFIG-KEYS); and a JSON file with
a string of N MB, one escape in two characters, read by ``load_json`` (IN-READ,
IN-DEPTH: the graph files' reader). The file is written in 1 MB pieces, so the process
never held it before the read. Figures: wall seconds of the read, and the process's
peak resident set (``ru_maxrss``) above its peak after the imports. The old side runs
only the sizes it survives on a shared machine (hundreds of bytes per character); the
new side also runs issue 30's 30 MB string (target: at most 5 s and 300 MB).

    .venv/bin/python benchmarks/long_string_bench.py [--old main] [--quick]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sides import add_side_options, old_tree, ran_as_worker, run_side, use_tree  # noqa: E402

OLD_SIZES_MB = (0.25, 1.0)
NEW_ONLY_SIZES_MB = (30.0,)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(args: argparse.Namespace) -> None:
    use_tree(args.root)
    from creditflow.conformance.inputs.rabbitmq_config import load_credit_config
    from creditflow.conformance.inputs.reading import load_json

    chars = int(args.mb * 1024 * 1024)
    base = _peak_mb()
    with tempfile.TemporaryDirectory() as folder:
        if args.kind.startswith("config"):
            unit, head = ("a\\n", 3) if args.kind == "config-escapes" else ("a", 1)
            path = Path(folder) / "advanced.config"
            prefix, suffix = '[{kernel, [{banner, "', '"}]},\n {rabbit, []}].\n'
            read: Callable[[Path], object] = load_credit_config
        else:
            unit, head = "a\\n", 3
            path = Path(folder) / "graph.json"
            prefix, suffix = '{"label": "', '", "nodes": []}'
            read = load_json
        piece = unit * (min(chars, 1024 * 1024) // head)
        with path.open("w", encoding="utf-8") as f:
            f.write(prefix)
            for _ in range(max(1, chars // len(piece))):
                f.write(piece)
            f.write(suffix)
        start = time.perf_counter()
        read(path)
        seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "peak_mb": _peak_mb() - base}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_side_options(parser)
    parser.set_defaults(old="main")
    parser.add_argument(
        "--kind", choices=("config", "config-escapes", "json"), help=argparse.SUPPRESS
    )
    parser.add_argument("--mb", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="only the smallest old size")
    args = parser.parse_args()
    if ran_as_worker(args, worker):
        return
    root = old_tree(args.old)
    old_sizes = OLD_SIZES_MB[:1] if args.quick else OLD_SIZES_MB
    script = "benchmarks/long_string_bench.py"
    header = f"{'file':14} {'MB':>5} {'old s':>7} {'new s':>7} {'old MB':>8} {'new MB':>8}"
    print(header + f" {'mem ratio':>9}")
    for kind in ("config", "config-escapes", "json"):
        for mb in (*old_sizes, *NEW_ONLY_SIZES_MB):
            size = ["--kind", kind, "--mb", str(mb)]
            (new,) = run_side(None, script, size)
            if mb in old_sizes:
                (old,) = run_side(root, script, size)
                ratio = old["peak_mb"] / max(new["peak_mb"], 0.1)
                print(
                    f"{kind:14} {mb:5.2f} {old['seconds']:7.2f} {new['seconds']:7.2f} "
                    f"{old['peak_mb']:8.1f} {new['peak_mb']:8.1f} {ratio:8.1f}x"
                )
            else:
                print(
                    f"{kind:14} {mb:5.2f} {'(skip)':>7} {new['seconds']:7.2f} "
                    f"{'(skip)':>8} {new['peak_mb']:8.1f} {'':>9}"
                )


if __name__ == "__main__":
    main()
