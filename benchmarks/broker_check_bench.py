"""Issue 21's broker (point 1, "the right engine for the question"), side by side with an
old commit: ``creditflow check`` time, peak memory, exit code and claim per case.

The sweep's broker family (SW-BROKER): 2 readers x 2 channels x 3 queues, a mirror of
queue0 fed by channel0.0 with 3.10.8's double debit, one msg_store; 3 publishes per
reader; credits ``{2,1}``, ``{1,1}``, ``{2,2}``, ``{3,1}``. Each case is asked twice: the
issue's question (``--publishes 3``, where SCOPE-BOUNDED-PROOF now lets the proof answer)
and the default (every supply). Runs use :mod:`realsettings_bench`'s measured
subprocesses (peak RSS by ``wait4``; stopped after ``--limit`` seconds).

    .venv/bin/python benchmarks/broker_check_bench.py --old 1cf0631 [--limit 120]
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

from realsettings_bench import measured_options, measured_row, print_table
from sides import old_tree

CREDITS = ((2, 1), (1, 1), (2, 2), (3, 1))


def broker_file(folder: Path, credit: tuple[int, int]) -> str:
    """The issue's broker as a node-link file with ``credit`` and 3 publishes a reader."""
    import networkx as nx

    from creditflow.conformance.sweep.families import FAMILY_KINDS

    kind = FAMILY_KINDS["broker"]
    params = {**kind.defaults(), "readers": 2, "channels_per_reader": 2, "queues": 3}
    g = kind.build(params, random.Random(0))
    g.add_node("queue0.mirror0", role="rabbit_mirror_queue_slave")
    g.add_edge("channel0.0", "queue0.mirror0", sends_per_message=2)
    for _, data in g.nodes(data=True):
        if data.get("source"):
            data["publishes"] = 3
    name = f"broker-{credit[0]}-{credit[1]}"
    g.graph.update(name=name, credit=list(credit))
    path = folder / f"{name}.json"
    path.write_text(json.dumps(nx.node_link_data(g, edges="links")))
    return str(path)


def main() -> None:
    args = measured_options(__doc__)
    old = old_tree(args.old)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for credit in CREDITS:
            path = broker_file(folder, credit)
            for question, extra in (("--publishes 3", ["--publishes", "3"]), ("every", [])):
                case = f"{{{credit[0]},{credit[1]}}} {question}"
                for side, root in (("new", None), ("old", old)):
                    rows.append(measured_row(root, [path, *extra], args.limit, folder, case, side))
    print_table(rows, case_width=22, side_width=5, lengths=False)


if __name__ == "__main__":
    main()
