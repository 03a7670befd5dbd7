"""Ports with several ``peer_down`` mistakes on ``credit_to`` — divergences of one op
and one field, different bugs (AD-EXPECTATIONS-MATCH; issue 31, point 1) — and the
traces that show each, for tests/test_expectations_match.py and the random suite."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from creditflow.conformance.differential.protocol import Op
from creditflow.conformance.differential.session import model_trace
from creditflow.conformance.differential.traces import write_process_trace
from creditflow.model.credit.spec import CreditSpec

#: Each mistake, and a trace on which it (alone) diverges at ``peer_down``, ``credit_to``.
BUGS = {
    # keeps the dead peer's credit_to entry
    "keeps": [Op("ack", "A", "B"), Op("peer_down", "A", "B")],
    # forgets every credit_to entry, not only the dead peer's
    "forgets-others": [Op("ack", "A", "C"), Op("peer_down", "A", "B")],
    # counts the other peers' acks one down
    "lowers-others": [Op("ack", "A", "C"), Op("peer_down", "A", "B")],
}
#: a second trace of ``keeps`` (another shape of run, same bug)
KEEPS_AGAIN = [
    Op("send", "A", "B"),
    Op("ack", "A", "B"),
    Op("ack", "A", "B"),
    Op("peer_down", "A", "B"),
]
SPEC = CreditSpec(4, 3)

PORT = """
import sys
from creditflow.adapters.python_template import Adapter, CreditFlowProcess, main

BUGS = set(sys.argv[1:])


class Process(CreditFlowProcess):
    def peer_down(self, peer):
        kept = self.credit_to.get(peer)
        super().peer_down(peer)
        if "forgets-others" in BUGS:
            self.credit_to.clear()
        if "lowers-others" in BUGS:
            self.credit_to = {p: n - 1 for p, n in self.credit_to.items()}
        if "keeps" in BUGS and kept is not None:
            self.credit_to[peer] = kept


class Port(Adapter):
    name = "port with " + " and ".join(sorted(BUGS))
    process_class = Process


if __name__ == "__main__":
    main(Port)
"""


def port_command(folder: Path, *bugs: str) -> str:
    """The command line of a port with ``bugs`` (the script written into ``folder``)."""
    script = folder / "port.py"
    if not script.exists():
        script.write_text(PORT)
    return shlex.join([sys.executable, str(script), *bugs])


def write_trace(folder: Path, name: str, ops: list[Op]) -> Path:
    """``ops`` with the model's answers, as ``folder/name.itf.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    return write_process_trace(
        model_trace(SPEC, ops), folder / f"{name}.itf.json", name, "tests/expectation_ports.py"
    )
