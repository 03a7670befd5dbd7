"""HTTP/2 expectations files (AD-H2-CONFORM-EXPECTATIONS): the findings known of an
implementation, by signature (FIND-SIGNATURE), each with its reason; ``conform`` and
``replay`` report them as expected and fail only on the others.

``{"family": "http2", "expected": [{"signature": "H2-ZERO-INCREMENT @ …", "reason": "…"}]}``
"""

from __future__ import annotations

import json
from pathlib import Path


class H2ExpectationsError(ValueError):
    """A bad expectations file (one line naming it; exit 2)."""


def load_expected(path: Path) -> dict[str, str]:
    """Signature → reason; :class:`H2ExpectationsError` naming the file and the problem."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise H2ExpectationsError(f"{path}: not a JSON expectations file ({exc})") from None
    if not isinstance(doc, dict) or doc.get("family") != "http2":
        raise H2ExpectationsError(f'{path}: an HTTP/2 expectations file says "family": "http2"')
    items = doc.get("expected")
    if not isinstance(items, list):
        raise H2ExpectationsError(f'{path}: "expected" must be a list')
    out: dict[str, str] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("signature"), str):
            raise H2ExpectationsError(f'{path}: expected[{i}] needs a "signature" string')
        out[item["signature"]] = str(item.get("reason", ""))
    return out
