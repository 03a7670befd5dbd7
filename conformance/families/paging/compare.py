"""Compare the model's prediction with a broker's observation of the same scenario
(PG-OBSERVE-DETERMINED, PG-OBSERVE-NONDETERMINISTIC).

Both sides are turned into one *view*: plain JSON-able fields (per-message lists for
q1..q4 and the pending-ack trees, the delta range, the counters, the queue's msg_store
credit). :data:`COMPARED` lists what must be equal; :data:`NOT_COMPARED` says why the
rest is left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from creditflow.conformance.inputs.paging_scenarios import (
    Scenario,
    ScenarioRun,
    StepResult,
    run_scenario,
)
from creditflow.model.paging.state import (
    PERSISTENT_STORE,
    STORE_NAMES,
    TRANSIENT_STORE,
    Msg,
    PagingState,
    PassReport,
    Rates,
)

#: The message fields of a view entry: seq id, body in RAM, body on a msg_store,
#: index on disk, persistent, embedded.
MSG_FIELDS = ("seq", "in_ram", "on_store", "index_on_disk", "persistent", "embedded")

#: PG-OBSERVE-DETERMINED: fields a settled (or one-pass) broker state must match.
COMPARED = (
    "q1",
    "q2",
    "q3",
    "q4",
    "delta",
    "rpa",
    "dpa",
    "qpa",
    "len",
    "bytes",
    "unacked_bytes",
    "persistent_count",
    "persistent_bytes",
    "ram_msg_count",
    "ram_bytes",
    "messages_ram",
    "target",
    "next_seq_id",
    "next_deliver_seq_id",
    "run_count",
    "waiting_bump",
    "disk_reads",
    "disk_writes",
    "credit",
    "blocked",
)

#: PG-OBSERVE-NONDETERMINISTIC: fields left out, and why.
NOT_COMPARED = {
    "rates": "EWMA of wall-clock rates; the model takes the broker's measured rates as input",
}

_STORE_KEYS = {PERSISTENT_STORE: "persistent", TRANSIENT_STORE: "transient"}


def _msg_entry(m: Msg) -> list[Any]:
    return [m.seq, m.in_ram, m.on_store, m.index_on_disk, m.persistent, m.embedded]


def view_of_state(st: PagingState) -> dict[str, Any]:
    """The view of a model state."""
    return {
        "q1": [_msg_entry(m) for m in st.q1],
        "q2": [_msg_entry(m) for m in st.q2],
        "q3": [_msg_entry(m) for m in st.q3],
        "q4": [_msg_entry(m) for m in st.q4],
        "delta": [
            st.delta_start,
            len(st.delta),
            sum(not m.persistent for m in st.delta),
            st.delta_end,
        ],
        "rpa": [_msg_entry(m) for m in st.rpa],
        "dpa": [_msg_entry(m) for m in st.dpa],
        "qpa": [_msg_entry(m) for m in st.qpa],
        "len": st.len,
        "bytes": st.bytes,
        "unacked_bytes": st.unacked_bytes,
        "persistent_count": st.persistent_count,
        "persistent_bytes": st.persistent_bytes,
        "ram_msg_count": st.ram_msg_count,
        "ram_bytes": st.ram_bytes,
        "messages_ram": st.ram_msg_count + len(st.rpa) + len(st.qpa),
        "target": "infinity" if st.target is None else st.target,
        "next_seq_id": st.next_seq_id,
        "next_deliver_seq_id": st.next_deliver_seq_id,
        "run_count": st.run_count,
        "waiting_bump": st.waiting_bump,
        "disk_reads": st.disk_reads,
        "disk_writes": st.disk_writes,
        "credit": {_STORE_KEYS[i]: st.store_credit(i) for i in _STORE_KEYS},
        "blocked": sorted(
            _STORE_KEYS[STORE_NAMES.index(p)] for p in st.credit.blocked if p in STORE_NAMES
        ),
        "rates": list(st.rates),
    }


@dataclass(frozen=True, slots=True)
class PagingStepRow:
    """One step of ``paging --json`` as printed (PG-STREAM, OUT-TYPED-RESULT): the step,
    the seq ids it delivered, the paging passes it ran, the state after its own
    transition and once settled, and the PG properties those states violate."""

    index: int
    step: str
    delivered: tuple[int, ...]
    passes: tuple[PassReport, ...]
    after: PagingState
    settled: PagingState
    violations: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA: a step line of ``paging --json`` (paging.json)."""
        return {
            "index": self.index,
            "step": self.step,
            "delivered": list(self.delivered),
            "passes": [p._asdict() for p in self.passes],
            "after": view_of_state(self.after),
            "settled": view_of_state(self.settled),
            "violations": list(self.violations),
        }


