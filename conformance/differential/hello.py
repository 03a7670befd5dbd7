"""Which family an adapter command speaks, read from its ``hello`` (AD-HELLO, AD-CMD):
``--adapter-cmd`` and ``replay --adapter-cmd`` take an adapter of any family with an
alphabet (FAM-ALPHABET) and drive it with that family's driver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from creditflow.conformance.differential.adapter import PROTOCOL, AdapterFailure
from creditflow.conformance.differential.transport import DEFAULT_TIMEOUT, JsonLinesProcess


class HelloProbe(JsonLinesProcess):
    """An adapter started only to hear its ``hello``: any list of families is taken
    (the family's own driver checks the rest of ``hello`` when it starts it)."""

    def _hello(self, start_timeout: float) -> dict[str, Any]:
        resp = self._named_hello(start_timeout)
        families = resp.get("families")
        if not isinstance(families, list) or not all(isinstance(f, str) for f in families):
            self._fail(PROTOCOL, f'hello response lacks a "families" list: {families!r}')
        return resp


def adapter_family(
    argv: Sequence[str], known: Sequence[str], timeout: float = DEFAULT_TIMEOUT
) -> str:
    """AD-HELLO: the first of ``known`` (the families with an alphabet, in order of
    preference) that the command's ``hello`` lists; :class:`AdapterFailure` (exit 3) if
    it lists none of them or does not start."""
    probe = HelloProbe(list(argv), timeout=timeout)
    families = list(probe.info["families"])
    for family in known:
        if family in families:
            probe.hand_over()  # the family's driver takes this process: started once
            return family
    probe.close()
    raise AdapterFailure(
        probe.name,
        PROTOCOL,
        f"hello response lists the families {families!r}; conform and replay take an "
        f"adapter of the families {', '.join(known)} (AD-HELLO)",
    )
