"""FAM-READER for HTTP/2 (H2-TOPOLOGY): topology files and presets with
``"family": "http2"`` read through the one input layer (IN-READ: bounded, strict JSON),
then checked here; every problem is one :class:`Http2TopologyError` line naming the file
and the JSON path (exit 2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from creditflow.conformance.inputs.reading import (
    InputError,
    checked_name,
    json_file_data,
    load_json,
)
from creditflow.model.http2.constants import (
    DEFAULT_MAX_FRAME_SIZE,
    MAX_MAX_FRAME_SIZE,
    MAX_PADDING,
    MAX_WINDOW_SIZE,
)
from creditflow.model.http2.topology import Credit, EndConfig, StreamConfig, Topology
from creditflow.spec import spec_dir

#: H2-TOPOLOGY: the largest body, the most streams
MAX_OCTETS = 2**40
MAX_STREAMS = 8

_END_KEYS = {
    "initial_window_size",
    "connection_window",
    "max_frame_size",
    "settings_changes",
    "stream_credit",
    "connection_credit",
    "credit_discarded",
    "accept_empty_end",
    "over_credit",
    "frame_octets",
    "padding",
    "negative_window",
    "empty_end",
}
_STREAM_KEYS = {"id", "direction", "octets", "reads", "reset", "opens"}


class Http2TopologyError(InputError):
    """An HTTP/2 topology that cannot be used; ``str()`` is one line."""


class _Bad(ValueError):
    """A problem at a JSON path (the file is added by :func:`topology_from_document`)."""


def presets_dir() -> Path:
    """``spec/graphs/http2/``."""
    return spec_dir() / "graphs" / "http2"


def _int(v: Any, where: str, low: int, high: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low or v > high:
        raise _Bad(f"{where}: expected an integer {low} … {high}, got {v!r}")
    return v


def _choice(v: Any, where: str, allowed: Sequence[Any]) -> Any:
    if v not in allowed or isinstance(v, bool) and not any(isinstance(a, bool) for a in allowed):
        raise _Bad(f"{where}: expected one of {', '.join(map(repr, allowed))}, got {v!r}")
    return v


def _obj(v: Any, where: str, allowed: set[str]) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise _Bad(f"{where}: expected an object, got {v!r}")
    unknown = sorted(k for k in v if k not in allowed and not str(k).startswith("x-"))
    if unknown:
        raise _Bad(f"{where}.{unknown[0]}: unknown attribute")
    return v


def _credit(v: Any, where: str) -> Credit:
    d = _obj(v, where, {"trigger", "threshold"})
    trigger = _choice(
        d.get("trigger", "consume"), f"{where}.trigger", ("receipt", "consume", "manual")
    )
    return Credit(trigger, _int(d.get("threshold", 1), f"{where}.threshold", 1, MAX_WINDOW_SIZE))


def _end(v: Any, where: str) -> EndConfig:
    d = _obj(v if v is not None else {}, where, _END_KEYS)
    changes = d.get("settings_changes", [])
    if not isinstance(changes, list) or len(changes) > 4:
        raise _Bad(f"{where}.settings_changes: expected a list of at most 4 integers")
    return EndConfig(
        initial_window_size=_int(
            d.get("initial_window_size", 65_535), f"{where}.initial_window_size", 0, MAX_WINDOW_SIZE
        ),
        connection_window=_int(
            d.get("connection_window", 65_535),
            f"{where}.connection_window",
            65_535,
            MAX_WINDOW_SIZE,
        ),
        max_frame_size=_int(
            d.get("max_frame_size", DEFAULT_MAX_FRAME_SIZE),
            f"{where}.max_frame_size",
            DEFAULT_MAX_FRAME_SIZE,
            MAX_MAX_FRAME_SIZE,
        ),
        # H2-WINDOW-MAX: a value above 2^31 − 1 may be sent (the peer must refuse it)
        settings_changes=tuple(
            _int(c, f"{where}.settings_changes[{k}]", 0, 2**32 - 1) for k, c in enumerate(changes)
        ),
        stream_credit=_credit(d.get("stream_credit", {}), f"{where}.stream_credit"),
        connection_credit=_credit(d.get("connection_credit", {}), f"{where}.connection_credit"),
        credit_discarded=_choice(
            d.get("credit_discarded", True), f"{where}.credit_discarded", (True, False)
        ),
        accept_empty_end=_choice(
            d.get("accept_empty_end", True), f"{where}.accept_empty_end", (True, False)
        ),
        over_credit=_int(d.get("over_credit", 0), f"{where}.over_credit", 0, MAX_WINDOW_SIZE),
        frame_octets=_int(
            d.get("frame_octets", DEFAULT_MAX_FRAME_SIZE),
            f"{where}.frame_octets",
            1,
            MAX_MAX_FRAME_SIZE,
        ),
        padding=_int(d.get("padding", 0), f"{where}.padding", 0, MAX_PADDING),
        negative_window=_choice(
            d.get("negative_window", "wait"), f"{where}.negative_window", ("wait", "send")
        ),
        empty_end=_choice(
            d.get("empty_end", "always"), f"{where}.empty_end", ("always", "needs-window")
        ),
    )


def topology_from_dict(data: Any) -> Topology:
    """H2-TOPOLOGY: a parsed document as a :class:`Topology`, or :class:`_Bad`."""
    d = _obj(data, "$", {"family", "name", "description", "client", "server", "streams"})
    if d.get("family") != "http2":
        raise _Bad(f"family: expected 'http2', got {d.get('family')!r}")
    try:  # IN-LIMITS: the one name check of every family (1,024 characters, no repr)
        name = checked_name(d.get("name"))
    except ValueError as exc:
        raise _Bad(f"name: {exc}") from None
    streams = d.get("streams")
    if not isinstance(streams, list) or not 1 <= len(streams) <= MAX_STREAMS:
        raise _Bad(f"streams: expected a list of 1 … {MAX_STREAMS} streams")
    out: list[StreamConfig] = []
    for k, raw in enumerate(streams):
        w = f"streams[{k}]"
        s = _obj(raw, w, _STREAM_KEYS)
        sid = _int(s.get("id"), f"{w}.id", 1, MAX_WINDOW_SIZE)
        if sid % 2 == 0 or (out and sid <= out[-1].id):
            raise _Bad(f"{w}.id: stream ids are odd and increasing, got {sid}")
        out.append(
            StreamConfig(
                sid,
                _choice(s.get("direction", "upload"), f"{w}.direction", ("upload", "download")),
                _int(s.get("octets", 0), f"{w}.octets", 0, MAX_OCTETS),
                _choice(s.get("reads", "all"), f"{w}.reads", ("all", "none")),
                _choice(s.get("reset"), f"{w}.reset", (None, "sender", "receiver")),
                _choice(s.get("opens", "start"), f"{w}.opens", ("start", "later")),
            )
        )
    description = d.get("description", "")
    if not isinstance(description, str):
        raise _Bad("description: expected a string")
    return Topology(
        name,
        _end(d.get("client"), "client"),
        _end(d.get("server"), "server"),
        tuple(out),
        description,
    )


def topology_from_document(data: Any, where: str) -> Topology:
    """A document read from ``where`` as a topology; one line naming it if bad."""
    try:
        return topology_from_dict(data)
    except _Bad as exc:
        raise Http2TopologyError(f"{where}: {exc}") from None


class Reader:
    """FAM-READER: presets under ``spec/graphs/http2/`` and files with ``"family": "http2"``."""

    document_family = "http2"

    def preset_names(self) -> Sequence[str]:
        return sorted(p.stem for p in presets_dir().glob("*.json"))

    def recognises(self, document: Mapping[str, Any]) -> bool:
        return isinstance(document, Mapping) and document.get("family") == "http2"

    def read(self, source: str, settings: Mapping[str, Any]) -> Topology:
        """A preset name or a file path (no settings are taken yet: a non-empty
        ``settings`` is refused in one line, FAM-OPTIONS)."""
        if settings:
            raise Http2TopologyError(
                f"{source}: http2 topologies take no settings ({', '.join(settings)})"
            )
        path = presets_dir() / f"{source}.json" if source in self.preset_names() else Path(source)
        return topology_from_document(load_json(path), str(path))

    def find(self, source: str, config: Path | None) -> Topology | None:
        """FAM-REGISTRY: the topology ``source`` names (a preset, or a ``.json`` file whose
        ``"family"`` is ``"http2"``), ``None`` for another family's input; a ``--config``
        is refused in one line (H2 topologies take no RabbitMQ settings)."""
        path = Path(source)
        if path.is_file():
            data = json_file_data(path)
            if not self.recognises(data):
                return None
            found = topology_from_document(data, str(path))
        elif not path.suffix and "/" not in source and source in self.preset_names():
            found = self.read(source, {})
        else:
            return None
        if config is not None:
            raise Http2TopologyError(f"{config}: http2 topologies take no --config")
        return found

    def from_trace_meta(self, meta: Mapping[str, Any], where: str) -> Topology:
        return topology_from_document(meta.get("topology"), f"{where}: #meta.creditflow.topology")


READER = Reader()
