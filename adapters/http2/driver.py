"""The driver's end of the ``http2`` family (AD-H2-*): an HTTP/2 adapter process over the
one JSON Lines transport, its answers as typed values, and the RFC 9113 facts read off
the frames an answer reports (AD-H2-WIRE).

It lives with the adapters, not in ``conformance/differential/`` (no module there is
named after a family); the family's alphabet (FAM-ALPHABET, AD-H2-ALPHABET) will import
it from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from creditflow.conformance.differential.adapter import PROTOCOL, REFUSED
from creditflow.conformance.differential.transport import DEFAULT_TIMEOUT, JsonLinesProcess

FAMILY = "http2"


@dataclass(frozen=True)
class Http2Reply:
    """One op's answer (AD-H2-REPLY): the frames either end sent meanwhile, and both
    ends' views of the windows afterwards (AD-H2-STATE)."""

    frames: tuple[dict[str, Any], ...]
    state: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)

    def sent_by(self, side: str, kind: str | None = None) -> list[dict[str, Any]]:
        """The frames ``side`` (``implementation`` / ``peer``) sent, of type ``kind``."""
        return [f for f in self.frames if f["from"] == side and (kind is None or f["type"] == kind)]

    def data_octets(self, side: str = "implementation", stream: int | None = None) -> int:
        """The DATA octets ``side`` sent (on ``stream``, or on every stream)."""
        return sum(
            f["length"]
            for f in self.sent_by(side, "DATA")
            if stream is None or f["stream"] == stream
        )

    def goaway(self) -> str | None:
        """The error code of the implementation's GOAWAY, if it sent one."""
        frames = self.sent_by("implementation", "GOAWAY")
        return frames[-1]["error"] if frames else None

    def peer_stream(self, stream: int) -> dict[str, Any]:
        return dict(self.state["peer"]["streams"].get(str(stream), {}))

    @property
    def peer_connection(self) -> dict[str, Any]:
        return dict(self.state["peer"]["connection"])


def beyond_window(frames: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """AD-H2-WIRE (§6.9.1): the implementation's DATA frames beyond either window."""
    return [
        f
        for f in frames
        if f["from"] == "implementation" and f["type"] == "DATA" and f.get("beyond_window")
    ]


class Http2Adapter(JsonLinesProcess):
    """An HTTP/2 implementation speaking the ``http2`` family (AD-H2-HELLO)."""

    family = FAMILY

    def __init__(
        self,
        argv: Sequence[str],
        name: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(argv, name=name, timeout=timeout, env=env)
        for key in ("version", "role", "policy", "ops"):
            if key not in self.info:
                self._fail(PROTOCOL, f'hello lacks "{key}" (AD-H2-HELLO)')

    @property
    def policy(self) -> dict[str, Any]:
        return dict(self.info["policy"])

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(self.info["ops"])

    def _reply(self, request: Mapping[str, Any], resp: dict[str, Any]) -> Http2Reply:
        frames, state = resp.get("frames"), resp.get("state")
        if not isinstance(frames, list) or not isinstance(state, dict):
            self._fail(PROTOCOL, f"{request.get('op')}: reply lacks frames and state")
        assert isinstance(frames, list) and isinstance(state, dict)
        extra = {k: v for k, v in resp.items() if k not in ("ok", "id", "frames", "state")}
        return Http2Reply(tuple(frames), state, extra)

    def step(self, request: Mapping[str, Any]) -> Http2Reply:
        """Send one op; an adapter failure (refused) when it answers ``ok: false``."""
        resp = self.request(dict(request))
        if resp.get("ok") is not True:
            self._fail(REFUSED, f"{request.get('op')} refused: {resp.get('error', resp)!r}")
        return self._reply(request, resp)

    def try_step(self, request: Mapping[str, Any]) -> Http2Reply | str:
        """Like :meth:`step`, but the error text of an op the adapter refuses
        (AD-H2-REFUSE)."""
        resp = self.request(dict(request))
        if resp.get("ok") is not True:
            return str(resp.get("error", resp))
        return self._reply(request, resp)
