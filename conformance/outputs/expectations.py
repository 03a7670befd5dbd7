"""``conform --update-expectations FILE`` (FIND-UPDATE, spec/conformance-findings.md):
an expectations file written from a run's findings, in the format ``--expectations``
reads, through the one output writer (OUT-ATOMIC).

Two formats: AD-EXPECTATIONS' (``known_divergences``: trace name → why; the AMQP link
end, rabbit-fifo's queue end) and AD-H2-CONFORM-EXPECTATIONS' (``expected``: a list of
``{signature, reason}``). An existing file's entries are kept, in their order, and its
other keys (``adapter``, ``description``) with them; the run's new entries follow in
the order the run found them; an entry already listed is not listed twice. A file that
is there but is no expectations file of that format is not overwritten.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from creditflow.conformance.outputs.writer import OutputError, write_atomic

#: FIND-UPDATE: the description of a file the run creates
DESCRIPTION = (
    "Written by `creditflow conform --update-expectations` (FIND-UPDATE) from the findings "
    "of a run: each listed trace is a finding's shortest witness. Review the reasons."
)


@dataclass(frozen=True)
class UpdatedExpectations:
    """What FIND-UPDATE wrote: the file, the entries it lists, those this run added."""

    path: Path
    entries: int
    added: tuple[str, ...]
    #: entries taken out: their trace passes now (an unexpected pass, FIND-UPDATE)
    removed: tuple[str, ...] = ()

    def line(self) -> str:
        """The one line the CLI prints after the verdict."""
        gone = (
            f"; {len(self.removed)} removed, passing now: {', '.join(self.removed)}"
            if self.removed
            else ""
        )
        return (
            f"expectations: {self.path}: {self.entries} entr{'y' if self.entries == 1 else 'ies'}"
            f" ({len(self.added)} added by this run{gone})"
        )


def _existing(path: Path) -> dict[str, Any] | None:
    """The file's JSON object, ``None`` if there is no file; :class:`OutputError` for a
    file that cannot be read or is no JSON object (it is never overwritten)."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise OutputError(
            path, f"it is there and not a JSON expectations file ({reason})"
        ) from None
    if not isinstance(doc, dict):
        raise OutputError(path, "it is there and not a JSON object (an expectations file)")
    return doc


def update_known_divergences(
    path: Path,
    adapter: str,
    entries: Sequence[tuple[str, str]],
    passing: Sequence[str] = (),
) -> UpdatedExpectations:
    """FIND-UPDATE in AD-EXPECTATIONS' format: ``entries`` (trace name, why) merged into
    ``path``'s ``known_divergences`` (created with ``adapter`` and :data:`DESCRIPTION`
    if there is no file); the listed traces the run found ``passing`` (its unexpected
    passes) taken out. Raises :class:`OutputError` (OUT-FAILURE)."""
    doc = _existing(path)
    if doc is None:
        doc = {"adapter": adapter, "description": DESCRIPTION, "known_divergences": {}}
    known = doc.get("known_divergences", {})
    if not isinstance(known, dict):
        raise OutputError(path, 'its "known_divergences" is not an object; not overwritten')
    merged = dict(known)
    removed = tuple(name for name in merged if name in set(passing))
    for name in removed:
        del merged[name]
    added = []
    for name, why in entries:
        if name not in merged:
            merged[name] = why
            added.append(name)
    doc["known_divergences"] = merged
    write_atomic(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return UpdatedExpectations(path, len(merged), tuple(added), removed)


def update_http2_expected(
    path: Path, adapter: str, entries: Sequence[tuple[str, str]]
) -> UpdatedExpectations:
    """FIND-UPDATE in AD-H2-CONFORM-EXPECTATIONS' format: ``entries`` (signature, reason)
    merged into ``path``'s ``expected`` list. Raises :class:`OutputError`."""
    doc = _existing(path)
    if doc is None:
        doc = {"family": "http2", "adapter": adapter, "description": DESCRIPTION, "expected": []}
    if doc.get("family") != "http2" or not isinstance(doc.get("expected", []), list):
        raise OutputError(path, "it is there and not an HTTP/2 expectations file; not overwritten")
    items = list(doc.get("expected", []))
    listed = {i.get("signature") for i in items if isinstance(i, dict)}
    added = []
    for signature, reason in entries:
        if signature not in listed:
            items.append({"signature": signature, "reason": reason})
            listed.add(signature)
            added.append(signature)
    doc["expected"] = items
    write_atomic(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return UpdatedExpectations(path, len(items), tuple(added))


def finding_reason(finding: Any, seed: int) -> str:
    """FIND-UPDATE: the reason written for a finding (a maintainer rewrites it in words):
    its class, rule, the rule's source, its signature and how it was found."""
    how = f"found by {finding.found_by}, seed {seed}" if finding.found_by else f"seed {seed}"
    return (
        f"{finding.klass} {finding.rule.id} ({finding.rule.source}): {finding.signature}; "
        f"{how} (written by --update-expectations)"
    )
