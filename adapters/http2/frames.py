"""Our own HTTP/2 frame codec (AD-H2-FRAMES): the 9-octet frame header of RFC 9113 §4.1
and the frames the ``http2`` adapters' peer speaks — DATA, HEADERS, RST_STREAM,
SETTINGS, PING, GOAWAY, WINDOW_UPDATE (§6) — with no HTTP/2 library underneath, so that
every frame an implementation puts on the wire is seen as octets. Header blocks are
HPACK (RFC 7541) through the ``hpack`` package, in :mod:`.peer`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: RFC 9113 §3.4: the client connection preface.
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HEADER_OCTETS = 9

# §6: frame types
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS = 0x0, 0x1, 0x2, 0x3, 0x4
PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0x5, 0x6, 0x7, 0x8, 0x9
TYPE_NAMES = {
    DATA: "DATA",
    HEADERS: "HEADERS",
    PRIORITY: "PRIORITY",
    RST_STREAM: "RST_STREAM",
    SETTINGS: "SETTINGS",
    PUSH_PROMISE: "PUSH_PROMISE",
    PING: "PING",
    GOAWAY: "GOAWAY",
    WINDOW_UPDATE: "WINDOW_UPDATE",
    CONTINUATION: "CONTINUATION",
}
# flags
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20

# §6.5.2: settings identifiers, named as the RFC names them
SETTING_NAMES = {
    0x1: "SETTINGS_HEADER_TABLE_SIZE",
    0x2: "SETTINGS_ENABLE_PUSH",
    0x3: "SETTINGS_MAX_CONCURRENT_STREAMS",
    0x4: "SETTINGS_INITIAL_WINDOW_SIZE",
    0x5: "SETTINGS_MAX_FRAME_SIZE",
    0x6: "SETTINGS_MAX_HEADER_LIST_SIZE",
    0x8: "SETTINGS_ENABLE_CONNECT_PROTOCOL",
    0x9: "SETTINGS_NO_RFC7540_PRIORITIES",
}
SETTING_IDS = {name: ident for ident, name in SETTING_NAMES.items()}
INITIAL_WINDOW_SIZE = SETTING_IDS["SETTINGS_INITIAL_WINDOW_SIZE"]
MAX_FRAME_SIZE = SETTING_IDS["SETTINGS_MAX_FRAME_SIZE"]

# §7: error codes
ERROR_NAMES = {
    0x0: "NO_ERROR",
    0x1: "PROTOCOL_ERROR",
    0x2: "INTERNAL_ERROR",
    0x3: "FLOW_CONTROL_ERROR",
    0x4: "SETTINGS_TIMEOUT",
    0x5: "STREAM_CLOSED",
    0x6: "FRAME_SIZE_ERROR",
    0x7: "REFUSED_STREAM",
    0x8: "CANCEL",
    0x9: "COMPRESSION_ERROR",
    0xA: "CONNECT_ERROR",
    0xB: "ENHANCE_YOUR_CALM",
    0xC: "INADEQUATE_SECURITY",
    0xD: "HTTP_1_1_REQUIRED",
}
ERROR_CODES = {name: code for code, name in ERROR_NAMES.items()}

#: §6.5.2, §6.9.1: the defaults and bounds.
DEFAULT_WINDOW = 65_535
DEFAULT_MAX_FRAME = 16_384
MAX_WINDOW = (1 << 31) - 1
MAX_FRAME_LIMIT = (1 << 24) - 1


class FrameError(Exception):
    """Octets that are not a well-formed frame (the adapter reports it; it never guesses)."""


@dataclass(frozen=True)
class Frame:
    """One frame: its type, flags, stream identifier and payload (§4.1)."""

    type: int
    flags: int
    stream: int
    payload: bytes = b""

    def encode(self) -> bytes:
        """The frame on the wire: 24-bit length, type, flags, 31-bit stream id, payload."""
        n = len(self.payload)
        if n > MAX_FRAME_LIMIT:
            raise FrameError(f"payload of {n} octets exceeds 2^24 - 1")
        return (
            struct.pack(">I", n)[1:]
            + struct.pack(">BBI", self.type, self.flags, self.stream & 0x7FFFFFFF)
            + self.payload
        )


def data(stream: int, length: int, end_stream: bool = False) -> Frame:
    """§6.1: a DATA frame of ``length`` octets (zeros, unpadded)."""
    return Frame(DATA, END_STREAM if end_stream else 0, stream, bytes(length))


def headers(stream: int, block: bytes, end_stream: bool = False) -> Frame:
    """§6.2: a HEADERS frame holding a whole header block (END_HEADERS)."""
    return Frame(HEADERS, END_HEADERS | (END_STREAM if end_stream else 0), stream, block)


def rst_stream(stream: int, error: int) -> Frame:
    """§6.4: RST_STREAM with an error code."""
    return Frame(RST_STREAM, 0, stream, struct.pack(">I", error))


def settings(values: dict[int, int] | None = None, ack: bool = False) -> Frame:
    """§6.5: SETTINGS (identifier, value) pairs, or its ACK."""
    if ack:
        return Frame(SETTINGS, ACK, 0)
    body = b"".join(struct.pack(">HI", k, v) for k, v in (values or {}).items())
    return Frame(SETTINGS, 0, 0, body)


def ping(opaque: bytes = bytes(8), ack: bool = False) -> Frame:
    """§6.7: PING with 8 opaque octets, or its ACK."""
    return Frame(PING, ACK if ack else 0, 0, opaque)


def goaway(last_stream: int, error: int) -> Frame:
    """§6.8: GOAWAY with the last stream id processed and an error code."""
    return Frame(GOAWAY, 0, 0, struct.pack(">II", last_stream, error))


def window_update(stream: int, increment: int) -> Frame:
    """§6.9: WINDOW_UPDATE; ``increment`` is sent as given (31 bits), zero included, so
    that a peer can test the implementation's refusal of a zero increment."""
    return Frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", increment & 0x7FFFFFFF))


