"""The README's kill table: ``creditflow conform`` against every shipped mutant (each
must be killed: a divergence, with its minimal trace) and against the correct
implementations (each must be conformant), with one seed. Prints Markdown."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from creditflow.adapters.mutants import mutants
from creditflow.adapters.registry import adapter_factory
from creditflow.conformance.differential.conform import ConformOptions, run_conform


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="kill-table-"))
    print("| adapter | fault | verdict | found by | minimal trace | differing | seconds |")
    print("|---|---|---|---|---|---|---|")
    rows = [(f"mutant:{m.name}", m.fault) for m in mutants().values()]
    rows += [
        ("reference", "none (the model)"),
        ("python-template", "none"),
        ("rabbitmq", "none (RabbitMQ 3.10.8)"),
    ]
    for name, fault in rows:
        started = time.monotonic()
        result = run_conform(adapter_factory(name), ConformOptions(seed=args.seed, out_dir=out))
        seconds = time.monotonic() - started
        trace = ""
        if result.trace is not None and result.divergence is not None:
            trace = f"{result.trace.spec}: " + "; ".join(str(op) for op in result.trace.ops)
        fields = ", ".join(d.field for d in result.divergence.diffs) if result.divergence else ""
        phase = result.found_by.split(" ")[0] if result.found_by else f"{result.ops:,} ops"
        verdict = {"divergence": "**killed**", "conformant": "conformant"}.get(
            result.verdict, result.verdict
        )
        print(
            f"| `{name}` | {fault} | {verdict} | {phase} | {trace} | {fields} | {seconds:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
