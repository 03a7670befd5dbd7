"""``replay`` of HTTP/2 run traces (AD-H2-CONFORM-REPLAY): each trace's run re-run against
an HTTP/2 adapter and judged as ``conform`` judges (AD-H2-CONFORM-RULES); a breach whose
signature the expectations list is expected (AD-H2-CONFORM-EXPECTATIONS)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from creditflow.conformance import exit_codes
from creditflow.conformance.differential.findings import FAILING, signature_text
from creditflow.conformance.families.http2.conform import RULES, execute
from creditflow.conformance.families.http2.traces import H2Trace

PASS, EXPECTED, FAILED = "PASS", "EXPECTED", "FAILED"
#: REPLAY-NOTHING-RAN: a trace whose recorded ops the model (or the adapter's ``ops``)
#: does not allow against this adapter: not run as recorded, never a pass
NOT_RUN = "NOT RUN"


@dataclass(frozen=True)
class H2ReplayOutcome:
    """One trace re-run: its status, the signature of its first breach (``""``: none)."""

    path: str
    status: str
    signature: str
    detail: str


@dataclass(frozen=True)
class H2ReplayReport:
    adapter: str
    implementation: str
    outcomes: tuple[H2ReplayOutcome, ...]

    @property
    def exit_code(self) -> int:
        """1 a failing breach not expected, 4 every trace NOT RUN (REPLAY-NOTHING-RAN),
        else 0 (``exit_codes.replay_exit_code``)."""
        return exit_codes.replay_exit_code(
            diverged=any(o.status == FAILED for o in self.outcomes),
            ran=sum(o.status != NOT_RUN for o in self.outcomes),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "family": "http2",
            "adapter": self.adapter,
            "implementation": self.implementation,
            "outcomes": [o.__dict__ for o in self.outcomes],
        }


def replay_traces(
    factory: Callable[[], Any],
    name: str,
    traces: Sequence[H2Trace],
    expected: Mapping[str, str] | None = None,
) -> H2ReplayReport:
    """Re-run each trace's choice and ops (AD-H2-CONFORM-REPLAY)."""
    adapter = factory()
    info = adapter.info
    outcomes = []
    try:
        for t in traces:
            run = execute(adapter, t.choice, t.ops)
            if not run.breaches and len(run.ops) < len(t.ops):
                why = (
                    f"not run as recorded: {len(run.ops)} of its {len(t.ops)} ops allowed "
                    "here (the model, or the ops the implementation offers)"
                )
                outcomes.append(H2ReplayOutcome(str(t.path), NOT_RUN, "", why))
                continue
            if not run.breaches:
                outcomes.append(H2ReplayOutcome(str(t.path), PASS, "", "conforms"))
                continue
            b = run.breaches[0]
            sig = signature_text(b.rule, b.op, [b.field])
            known = expected is not None and sig in expected
            failing = RULES[b.rule].klass in FAILING
            status = EXPECTED if known else (FAILED if failing else PASS)
            outcomes.append(H2ReplayOutcome(str(t.path), status, sig, b.detail))
    finally:
        adapter.close()
    return H2ReplayReport(name, f"{info.get('name')} {info.get('version')}", tuple(outcomes))
