"""``conform`` for an HTTP/2 adapter (AD-H2-CONFORM): the shared search
(``op_search.explore``, then ``op_search.hypothesis_search`` with OUT-HYPOTHESIS storage)
over the family's alphabet, every request checked against the model side
(AD-H2-ALPHABET) and RFC 9113 on the implementation's own frames
(AD-H2-CONFORM-RULES); each distinct finding (FIND-RECORD) written as an HTTP/2 run
trace (TRACE-H2-RUN) before it is reported; known ones masked by an expectations file
(AD-H2-CONFORM-EXPECTATIONS).

A finding does not stop the search: it is recorded, masked for the rest of the run
(op_search's ``mask``) so the search goes on to the next distinct one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from creditflow.conformance.differential.findings import (
    Finding,
    FindingClass,
    Rule,
    failing,
    finding_id,
    signature_text,
)
from creditflow.conformance.differential.op_search import explore, hypothesis_search
from creditflow.conformance.families.http2.alphabet import (
    ALPHABET,
    DEFAULT_DEPTH,
    OPS,
    PHASES,
    H2Model,
    H2Op,
    prefix,
)
from creditflow.conformance.families.http2.traces import write_run_trace

#: AD-H2-CONFORM-RULES: the rules a finding names, their class and RFC 9113 section
RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("H2-NO-EXCESS", "must", "RFC 9113 §6.9.1 (a sender MUST NOT send beyond a window)"),
        Rule(
            "H2-ZERO-INCREMENT", "must", "RFC 9113 §6.9 (a zero increment MUST be PROTOCOL_ERROR)"
        ),
        Rule(
            "H2-WINDOW-MAX",
            "must",
            "RFC 9113 §6.9.1 (a window above 2^31-1 MUST be FLOW_CONTROL_ERROR)",
        ),
        Rule(
            "H2-RECV-EXCESS", "must", "RFC 9113 §6.9.1 (DATA beyond a window: FLOW_CONTROL_ERROR)"
        ),
        Rule("H2-ERRORS", "must", "RFC 9113 §5.4.1 (a connection error MUST send GOAWAY)"),
        Rule(
            "H2-NEGATIVE",
            "must",
            "RFC 9113 §6.9.2 (a sender MUST track a negative window and wait until positive)",
        ),
        Rule("H2-SEND", "contract", "AD-H2-POLICY split: sends as far as both windows allow"),
        Rule("H2-RESET", "contract", "AD-H2-OPS cancel: the application resets the stream (§6.4)"),
        Rule("PROP-H2-NO-STALL", "must", "RFC 9113 §6.7 (a PING MUST be acknowledged), §5.2"),
        Rule("H2-FRAME-SIZE", "must", "RFC 9113 §4.2 (no frame above SETTINGS_MAX_FRAME_SIZE)"),
    )
}


#: AD-H2-CONFORM-SETTLE: ``state`` ops asked before fewer DATA octets count as a breach
SETTLE = 2


@dataclass(frozen=True)
class Breach:
    """One request of a run parting from the model (AD-H2-CONFORM-RULES)."""

    rule: str
    op: str
    field: str
    detail: str


@dataclass
class H2Run:
    """One run: its choice (AD-H2-CONFORM-RUNS), the ops executed, every request and
    answer (for the trace), and the first breach."""

    choice: Mapping[str, Any]
    ops: list[H2Op] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    breaches: list[Breach] = field(default_factory=list)
    masked: bool = False

    @property
    def failed(self) -> bool:
        return bool(self.breaches) and not self.masked

    @property
    def verdict(self) -> str:
        return self.breaches[0].detail if self.breaches else "conforms"


@dataclass(frozen=True)
class H2ConformOptions:
    """AD-H2-CONFORM: budgets, seed, phases, where traces go, known signatures."""

    seed: int
    max_examples: int
    steps: int
    depth: int = DEFAULT_DEPTH
    phases: tuple[str, ...] = PHASES
    out_dir: Path = Path("counterexamples")
    expected: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class H2ConformResult:
    """AD-H2-CONFORM: what a run found, typed; rendered by the CLI."""

    adapter: str
    implementation: str
    seed: int
    findings: tuple[Finding, ...]
    expected: tuple[Finding, ...]
    runs: int
    ops: int
    seconds: float
    write_errors: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """FIND-EXIT: 1 when a finding of a failing class is not expected."""
        return 1 if failing(self.findings) else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "family": "http2",
            "adapter": self.adapter,
            "implementation": self.implementation,
            "seed": self.seed,
            "verdict": "diverged" if self.exit_code else "conforms",
            "findings": [f.to_json() for f in self.findings],
            "expected": [f.to_json() for f in self.expected],
            "runs": self.runs,
            "ops": self.ops,
            "seconds": round(self.seconds, 2),
        }


def _error_frames(frames: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [
        (f["type"], str(f.get("error")))
        for f in frames
        if f["from"] == "implementation" and f["type"] in ("RST_STREAM", "GOAWAY")
    ]


def _library_error(state: Mapping[str, Any]) -> str:
    """AD-H2-STATE: an error the library reported (httpcore's request thread, h2's)."""
    impl = state.get("implementation") or {}
    for view in (impl.get("streams") or {}).values():
        if isinstance(view, dict) and view.get("error"):
            return str(view["error"])
    return str(impl.get("error") or "")


def _data_on_stream_1(frames: Sequence[Mapping[str, Any]]) -> int:
    return sum(
        int(f["length"])
        for f in frames
        if f["from"] == "implementation" and f["type"] == "DATA" and f["stream"] == 1
    )


def check_step(
    model: H2Model,
    req: Mapping[str, Any],
    resp: Mapping[str, Any],
    op: str,
    more: Callable[[], Mapping[str, Any]] | None = None,
) -> list[Breach]:
    """AD-H2-CONFORM-RULES: one request's answer against what the model expects. Where
    fewer DATA octets came than the windows allow, ``more`` (a ``state`` op) is asked
    up to :data:`SETTLE` times first (AD-H2-CONFORM-SETTLE: a loopback link's quiet
    period is short on a loaded machine)."""
    expect = model.apply(req)
    frames = list(resp.get("frames") or [])
    state = resp.get("state") or {}
    for _ in range(SETTLE):
        if more is None or _data_on_stream_1(frames) >= expect.data or _error_frames(frames):
            break
        extra = more()
        frames += extra.get("frames") or []
        state = extra.get("state") or state
    model.credited(frames)
    out: list[Breach] = []
    mine = [f for f in frames if f["from"] == "implementation"]
    for f in mine:
        if f["type"] == "DATA" and f.get("beyond_window"):
            out.append(Breach("H2-NO-EXCESS", op, "DATA", f"DATA of {f['length']} beyond a window"))
        limit = (state.get("peer") or {}).get("settings", {}).get("SETTINGS_MAX_FRAME_SIZE")
        if f["type"] == "DATA" and isinstance(limit, int) and f["length"] > limit:
            out.append(Breach("H2-FRAME-SIZE", op, "DATA", f"DATA of {f['length']} > {limit}"))
    errors = _error_frames(frames)
    library = _library_error(state)
    if any(k == "GOAWAY" for k, _ in errors):
        model.dead = True  # the connection has ended, whatever the code
    if expect.code:
        wanted = (
            [("GOAWAY", expect.code)]
            if expect.connection
            else [
                ("RST_STREAM", expect.code),
                ("GOAWAY", expect.code),  # §5.4.1: a stream error may be a connection error
            ]
        )
        wrong = [e for e in errors if e[1] not in (expect.code, "STREAM_CLOSED", "NO_ERROR")]
        if not errors:
            out.append(
                Breach(
                    "H2-ERRORS",
                    op,
                    "no error frame",
                    f"expected {' or '.join(k for k, _ in wanted)} {expect.code}, sent none"
                    + (f" (the library: {library[:80]})" if library else ""),
                )
            )
        elif wrong or not any(e in wanted for e in errors):
            got = ", ".join(f"{k} {c}" for k, c in errors)
            out.append(Breach(expect.rule, op, got, f"expected {expect.code}, sent {got}"))
    else:
        goaways = [
            c for k, c in errors if k == "GOAWAY" and c != "NO_ERROR" and c not in expect.allowed
        ]
        if goaways:
            out.append(
                Breach(
                    "H2-ERRORS", op, f"GOAWAY {goaways[0]}", f"GOAWAY {goaways[0]}, no error due"
                )
            )
            model.dead = True
        sent = _data_on_stream_1(mine)
        if library and "flow control window is -" in library:
            out.append(Breach("H2-NEGATIVE", op, "negative window", library[:120]))
            model.dead = True
        elif sent < expect.data and not goaways:
            out.append(
                Breach(
                    "H2-SEND",
                    op,
                    "DATA octets",
                    f"sent {sent} of the {expect.data} octets both windows allow",
                )
            )
            model.dead = True
    if expect.ping_ack and not any(f["type"] == "PING" and f.get("ack") for f in mine):
        out.append(Breach("PROP-H2-NO-STALL", op, "PING", "no PING ACK at rest"))
        model.dead = True
    if expect.rst_stream and not any(k == "RST_STREAM" for k, _ in errors):
        out.append(Breach("H2-RESET", op, "RST_STREAM", "the application reset: no RST_STREAM"))
    return out


def _answer(resp: Mapping[str, Any]) -> dict[str, Any]:
    if resp.get("ok") is not True:
        return {"refused": str(resp.get("error"))}
    return {"frames": resp.get("frames"), "state": resp.get("state")}


def execute(adapter: Any, choice: Mapping[str, Any], ops: Sequence[H2Op]) -> H2Run:
    """One run: ``reset`` and the prefix, then ``ops`` the model allows; the first breach
    ends it."""
    info = adapter.info
    model = ALPHABET.model_side(info)
    run = H2Run(choice)

    def more() -> Mapping[str, Any]:
        resp = adapter.request({"op": "state"})
        run.steps.append({"request": {"op": "state"}, **_answer(resp)})
        return resp

    def do(req: dict[str, Any], name: str) -> bool:
        resp = adapter.request(dict(req))
        run.steps.append({"request": req, **_answer(resp)})
        if resp.get("ok") is not True:  # AD-H2-REFUSE: not possible now, nothing changed
            return True
        if req["op"] == "reset":
            return True
        run.breaches += check_step(model, req, resp, name, more)
        return not run.breaches

    for req in prefix(info, choice):
        if not do(req, f"prefix {req['op']}"):
            return run
    for op in ops:
        if not model.possible(op):
            continue
        run.ops.append(op)
        for req in op.requests:
            if not do(req, op.name):
                return run
    return run


def finding_of(adapter_name: str, run: H2Run, found_by: str, out_dir: Path) -> Finding:
    """FIND-RECORD from a run's first breach; its trace written first (FIND-TRACE)."""
    b = run.breaches[0]
    signature = signature_text(b.rule, b.op, [b.field])
    witness = (f"run {run.choice['name']}", *[o.name for o in run.ops])
    trace = write_run_trace(out_dir, adapter_name, run.choice, run.ops, run.steps, signature)
    return Finding(
        id=finding_id(signature),
        rule=RULES[b.rule],
        signature=signature,
        witness=witness,
        trace=str(trace),
        found_by=found_by,
        detail=(b.detail,),
    )