class FrameReader:
    """Splits a byte stream into frames (§4.1); :meth:`feed` returns the complete ones."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, octets: bytes) -> Iterator[Frame]:
        self._buf += octets
        while len(self._buf) >= HEADER_OCTETS:
            length = int.from_bytes(self._buf[:3], "big")
            if length > MAX_FRAME_LIMIT:  # pragma: no cover - 24 bits cannot exceed it
                raise FrameError(f"frame length {length}")
            if len(self._buf) < HEADER_OCTETS + length:
                return
            ftype, flags, stream = struct.unpack(">BBI", self._buf[3:9])
            payload = bytes(self._buf[9 : 9 + length])
            del self._buf[: 9 + length]
            yield Frame(ftype, flags, stream & 0x7FFFFFFF, payload)


def flow_controlled_length(frame: Frame) -> int:
    """§6.9.1: the octets of a DATA frame that count against the windows — its whole
    payload, padding and the Pad Length field included."""
    return len(frame.payload) if frame.type == DATA else 0


def data_length(frame: Frame) -> int:
    """The octets of application data in a DATA frame (without padding)."""
    if frame.flags & PADDED and frame.payload:
        return max(len(frame.payload) - 1 - frame.payload[0], 0)
    return len(frame.payload)


def settings_values(frame: Frame) -> dict[str, int]:
    """A SETTINGS frame's pairs under their RFC names (an unknown id as ``0xNN``)."""
    out: dict[str, int] = {}
    body = frame.payload
    for i in range(0, len(body) - len(body) % 6, 6):
        ident, value = struct.unpack(">HI", body[i : i + 6])
        out[SETTING_NAMES.get(ident, f"0x{ident:02x}")] = value
    return out


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, f"0x{code:x}")


def describe(frame: Frame) -> dict[str, Any]:
    """AD-H2-FRAMES: the flow-control fields of a frame under RFC 9113's names: ``type``,
    ``stream``; DATA ``length`` (flow-controlled octets) and ``end_stream``; HEADERS
    ``end_stream``; WINDOW_UPDATE ``increment``; SETTINGS ``ack`` and ``settings``;
    RST_STREAM and GOAWAY ``error`` (GOAWAY also ``last_stream``); PING ``ack``."""
    name = TYPE_NAMES.get(frame.type, f"0x{frame.type:02x}")
    rec: dict[str, Any] = {"type": name, "stream": frame.stream}
    p = frame.payload
    if frame.type == DATA:
        rec["length"] = flow_controlled_length(frame)
        rec["end_stream"] = bool(frame.flags & END_STREAM)
    elif frame.type == HEADERS:
        rec["end_stream"] = bool(frame.flags & END_STREAM)
    elif frame.type == WINDOW_UPDATE and len(p) >= 4:
        rec["increment"] = int.from_bytes(p[:4], "big") & 0x7FFFFFFF
    elif frame.type == SETTINGS:
        rec["ack"] = bool(frame.flags & ACK)
        if not frame.flags & ACK:
            rec["settings"] = settings_values(frame)
    elif frame.type == RST_STREAM and len(p) >= 4:
        rec["error"] = error_name(int.from_bytes(p[:4], "big"))
    elif frame.type == GOAWAY and len(p) >= 8:
        rec["last_stream"] = int.from_bytes(p[:4], "big") & 0x7FFFFFFF
        rec["error"] = error_name(int.from_bytes(p[4:8], "big"))
    elif frame.type == PING:
        rec["ack"] = bool(frame.flags & ACK)
    return rec
