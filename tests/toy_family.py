"""A toy family (docs/development.md, "Adding a family"): a sender with a credit window
and a receiver that returns credit after reading, or never does. It lives only here and
plugs into the engine through the family interface (FAM-INTERFACE): a reader
(FAM-READER), a transition system for the one explorer (FAM-CHECKING) and a codec
(FAM-CODEC). Registered for a test with ``registry.register(FAMILY)``.

Inputs: the presets ``toy-credit`` and ``toy-never-grants``, or a JSON file
``{"family": "toy", "name": ..., "window": W, "messages": N, "grants": true}``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from creditflow.conformance.family.interface import Family, Part
from creditflow.conformance.inputs.reading import InputError

PROP_BOUND = "PROP-TOY-IN-FLIGHT-BOUND"
NO_STALL = "PROP-TOY-NO-STALL"
SEND, READ, GRANT = 0, 1, 2
WORDS = {SEND: "send", READ: "read", GRANT: "grant"}


@dataclass(frozen=True)
class Toy:
    name: str
    window: int
    messages: int
    grants: bool


PRESETS = {
    "toy-credit": Toy("toy-credit", 2, 5, True),
    "toy-never-grants": Toy("toy-never-grants", 2, 5, False),
}


class ToyError(InputError):
    """A bad toy input (one line naming the file)."""


class State(NamedTuple):
    left: int  # messages not sent yet
    credit: int  # the sender's credit
    wire: int  # messages sent, not read
    read: int  # messages read, credit not yet returned


class ToyReader:
    document_family = "toy"

    def preset_names(self) -> Sequence[str]:
        return sorted(PRESETS)

    def recognises(self, document: Mapping[str, Any]) -> bool:
        return document.get("family") == "toy"

    def find(self, source: str, config: Path | None) -> Toy | None:
        if source in PRESETS:
            return PRESETS[source]
        path = Path(source)
        if path.suffix != ".json" or not path.is_file():
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not self.recognises(doc):
            return None
        try:
            return Toy(str(doc["name"]), int(doc["window"]), int(doc["messages"]), doc["grants"])
        except (KeyError, ValueError, TypeError) as exc:
            raise ToyError(f"{source}: not a toy topology ({exc})") from exc

    def read(self, source: str, settings: Mapping[str, Any]) -> Toy:
        found = self.find(source, None)
        if found is None:
            raise ToyError(f"{source}: not a toy topology")
        return found

    def from_trace_meta(self, meta: Mapping[str, Any], where: str) -> Toy:
        return Toy(**meta["toy"])


class ToySystem:
    """A TransitionSystem (model/system.py) for the one explorer."""

    process_names = ("sender", "receiver")
    property_ids = (PROP_BOUND,)
    deadlock_property = NO_STALL

    def __init__(self, toy: Toy) -> None:
        self.toy = toy

    def initial(self) -> State:
        return State(self.toy.messages, self.toy.window, 0, 0)

    def successors(self, s: State) -> Sequence[tuple[int, State]]:
        out = []
        if s.left and s.credit:
            out.append((SEND, State(s.left - 1, s.credit - 1, s.wire + 1, s.read)))
        if s.wire:
            out.append((READ, State(s.left, s.credit, s.wire - 1, s.read + 1)))
        if s.read and self.toy.grants:
            out.append((GRANT, State(s.left, s.credit + s.read, s.wire, 0)))
        return out

    def describe(self, action: int) -> str:
        return WORDS[action]

    def violations(self, s: State) -> tuple[str, ...]:
        return (PROP_BOUND,) if s.wire > self.toy.window else ()

    def blocked_mask(self, s: State) -> int:
        return 1 if s.left and not s.credit else 0

    def pending_work(self, s: State) -> bool:
        return s.left > 0

    def render(self, s: State) -> Mapping[str, Any]:
        return s._asdict()

    def action_record(self, action: int) -> tuple[str, Mapping[str, Any]]:
        return WORDS[action], {}


class ToyChecking:
    def system(self, instance: Toy, options: Mapping[str, Any]) -> ToySystem:
        supply = options.get("supply")
        return ToySystem(instance if supply is None else replace(instance, messages=supply))

    def symmetry(self, system: Any) -> None:
        return None

    def supply(self, instance: Toy) -> int:
        return instance.messages


class ToyCodec:
    model = "toy"
    version = 1

    def meta(self, instance: Toy) -> Mapping[str, Any]:
        return {"toy": instance.__dict__}

    def state_line(self, system: Any, s: State) -> str:
        return f"left={s.left} credit={s.credit} wire={s.wire} read={s.read}"

    def step_words(self, system: Any, action: int) -> str:
        return WORDS[action]

    def picture(self, system: Any, s: State, title: str) -> str:
        return f'digraph toy {{ label="{title}"; sender -> receiver [label="{s.wire}"]; }}\n'


READER, CHECKING, CODEC = ToyReader(), ToyChecking(), ToyCodec()

FAMILY = Family(
    name="toy",
    title="a toy credit window (tests/toy_family.py)",
    spec_files=(),
    property_ids=(PROP_BOUND, NO_STALL),
    options={"check": frozenset({"publishes", "max_states", "full_search", "progress"})},
    reader=Part("tests.toy_family:READER"),
    checking=Part("tests.toy_family:CHECKING"),
    codec=Part("tests.toy_family:CODEC"),
)