def run_conform(
    factory: Callable[[], Any], name: str, options: H2ConformOptions
) -> H2ConformResult:
    """AD-H2-CONFORM: the explorer's runs (every sequence of 1 … ``depth`` ops the model
    allows, shortest first, under each run choice), then Hypothesis's; every distinct
    finding recorded once, with its shortest witness and trace."""
    start = time.monotonic()
    adapter = factory()
    info = adapter.info
    implementation = f"{info.get('name')} {info.get('version')}"
    found: dict[str, Finding] = {}
    choices = list(ALPHABET.runs(info))
    phase = {"name": "explorer-runs"}

    def mask(_choice: Any, _seq: Sequence[H2Op], run: H2Run) -> H2Run:
        b = run.breaches[0]
        sig = signature_text(b.rule, b.op, [b.field])
        if sig not in found:
            found[sig] = finding_of(name, run, phase["name"], options.out_dir)
        run.masked = True
        return run

    def allows(choice: Mapping[str, Any], seq: Sequence[H2Op]) -> bool:
        model = ALPHABET.model_side(info)
        for req in prefix(info, choice):
            if req["op"] != "reset":
                model.apply(req)
        for op in seq:
            if not model.possible(op):
                return False
            for req in op.requests:
                model.apply(req)
        return True

    runs = ops = 0
    try:
        if "explorer-runs" in options.phases:
            _, r, o = explore(
                choices,
                OPS,
                options.depth,
                allows,
                lambda c, seq: execute(adapter, c, seq),
                mask,
            )
            runs, ops = runs + r, ops + o
        if "hypothesis-runs" in options.phases and options.max_examples > 0:
            phase["name"] = "hypothesis-runs"

            def drawn(choice: Mapping[str, Any], choose: Any) -> H2Run:
                model = ALPHABET.model_side(info)
                for req in prefix(info, choice):
                    if req["op"] != "reset":
                        model.apply(req)
                seq: list[H2Op] = []
                for i in range(options.steps):
                    op = choose(model, i)
                    if op is None:
                        break
                    seq.append(op)
                    for req in op.requests:
                        model.apply(req)
                return execute(adapter, choice, seq)

            _, r, o = hypothesis_search(
                choices,
                "run",
                OPS,
                drawn,
                lambda c, seq: execute(adapter, c, seq),
                lambda run: run.choice,
                options.seed,
                options.max_examples,
                mask,
            )
            runs, ops = runs + r, ops + o
    finally:
        adapter.close()
    every = sorted(found.values(), key=lambda f: f.signature)
    return H2ConformResult(
        adapter=name,
        implementation=implementation,
        seed=options.seed,
        findings=tuple(f for f in every if f.signature not in options.expected),
        expected=tuple(f for f in every if f.signature in options.expected),
        runs=runs,
        ops=ops,
        seconds=time.monotonic() - start,
    )


__all__ = ["RULES", "FindingClass", "H2ConformOptions", "H2ConformResult", "run_conform"]
