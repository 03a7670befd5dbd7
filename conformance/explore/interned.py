"""EXP-INTERN: a family's readable states as one packed integer each, successors
computed on that integer (spec/explorer.md).

A readable state is a tuple of *fields* (a ``NamedTuple``: link ends, sessions, wires of
frames). Each field's values are interned, numbered in the order they are met, and a
state is the integer holding every field's number in its own bit range (EXP-STORE: one
small ``int`` a state in the explorer's table, a few dozen bytes instead of a tree of
tuples). Wires (FIFO tuples of frames) also keep, per number, the number of their head
frame and of their tail, and appending frames to a wire is memoised.

Successors are the readable model's, cached by what they read (:class:`Group`): a group
of actions reads some plain fields and the heads of some wires, writes only those plain
fields, pops its wires' heads and appends frames to wires. Its outcome for one key is
taken from the readable model the first time the key is met — by decoding the state and
calling the readable ``successors`` — and checked against the declaration there (no
other field changed, a popped wire lost exactly its head, an appended one kept its
prefix, the actions come in the groups' order): a declaration that does not describe the
model raises :class:`DeclarationError` instead of giving other states. Every later state
with the same key gets the same outcome without the readable model. That the key is all a
group reads is what ``tests/test_amqp_checking.py`` checks, by searching every preset and
random topologies with both systems (same states, numbering, verdicts and runs).

Numbers past a field's bit width raise :class:`WidthExceeded`; the caller searches again
with wider fields (:func:`widened`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from creditflow.model.system import TransitionSystem


class DeclarationError(RuntimeError):
    """A :class:`Group` does not describe what the readable model does (EXP-INTERN)."""


class WidthExceeded(OverflowError):
    """A field has more values than its bit width numbers (EXP-INTERN)."""


@dataclass(frozen=True)
class Group:
    """EXP-INTERN: actions whose outcome depends only on the plain fields ``reads`` and
    on the head frames of the wires ``pops``. They write only ``reads``, remove the head
    of every wire of ``pops`` and may append frames to the wires of ``pops`` and
    ``appends``. ``actions`` are the action codes the group gives, in the model's order."""

    actions: frozenset[int]
    reads: tuple[int, ...]
    pops: tuple[int, ...] = ()
    appends: tuple[int, ...] = ()


class Field:
    """The interned values of one field: ``values[k]`` is value number ``k``.
    ``summarize`` (optional) keeps a summary per value for fast property checks."""

    def __init__(
        self,
        name: str,
        width: int,
        frames: dict[Any, int] | None,
        summarize: Callable[[Any], Any] | None = None,
    ) -> None:
        self.name = name
        self.width = width
        self.limit = 1 << width
        #: wires: every frame seen, numbered (shared by the wires of one system)
        self.frames = frames
        self.wire = frames is not None
        self.values: list[Any] = []
        self.number: dict[Any, int] = {}
        self.summaries: list[Any] = []
        self.summarize = summarize
        #: wires: the head frame's number (-1 when empty) and the tail's number, per number
        self.heads: list[int] = []
        self.tails: list[int] = []
        self._appended: dict[tuple[int, int], int] = {}

    def intern(self, value: Any) -> int:
        k = self.number.get(value)
        if k is not None:
            return k
        tail = self.intern(value[1:]) if self.wire and value else -1
        k = len(self.values)
        if k >= self.limit:
            raise WidthExceeded(f"field {self.name}: more than {self.limit} values")
        self.values.append(value)
        self.number[value] = k
        if self.summarize is not None:
            self.summaries.append(self.summarize(value))
        if self.frames is not None:
            head = -1
            if value:
                head = self.frames.setdefault(value[0], len(self.frames))
            self.heads.append(head)
            self.tails.append(tail)
        return k

    def append(self, wire: int, extra: int) -> int:
        """The number of wire ``wire`` followed by the frames of wire ``extra``."""
        key = (wire, extra)
        k = self._appended.get(key)
        if k is None:
            k = self.intern(self.values[wire] + self.values[extra])
            self._appended[key] = k
        return k


#: one memoised outcome: (action, change of the packed plain fields, wire updates as
#: (field index, shift, popped, frames appended, change of the packed state per wire
#: number, filled as met))
_Outcome = tuple[int, int, tuple[tuple[int, int, bool, int, dict[int, int]], ...]]