def paging_step_row(result: StepResult, violations: list[str]) -> PagingStepRow:
    """The printed row of one computed step (PG-STREAM: built as the step is computed,
    nothing of earlier steps kept)."""
    return PagingStepRow(
        index=result.index,
        step=result.step.describe(),
        delivered=tuple(result.delivered),
        passes=tuple(p for report in result.reports for p in report.passes),
        after=result.after,
        settled=result.settled,
        violations=tuple(violations),
    )


def view_of_probe(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The view of a broker snapshot (as printed by the paging probe)."""
    view = {key: snapshot[key] for key in COMPARED if key in snapshot}
    for key in ("q1", "q2", "q3", "q4", "rpa", "dpa", "qpa"):
        view[key] = [list(entry) for entry in snapshot[key]]
    view["delta"] = list(snapshot["delta"])
    view["credit"] = dict(snapshot["credit"])
    view["blocked"] = sorted(snapshot["blocked"])
    view["rates"] = list(snapshot["rates"])
    return view


@dataclass
class FieldDiff:
    step: int
    phase: str
    field: str
    model: Any
    broker: Any

    def __str__(self) -> str:
        return (
            f"step {self.step} ({self.phase}): {self.field}: model {_short(self.model)} "
            f"!= broker {_short(self.broker)}"
        )


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def diff_views(
    step: int, phase: str, model: dict[str, Any], broker: dict[str, Any]
) -> list[FieldDiff]:
    return [
        FieldDiff(step, phase, key, model[key], broker.get(key))
        for key in COMPARED
        if model[key] != broker.get(key)
    ]


@dataclass(frozen=True, slots=True)
class Comparison:
    """The model run (with the broker's rates) beside the broker run, and their diffs."""

    scenario: Scenario
    model: ScenarioRun
    observations: list[Any]
    diffs: list[FieldDiff] = field(default_factory=list)
    #: steps whose broker snapshot did not settle, or whose target the broker changed
    #: by itself (its periodic duration report): PG-OBSERVE-INTERFERENCE
    interference: list[str] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return not self.diffs and not self.interference

    def to_json(self) -> dict[str, Any]:
        """OUT-JSON-SCHEMA, OUT-TYPED-RESULT: ``paging --against-broker --json``'s
        document: per step the model's and the broker's views (PG-OBSERVE)."""
        steps = []
        for res, obs in zip(self.model.results, self.observations, strict=True):
            entry: dict[str, Any] = {
                "index": res.index,
                "step": res.step.describe(),
                "model": {"after": view_of_state(res.after), "settled": view_of_state(res.settled)},
                "broker": {"settled": view_of_probe(obs.settled), "how": obs.how},
            }
            if obs.after_pass is not None:
                entry["broker"]["after"] = view_of_probe(obs.after_pass)
                entry["broker"]["before"] = view_of_probe(obs.before)
            steps.append(entry)
        return {
            "scenario": self.scenario.name,
            "source": self.scenario.source,
            "agrees": self.agrees,
            "interference": self.interference,
            "diffs": [d.__dict__ for d in self.diffs],
            "compared": list(COMPARED),
            "not_compared": NOT_COMPARED,
            "steps": steps,
        }


def compare(scenario: Scenario, observations: list[Any]) -> Comparison:
    """Run the model with the broker's rates before each step and diff every observed
    snapshot (PG-OBSERVE)."""
    rates = {o.index: Rates(*o.rates_before) for o in observations if o.rates_before}
    run = run_scenario(scenario, rates_before=rates)
    result = Comparison(scenario, run, observations)
    for obs, res in zip(observations, run.results, strict=True):
        if obs.how != "settled":
            result.interference.append(f"step {obs.index}: the broker did not settle")
        if obs.after_pass is not None:
            model_pass = view_of_state(res.after)
            broker_pass = view_of_probe(obs.after_pass)
            result.diffs.extend(diff_views(obs.index, "pass", model_pass, broker_pass))
        model_settled = view_of_state(res.settled)
        broker_settled = view_of_probe(obs.settled)
        if broker_settled.get("target") != model_settled["target"] and (
            obs.after_pass is None
            or view_of_probe(obs.after_pass)["target"] == model_settled["target"]
        ):
            result.interference.append(
                f"step {obs.index}: the broker reset its RAM target to "
                f"{broker_settled.get('target')} by itself (periodic duration report)"
            )
        result.diffs.extend(diff_views(obs.index, "settled", model_settled, broker_settled))
    return result
