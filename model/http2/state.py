"""The state of a connection (H2-TS): the two ends, the two wires, the first error.
Every part is a NamedTuple of ints and short strings, so a state is compact and
hashable; windows are signed integers (H2-NEGATIVE)."""

from __future__ import annotations

from typing import Literal, NamedTuple

#: H2-STREAM-STATES: a stream's state at one end
StreamState = Literal["idle", "open", "closed", "reset"]


class SendHalf(NamedTuple):
    """The sender's half of a stream: its stream window and the octets left to send
    (H2-SEND); ``closed`` once the END_STREAM frame is sent."""

    state: StreamState
    window: int
    left: int


class RecvHalf(NamedTuple):
    """The receiver's half: its stream window, octets buffered for the application
    (H2-CONSUME), stream octets owed back (H2-POL-CREDIT)."""

    state: StreamState
    window: int
    buffered: int
    owed: int


Half = SendHalf | RecvHalf


class End(NamedTuple):
    """One end. As a sender: its connection send window and the peer's
    SETTINGS_INITIAL_WINDOW_SIZE it applied (H2-SETTINGS-APPLY). As a receiver: its
    connection receive window, connection octets owed, its own initial window size as
    acknowledged, the values sent and not yet acknowledged, and how many of its
    ``settings_changes`` it sent (H2-SETTINGS, H2-SETTINGS-ACK). ``streams[i]`` is its
    half of stream ``i``: a :class:`SendHalf` where it sends the body, else a
    :class:`RecvHalf`."""

    send_conn: int
    send_initial: int
    recv_conn: int
    conn_owed: int
    recv_initial: int
    unacked: tuple[int, ...]
    changes_sent: int
    streams: tuple[Half, ...]


class Data(NamedTuple):
    """A DATA frame on stream index ``stream``: ``data`` octets and ``padding`` octets
    (H2-PADDING), END_STREAM set or not."""

    stream: int
    data: int
    padding: int
    end: bool

    @property
    def length(self) -> int:
        """The flow-controlled length (H2-PADDING)."""
        return self.data + self.padding


class WindowUpdate(NamedTuple):
    """WINDOW_UPDATE on stream index ``stream`` (``-1``: stream 0, the connection)."""

    stream: int
    increment: int


class Settings(NamedTuple):
    """SETTINGS with SETTINGS_INITIAL_WINDOW_SIZE = ``initial_window_size``."""

    initial_window_size: int


class SettingsAck(NamedTuple):
    """SETTINGS with the ACK flag."""


class RstStream(NamedTuple):
    stream: int


class Headers(NamedTuple):
    """HEADERS opening stream index ``stream`` (H2-OPEN)."""

    stream: int


#: a frame on a wire; only :class:`Data` takes window (H2-DATA-ONLY)
Frame = Data | WindowUpdate | Settings | SettingsAck | RstStream | Headers
Wire = tuple[Frame, ...]

#: the connection's index in :class:`WindowUpdate` frames and actions
CONNECTION = -1


class State(NamedTuple):
    """H2-TS: ``ends[0]`` the client, ``ends[1]`` the server; ``wires[e]`` carries the frames
    end ``e`` sent, oldest first; ``error`` the first error raised (H2-ERRORS, ``""``:
    none); ``refused_end`` whether a receiver refused an empty END_STREAM frame
    (H2-EMPTY-END); ``dead`` after a connection error."""

    ends: tuple[End, End]
    wires: tuple[Wire, Wire]
    error: str = ""
    refused_end: bool = False
    dead: bool = False