class InternedSystem:
    """EXP-INTERN: ``readable`` (a :class:`TransitionSystem` over tuples of fields) as a
    transition system over packed integers with the same states, numbered the same.

    ``wires``: the indices of the fields that are FIFOs of frames; ``widths``: bits per
    field; ``groups``: the action groups, in the order the readable model lists its
    successors; ``make``: a field tuple to a readable state; ``fast_violations``: the
    state properties from the fields' summaries (``None``: decoded, then the readable
    ``violations``); ``summarize``: per field index, its summary of a value."""

    def __init__(
        self,
        readable: TransitionSystem[Any],
        names: Sequence[str],
        wires: frozenset[int],
        widths: Sequence[int],
        groups: Sequence[Group],
        make: Callable[[Sequence[Any]], Hashable],
        fast_violations: Callable[[Sequence[Any]], tuple[str, ...]] | None = None,
        summarize: Mapping[int, Callable[[Any], Any]] | None = None,
    ) -> None:
        self.readable = readable
        self.make = make
        summarize = summarize or {}
        frames: dict[Any, int] = {}
        self.fields = [
            Field(n, w, frames if i in wires else None, summarize.get(i))
            for i, (n, w) in enumerate(zip(names, widths, strict=True))
        ]
        #: check every expansion against the readable model (tests: EXP-INTERN)
        self.verify = False
        self.shifts: list[int] = []
        shift = 0
        for w in widths:
            self.shifts.append(shift)
            shift += w
        self.groups = tuple(groups)
        self.wires = tuple(sorted(wires))
        self._memo: list[dict[tuple[int, ...], tuple[_Outcome, ...]]] = [{} for _ in self.groups]
        self._row, self._summaries, self._successors = self._compile()
        self._group_of = {a: k for k, g in enumerate(self.groups) for a in g.actions}
        self._fast = fast_violations
        self._summarized = bool(summarize) and len(summarize) == len(names)
        self.process_names = readable.process_names
        self.property_ids = readable.property_ids
        codes = getattr(readable, "action_codes", None)
        if codes is not None:
            self.action_codes = codes

    # -- the packed integer -------------------------------------------------------

    def _compile(
        self,
    ) -> tuple[
        Callable[[int], tuple[list[int], tuple[tuple[int, ...], ...]]],
        Callable[[int], list[Any]],
        Callable[[int], list[tuple[int, int]]],
    ]:
        """Three functions written for this system's bit layout (as EXP-COMPILED writes
        a network's): a state's field numbers with each group's key, its fields'
        summaries, and its successors (each group's memo read in line; a key not met yet
        is learned from the readable model, :meth:`_learn`)."""
        env: dict[str, Any] = {"F": self.fields, "learn": self._learned}
        unpack = []
        for i, (f, sh) in enumerate(zip(self.fields, self.shifts, strict=True)):
            unpack.append(
                f"    n{i} = s >> {sh} & {f.limit - 1}" if sh else f"    n{i} = s & {f.limit - 1}"
            )
            env[f"H{i}"] = f.heads
            env[f"S{i}"] = f.summaries
        keys = []
        for g in self.groups:
            parts = [f"n{i}" for i in g.reads] + [f"H{w}[n{w}]" for w in g.pops]
            keys.append("(" + "".join(p + ", " for p in parts) + ")")
        n = len(self.fields)
        numbers = ", ".join(f"n{i}" for i in range(n))
        source = "\n".join(
            [
                "def row(s):",
                *unpack,
                f"    return [{numbers}], ({', '.join(keys)},)",
                "def summaries(s):",
                *unpack,
                f"    return [{', '.join(f'S{i}[n{i}]' for i in range(n))}]",
            ]
        )
        body = ["def successors(s):", *unpack, f"    N = ({numbers},)", "    out = []"]
        for k, key in enumerate(keys):
            env[f"M{k}"] = self._memo[k]
            body += [
                f"    o = M{k}.get({key})",
                "    if o is None:",
                f"        o = learn(s, {k})",
                "    for a, d, w in o:",
                "        t = s + d",
                "        for f, sh, popped, extra, moves in w:",
                "            old = N[f]",
                "            m = moves.get(old)",
                "            if m is None:",
                "                fld = F[f]",
                "                base = fld.tails[old] if popped else old",
                "                new = fld.append(base, extra) if extra else base",
                "                m = moves[old] = (new - old) << sh",
                "            t += m",
                "        out.append((a, t))",
            ]
        body.append("    return out")
        source += "\n" + "\n".join(body)
        exec(compile(source, "<EXP-INTERN>", "exec"), env)  # noqa: S102 - our own source
        return env["row"], env["summaries"], env["successors"]

    def _learned(self, state: int, k: int) -> tuple[_Outcome, ...]:
        """Group ``k``'s outcomes at ``state``, learned from the readable model."""
        nums, keys = self._row(state)
        self._learn(state, nums, keys)
        return self._memo[k][keys[k]]

    def numbers(self, state: int) -> list[int]:
        """The field numbers of a packed state."""
        return [state >> sh & (f.limit - 1) for f, sh in zip(self.fields, self.shifts, strict=True)]

    def encode(self, readable_state: Sequence[Any]) -> int:
        """The packed integer of a readable state (interning its fields)."""
        out = 0
        for f, sh, value in zip(self.fields, self.shifts, readable_state, strict=True):
            out |= f.intern(value) << sh
        return out

    def decode(self, state: int) -> Any:
        """The readable state of a packed one."""
        return self.make(
            [f.values[k] for f, k in zip(self.fields, self.numbers(state), strict=True)]
        )

    # -- TransitionSystem ---------------------------------------------------------

    def initial(self) -> int:
        return self.encode(self.readable.initial())

    def successors(self, state: int) -> list[tuple[int, int]]:
        out = self._successors(state)
        if self.verify:
            expected = list(self.readable.successors(self.decode(state)))
            if [(a, self.decode(t)) for a, t in out] != expected:
                raise DeclarationError(f"the successors of {self.decode(state)} differ")
        return out

    def _learn(self, state: int, nums: list[int], keys: tuple[tuple[int, ...], ...]) -> None:
        """Fill every group's outcome for this state's keys from the readable model,
        checking each declaration (EXP-INTERN)."""
        readable_state = self.decode(state)
        found: list[list[_Outcome]] = [[] for _ in self.groups]
        last = -1
        for action, nxt in self.readable.successors(readable_state):
            k = self._group_of.get(action)
            if k is None or k < last:
                raise DeclarationError(
                    f"{self.readable.describe(action)}: in no group, or out of the groups' order"
                )
            last = k
            found[k].append(self._outcome(self.groups[k], action, readable_state, nxt, nums))
        for k, memo in enumerate(self._memo):
            memo.setdefault(keys[k], tuple(found[k]))

    def _outcome(
        self, g: Group, action: int, before: Sequence[Any], after: Sequence[Any], nums: list[int]
    ) -> _Outcome:
        delta = 0
        wires: list[tuple[int, int, bool, int, dict[int, int]]] = []
        for i, (f, sh) in enumerate(zip(self.fields, self.shifts, strict=True)):
            old, new = before[i], after[i]
            if i in g.reads:
                delta += (f.intern(new) - nums[i]) << sh
            elif i in g.pops:
                if not old or after[i][: len(old) - 1] != old[1:]:
                    raise DeclarationError(f"{f.name}: not popped as declared")
                extra = new[len(old) - 1 :]
                wires.append((i, sh, True, f.intern(extra) if extra else 0, {}))
            elif i in g.appends:
                if new[: len(old)] != old:
                    raise DeclarationError(f"{f.name}: not appended to as declared")
                extra = new[len(old) :]
                if extra:
                    wires.append((i, sh, False, f.intern(extra), {}))
            elif new != old:
                raise DeclarationError(
                    f"{self.readable.describe(action)} changes {f.name}, not declared"
                )
        return (action, delta, tuple(wires))

    def violations(self, state: int) -> tuple[str, ...]:
        if self._fast is not None and self._summarized:
            fast = self._fast(self._summaries(state))
            if self.verify and fast != tuple(self.readable.violations(self.decode(state))):
                raise DeclarationError(f"the properties of {self.decode(state)} differ")
            return fast
        return tuple(self.readable.violations(self.decode(state)))

    def describe(self, action: int) -> str:
        return self.readable.describe(action)

    def blocked_mask(self, state: int) -> int:
        if not self.process_names:
            return 0  # no process to block: the deadlock is the terminal one
        return self.readable.blocked_mask(self.decode(state))

    def pending_work(self, state: int) -> bool:
        return self.readable.pending_work(self.decode(state))

    def render(self, state: int) -> Mapping[str, Any]:
        return self.readable.render(self.decode(state))

    def action_record(self, action: int) -> tuple[str, Mapping[str, Any]]:
        return self.readable.action_record(action)


def widened(widths: Sequence[int], by: int = 4) -> tuple[int, ...]:
    """EXP-INTERN: every field ``by`` bits wider (after :class:`WidthExceeded`)."""
    return tuple(w + by for w in widths)
