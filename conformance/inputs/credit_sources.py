"""The credits in effect per edge and where each came from (IN-CREDIT-SOURCES).

A light, typed record the input layer fills while it assigns credits (the graph file,
``--credit``, ``--config`` and its defaults, ``--role-credit``, ``--edge-credit``) and
``check``, ``prove`` and ``synth`` carry in their results; the CLI renders it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

#: IN-CREDIT-SOURCES: where an edge's credit came from.
CreditOrigin = Literal["graph", "flag", "file", "default"]


@dataclass(frozen=True, slots=True)
class EdgeCredit:
    """IN-CREDIT-SOURCES: one edge's credit ``{initial, more_after}`` and its origin:
    ``graph`` (the graph file's own), ``flag`` (``--credit``, ``--role-credit``,
    ``--edge-credit``), ``file`` (a setting of ``--config``) or ``default`` (RabbitMQ
    3.10.8's default for a setting ``--config`` leaves unset); ``detail`` names the flag
    or the setting and file."""

    sender: str
    receiver: str
    initial: int
    more_after: int
    origin: CreditOrigin
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "edge": f"{self.sender}->{self.receiver}",
            "credit": [self.initial, self.more_after],
            "origin": self.origin,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class CreditsInEffect:
    """IN-CREDIT-SOURCES: the credit of every edge, in the graph's edge order."""

    edges: tuple[EdgeCredit, ...]

    def to_json(self) -> list[dict[str, Any]]:
        return [edge.to_json() for edge in self.edges]

    @property
    def only_graph(self) -> bool:
        """Every credit is the graph file's own (nothing given on the command line)."""
        return all(edge.origin == "graph" for edge in self.edges)
