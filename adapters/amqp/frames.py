"""The frame record every ``amqp`` adapter reports (AD-AMQ-FRAMES): which end sent or
received which performative, with the flow-control fields of the AMQP 1.0 spec under
their spec names. Kept free of any library import so that adapters can use it."""

from __future__ import annotations

from typing import Any

#: AD-AMQ-FRAMES: the fields recorded per performative (AMQP 1.0 §2.7).
FIELDS: dict[str, tuple[str, ...]] = {
    "begin": ("remote-channel", "next-outgoing-id", "incoming-window", "outgoing-window"),
    "attach": ("name", "handle", "role", "initial-delivery-count"),
    "flow": (
        "next-incoming-id",
        "incoming-window",
        "next-outgoing-id",
        "outgoing-window",
        "handle",
        "delivery-count",
        "link-credit",
        "available",
        "drain",
        "echo",
    ),
    "transfer": ("handle", "delivery-id", "more", "settled"),
    "disposition": ("role", "first", "last", "settled"),
    "detach": ("handle", "closed"),
    "end": (),
}


def frame_record(
    side: str, direction: str, channel: int, name: str, values: dict[str, Any]
) -> dict[str, Any]:
    """AD-AMQ-FRAMES: one frame as reported: ``side`` (``client``/``server``), ``dir``
    (``sent``/``received``), ``frame`` (the performative), ``channel`` and its fields."""
    rec: dict[str, Any] = {"side": side, "dir": direction, "frame": name, "channel": channel}
    for key in FIELDS.get(name, ()):
        if values.get(key) is not None:
            rec[key] = values[key]
    return rec
