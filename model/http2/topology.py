"""A connection to check (H2-TOPOLOGY, H2-SCOPE): its two ends' settings and policies and
its streams, as frozen data. Pure: the documents it is read from are checked by the
family's reader (``conformance/families/http2/reader.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from creditflow.model.http2.constants import (
    CONNECTION_INITIAL_WINDOW,
    DEFAULT_INITIAL_WINDOW_SIZE,
    DEFAULT_MAX_FRAME_SIZE,
)

Trigger = Literal["receipt", "consume", "manual"]
Direction = Literal["upload", "download"]

#: the two ends, by index: 0 is the client, 1 the server (a wire is named by its sender)
CLIENT, SERVER = 0, 1
END_NAMES = ("client", "server")


@dataclass(frozen=True)
class Credit:
    """H2-POL-CREDIT: when octets become owed (``trigger``) and how many are sent at once
    (``threshold``)."""

    trigger: Trigger = "consume"
    threshold: int = 1


@dataclass(frozen=True)
class EndConfig:
    """One end's settings (H2-INITIAL, H2-FRAME-SIZE, H2-SETTINGS) and policies as a
    receiver (H2-POL-CREDIT, H2-DISCARD-CREDIT, H2-EMPTY-END, H2-CREDIT) and as a sender
    (H2-SEND, H2-PADDING, H2-NEGATIVE, H2-EMPTY-END)."""

    initial_window_size: int = DEFAULT_INITIAL_WINDOW_SIZE
    connection_window: int = CONNECTION_INITIAL_WINDOW
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
    settings_changes: tuple[int, ...] = ()
    stream_credit: Credit = field(default_factory=Credit)
    connection_credit: Credit = field(default_factory=Credit)
    credit_discarded: bool = True
    accept_empty_end: bool = True
    over_credit: int = 0
    frame_octets: int = DEFAULT_MAX_FRAME_SIZE
    padding: int = 0
    negative_window: Literal["wait", "send"] = "wait"
    empty_end: Literal["always", "needs-window"] = "always"


@dataclass(frozen=True)
class StreamConfig:
    """A stream (H2-SCOPE): its id, which end sends its body, how many octets, whether its
    receiving application reads (H2-CONSUME), who may reset it (H2-RESET) and when it
    opens (H2-OPEN)."""

    id: int
    direction: Direction = "upload"
    octets: int = 0
    reads: Literal["all", "none"] = "all"
    reset: Literal["sender", "receiver"] | None = None
    opens: Literal["start", "later"] = "start"

    @property
    def sender(self) -> int:
        """The end that sends the body: the client for an upload."""
        return CLIENT if self.direction == "upload" else SERVER

    @property
    def receiver(self) -> int:
        return 1 - self.sender


@dataclass(frozen=True)
class Topology:
    """A checked connection (H2-TOPOLOGY)."""

    name: str
    client: EndConfig
    server: EndConfig
    streams: tuple[StreamConfig, ...]
    description: str = ""

    def end(self, e: int) -> EndConfig:
        return self.client if e == CLIENT else self.server

    @property
    def supply(self) -> int:
        """The octets of every body together."""
        return sum(s.octets for s in self.streams)

    def with_octets(self, octets: tuple[int, ...]) -> Topology:
        """The same connection with other body sizes (a supply)."""
        streams = tuple(
            StreamConfig(s.id, s.direction, n, s.reads, s.reset, s.opens)
            for s, n in zip(self.streams, octets, strict=True)
        )
        return Topology(self.name, self.client, self.server, streams, self.description)
