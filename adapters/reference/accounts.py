"""The reference implementation of the ``accounts`` adapter family, as a subprocess.

``python -m creditflow.adapters.reference.accounts [--mutant NAME]`` reads one JSON
request per line on stdin and writes one JSON answer per line on stdout
(``spec/adapter-protocol-accounts.md``, AD-AC-TRANSPORT). It is the template for a harness
in any language: parse the request, act, report the observations and the state
(AD-AC-RUST sketches one for syndicate-rs).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from creditflow.adapters.reference.accounts_mutants import MUTANTS
from creditflow.conformance.families.accounts.protocol import ReferenceAccountsAdapter
from creditflow.conformance.inputs.graphs import networkx_from_node_link
from creditflow.model.accounts.graph import actor_graph_from_networkx
from creditflow.model.accounts.rules import AccountsModel


def answer(adapter: ReferenceAccountsAdapter, request: dict[str, Any]) -> dict[str, Any]:
    op = request.get("op")
    if op == "hello":
        return adapter.hello()
    if op == "reset":
        adapter.reset(actor_graph_from_networkx(networkx_from_node_link(request.get("graph"))))
        return {"ok": True}
    reply = adapter.step(request)
    return {"ok": True, "observations": list(reply.observations), "state": reply.state}


def serve(stdin: TextIO, stdout: TextIO, model_class: type[AccountsModel]) -> None:
    """AD-AC-TRANSPORT: one answer per request line, in order, ``id`` echoed."""
    adapter = ReferenceAccountsAdapter(model_class)
    for line in stdin:
        if not line.strip():
            continue
        request: Any = None
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request is a JSON object")
            reply = answer(adapter, request)
        except Exception as exc:  # every error is an answer, never a crash
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        if isinstance(request, dict) and "id" in request:
            reply["id"] = request["id"]
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutant", choices=sorted(MUTANTS), help="serve a faulty variant")
    args = parser.parse_args(argv)
    serve(sys.stdin, sys.stdout, MUTANTS[args.mutant] if args.mutant else AccountsModel)


if __name__ == "__main__":
    main()
