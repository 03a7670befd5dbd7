"""The JSON Lines transport the Python adapters of the ``amqp`` and ``http2`` families
share (AD-TRANSPORT): one JSON request per stdin line, one answer per stdout line.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any


def requests(lines: Iterable[str]) -> Iterator[Any]:
    """The JSON value of every line that is not blank; a line that is not JSON is
    answered ``not JSON`` on stdout at once and skipped."""
    for line in filter(str.strip, lines):
        try:
            req = json.loads(line)
        except json.JSONDecodeError as exc:
            print(json.dumps({"ok": False, "error": f"not JSON: {exc}"}), flush=True)
            continue
        yield req


def write_answer(
    req: Any, resp: dict[str, Any], default: Callable[[Any], Any] | None = None
) -> None:
    """``resp`` with the request's ``id`` echoed, as one compact JSON line on stdout,
    flushed; ``default`` renders values JSON cannot carry."""
    if "id" in req:
        resp["id"] = req["id"]
    sys.stdout.write(json.dumps(resp, separators=(",", ":"), default=default) + "\n")
    sys.stdout.flush()
