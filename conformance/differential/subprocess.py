"""The ``credit_flow`` family's protocol driver: an implementation started as a
subprocess (AD-TRANSPORT) whose process ops are sent in pipelined batches
(AD-PIPELINE) and read back as observations (AD-RESPONSE). The transport itself is
:class:`~creditflow.conformance.differential.transport.JsonLinesProcess`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from creditflow.conformance.differential.adapter import (
    PROTOCOL,
    REFUSED,
    Adapter,
    hello_ops_problem,
)
from creditflow.conformance.differential.protocol import (
    Observation,
    Op,
    ProtocolError,
    observation_from_response,
)
from creditflow.conformance.differential.transport import (
    DEFAULT_START_TIMEOUT,
    DEFAULT_TIMEOUT,
    PROBE_OP,
    JsonLinesProcess,
)
from creditflow.model.credit.spec import CreditSpec

__all__ = ["DEFAULT_START_TIMEOUT", "DEFAULT_TIMEOUT", "PROBE_OP", "SubprocessAdapter"]


class SubprocessAdapter(JsonLinesProcess, Adapter):
    """An implementation of the ``credit_flow`` family speaking the protocol on a
    subprocess's stdin/stdout."""

    def _hello(self, start_timeout: float) -> dict[str, Any]:
        """AD-HELLO, and the ops it declares (AD-CAPABILITIES)."""
        info = super()._hello(start_timeout)
        problem = hello_ops_problem(info)
        if problem is not None:
            self._fail(PROTOCOL, problem)
        return info

    def reset(self, spec: CreditSpec) -> None:
        resp = self.request({"op": "reset", "spec": [spec.initial, spec.more_after]})
        if resp.get("ok") is not True:
            self._fail(REFUSED, f"reset to {spec} refused: {resp.get('error', resp)!r}")

    def submit_reset(self, spec: CreditSpec) -> int:
        """Queue a ``reset`` request line (AD-RESET, pipelined: AD-BATCHED); its id."""
        rid = self._take_ids(1)
        self.submit(
            f'{{"id":{rid},"op":"reset","spec":[{spec.initial},{spec.more_after}]}}\n'.encode()
        )
        return rid

    def reset_answered(self, raw: bytes, request_id: int, spec: CreditSpec) -> None:
        """Check the response line of a pipelined ``reset``."""
        resp = self._parse(raw, request_id, "reset")
        if resp.get("ok") is not True:
            self._fail(REFUSED, f"reset to {spec} refused: {resp.get('error', resp)!r}")

    def submit_examples(
        self, examples: Sequence[tuple[CreditSpec, Sequence[Op]]]
    ) -> list[tuple[int, int]]:
        """Queue each example's ``reset`` and ops as numbered request lines, in one write
        (AD-BATCHED); the ids of each example's ``reset`` and first op."""
        ids: list[tuple[int, int]] = []
        lines: list[bytes] = []
        for spec, ops in examples:
            rid = self._take_ids(1 + len(ops))
            ids.append((rid, rid + 1))
            lines.append(
                f'{{"id":{rid},"op":"reset","spec":[{spec.initial},{spec.more_after}]}}\n'.encode()
            )
            lines += [op.line(rid + 1 + i) for i, op in enumerate(ops)]
        self.submit(b"".join(lines))
        return ids

    def submit_ops(self, ops: Sequence[Op]) -> int:
        """Queue ``ops`` as numbered request lines; the id of the first."""
        first = self._take_ids(len(ops))
        self.submit(b"".join([op.line(first + i) for i, op in enumerate(ops)]))
        return first

    def run_raw(self, ops: Sequence[Op]) -> tuple[int, list[bytes]]:
        """Send ``ops`` in one pipelined batch; the id of the first and the raw response
        lines (AD-PIPELINE)."""
        first = self.submit_ops(ops)
        return first, self.collect(len(ops))

    def run(self, ops: Sequence[Op]) -> list[Observation]:
        first, raws = self.run_raw(ops)
        return [
            self.observation(raw, op, first + i)
            for i, (op, raw) in enumerate(zip(ops, raws, strict=True))
        ]

    def observation(self, raw: bytes, op: Op, request_id: int) -> Observation:
        """A process op's response line as an :class:`Observation` (AD-RESPONSE)."""
        resp = self._parse(raw, request_id, str(op))
        if resp["ok"] is not True:
            hint = ""
            if op.kind not in self.supported_ops:
                hint = (
                    f" ({op.kind} is not among the ops this implementation declares "
                    f"in hello: {', '.join(self.supported_ops)})"
                )
            self._fail(REFUSED, f"{op} refused: {resp.get('error', resp)!r}{hint}")
        try:
            return observation_from_response(resp)
        except ProtocolError as exc:
            self._fail(PROTOCOL, f"response to {op}: {exc}")
            raise  # unreachable
        except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
            # AD-TRANSPORT-PARSE: no response, however odd, crashes the driver
            self._fail(PROTOCOL, f"response to {op} has wrong types: {type(exc).__name__}")
            raise  # unreachable
