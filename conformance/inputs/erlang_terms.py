"""Erlang terms as ``file:consult/1`` reads them, by a small grammar (IN-ERLANG-TERMS).

RabbitMQ's ``advanced.config`` (and the classic ``rabbitmq.config``) is one Erlang term
ended by a full stop. This module tokenizes and parses such text into :class:`Term`
values that keep their line numbers; it never evaluates anything (no ``erl``, no
``eval``). No PyPI library fits: the Erlang-term readers there read the *binary*
external term format (``erlang-py``, ``erlpack``) or are unmaintained (``erl-terms``
0.1.5, 2017). Every problem is a :class:`TermSyntaxError` naming the line.

Accepted: atoms (``rabbit``, ``'quoted atom'``), strings (``"a\\n"``, adjacent strings
concatenated), characters (``$a``), integers (``42``, ``-3``, ``1_000``, ``16#FF``,
``2#1010``), floats (``1.5``, ``2.0e-3``), tuples, proper and improper lists, binaries
(``<<"x">>``, ``<<1,2:16/big-integer>>``) and maps (``#{k => v}``); ``%`` comments.
Bounded like every input (IN-DEPTH, IN-INT, IN-FINITE).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from creditflow.conformance.inputs.reading import MAX_DEPTH, MAX_INT, MAX_INT_DIGITS, InputError

TermKind = Literal[
    "atom", "string", "integer", "float", "tuple", "list", "improper-list", "binary", "map"
]


class TermSyntaxError(InputError):
    """Text that is not one Erlang term; ``str()`` is ``WHERE:LINE: problem``."""

    def __init__(self, where: str, line: int, problem: str) -> None:
        self.line = line
        super().__init__(f"{where}:{line}", problem)


@dataclass(frozen=True)
class Term:
    """One Erlang term and the line it starts on. ``value``: ``str`` for atoms and
    strings, ``int``/``float`` for numbers, a tuple of :class:`Term` for tuples, lists
    and binaries (binary segments as written), a tuple of (key, value) pairs for maps;
    an improper list's last element is its tail."""

    kind: TermKind
    value: object
    line: int

    @property
    def items(self) -> tuple[Term, ...]:
        """The elements of a tuple or proper list (empty for other kinds)."""
        if self.kind in ("tuple", "list") and isinstance(self.value, tuple):
            return self.value
        return ()

    def describe(self) -> str:
        """What the term is, for error messages: ``a tuple of 3``, ``the atom foo``."""
        if self.kind == "tuple":
            return f"a tuple of {len(self.items)}"
        if self.kind == "list":
            return f"a list of {len(self.items)}"
        if self.kind == "atom":
            return f"the atom {self.value}"
        if self.kind in ("integer", "float"):
            return f"the {self.kind} {self.value}"
        return f"a {self.kind}"


#: Erlang's reserved words (OTP 25's ``erl_scan``): not atoms unless quoted. ``else``
#: and ``maybe`` are reserved only with the ``maybe_expr`` feature, off in OTP 25, so
#: both are atoms.
RESERVED = frozenset(
    {
        *("after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr", "bxor"),
        *("case", "catch", "cond", "div", "end", "fun", "if", "let", "not", "of"),
        *("or", "orelse", "receive", "rem", "try", "when", "xor"),
    }
)
#: Erlang's limit on an atom's length, in characters (``system_limit`` beyond).
MAX_ATOM_CHARS = 255

_LOWER = "a-z\u00df-\u00f6\u00f8-\u00ff"
_NAME = "A-Za-z0-9_@\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff"
#: IN-ERLANG-TERMS: Erlang's blanks (``erl_scan``): every character up to the space and
#: U+0080 to U+00A0, the no-break space included (NUL never gets here, IN-READ).
_BLANK = "\\x00-\\x20\\x80-\\xa0"
#: IN-LINEAR: every repetition in these patterns repeats one character class, never a
#: group, so a match costs no backtracking memory per character; strings, quoted atoms
#: and characters are scanned by :func:`_scan_quoted`, not by a pattern.
_TOKEN = re.compile(
    r"""
    (?P<space>[BLANK]+)
  | (?P<comment>%[^\n]*)
  | (?P<number>[0-9][0-9_]*(?:\#[0-9A-Za-z_]+|\.[0-9][0-9_]*(?:[eE][+-]?[0-9][0-9_]*)?)?)
  | (?P<atom>[LOWER][NAME]*)
  | (?P<variable>[A-Z_\u00c0-\u00d6\u00d8-\u00de][NAME]*)
  | (?P<stop>\.(?=[BLANK%]|\Z))
  | (?P<punct><<|>>|=>|[{}\[\](),|\#:/+-])
    """.replace("LOWER", _LOWER)
    .replace("NAME", _NAME)
    .replace("BLANK", _BLANK),
    re.VERBOSE,
)
#: A number's digit groups: ``_`` only between two digits (``1_000``, ``16#FF_FF``).
_BAD_UNDERSCORE = re.compile(r"(?:^|[^0-9A-Za-z])_|_(?:[^0-9A-Za-z]|$)|__")
_PLAIN = {'"': re.compile(r'[^"\\]*'), "'": re.compile(r"[^'\\]*")}
_HEX_BRACED = re.compile(r"([0-9A-Fa-f]*)\}")
_HEX = frozenset("0123456789abcdefABCDEF")
_OCTAL = frozenset("01234567")
_SIMPLE_ESCAPES = {
    "b": "\b",
    "d": "\x7f",
    "e": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "s": " ",
    "t": "\t",
    "v": "\v",
}


class _Unterminated(Exception):
    """The text ends inside a string, quoted atom or character."""


def _code_point(number: int, literal: str) -> str:
    if number > 0x10FFFF or 0xD800 <= number <= 0xDFFF:
        raise ValueError(f"{literal} is not a character (a surrogate or beyond U+10FFFF)")
    return chr(number)


def _scan_escape(text: str, at: int) -> tuple[str, int]:
    """IN-ERLANG-TERMS: the character of the escape at ``text[at] == '\\'`` as
    ``erl_scan`` reads it, and the position after it; ``ValueError`` for an escape
    Erlang refuses, :class:`_Unterminated` at the end of the text."""
    end = len(text)
    if at + 1 >= end:
        raise _Unterminated
    c = text[at + 1]
    if c in _OCTAL:
        stop = at + 2
        while stop < min(at + 4, end) and text[stop] in _OCTAL:
            stop += 1
        return chr(int(text[at + 1 : stop], 8)), stop
    if c == "x":
        if at + 2 < end and text[at + 2] == "{":
            m = _HEX_BRACED.match(text, at + 3)
            if m is None or not m.group(1):
                raise ValueError("\\x{ must hold hex digits and a closing }")
            digits = m.group(1).lstrip("0") or "0"
            literal = f"\\x{{{m.group(1)[:12]}}}"
            if len(digits) > 6:
                raise ValueError(f"{literal} is not a character (beyond U+10FFFF)")
            return _code_point(int(digits, 16), literal), m.end()
        pair = text[at + 2 : at + 4]
        if len(pair) < 2 and at + 2 + len(pair) >= end:
            raise _Unterminated
        if len(pair) != 2 or not set(pair) <= _HEX:
            raise ValueError("\\x must be followed by two hex digits or {hex}")
        return chr(int(pair, 16)), at + 4
    if c == "^":
        if at + 2 >= end:
            raise _Unterminated
        return chr(ord(text[at + 2]) & 0x1F), at + 3
    return _SIMPLE_ESCAPES.get(c, c), at + 2


_LONG_ESCAPE = re.compile(r"\\[0-7x^]")


def _closing_quote(text: str, start: int, quote: str) -> int:
    """The first ``quote`` from ``start`` not escaped by an odd run of backslashes
    (each quote found once, each run counted once: linear); -1 if none."""
    found = text.find(quote, start)
    while found >= 0:
        first = found
        while first > start and text[first - 1] == "\\":
            first -= 1
        if (found - first) % 2 == 0:
            return found
        found = text.find(quote, found + 1)
    return -1


def _scan_quoted(text: str, at: int) -> tuple[str, int]:
    """IN-ERLANG-TERMS, IN-LINEAR: the value of the string or quoted atom opening at
    ``text[at]`` and the position after its closing quote.

    Fast path, in C-level string operations: the closing quote is the first one after
    an even run of backslashes, and a body whose escapes are all two characters long is
    decoded by replacements (``\\\\`` through NUL, which IN-READ keeps out of every
    text). Escapes ``\\^``, ``\\x`` and octal ones go through :func:`_scan_escape`
    one by one, as does any body the fast path cannot be sure of."""
    quote = text[at]
    close = _closing_quote(text, at + 1, quote)
    if close >= 0:
        body = text[at + 1 : close]
        if "\\" not in body:
            return body, close + 1
        paired = body.replace("\\\\", "\0")
        if not _LONG_ESCAPE.search(paired):
            for letter, char in _SIMPLE_ESCAPES.items():
                paired = paired.replace("\\" + letter, char)
            return paired.replace("\\", "").replace("\0", "\\"), close + 1
    return _scan_quoted_slowly(text, at)


def _scan_quoted_slowly(text: str, at: int) -> tuple[str, int]:
    """:func:`_scan_quoted` one escape at a time: plain runs are found by a one-class
    pattern and sliced, escapes decoded by :func:`_scan_escape`."""
    quote = text[at]
    plain = _PLAIN[quote]
    pieces: list[str] = []
    pos, end = at + 1, len(text)
    while True:
        run = plain.match(text, pos)  # [^q\\]* matches, possibly empty
        stop = run.end() if run is not None else pos
        if stop > pos:
            pieces.append(text[pos:stop])
        if stop >= end:
            raise _Unterminated
        if text[stop] == quote:
            return "".join(pieces), stop + 1
        char, pos = _scan_escape(text, stop)
        pieces.append(char)


@dataclass(frozen=True)
class Token:
    """One token: its kind (a group name of the tokenizer, or ``string``, ``qatom``,
    ``char``), its text and its line; ``value`` is the decoded text of a string or
    quoted atom and the code of a character."""

    kind: str
    text: str
    line: int
    value: object = None


def _number_error(literal: str) -> str | None:
    digits = literal.replace("_", "")
    if len(literal) > 64:
        return f"a number literal of {len(literal)} characters (IN-INT)"
    if _BAD_UNDERSCORE.search(literal):
        return f"{literal} is not a number ('_' only between two digits)"
    if "#" not in digits and "." not in digits and len(digits) > MAX_INT_DIGITS:
        return f"an integer with {len(digits)} digits (at most {MAX_INT_DIGITS}, IN-INT)"
    return None


def _atom_error(name: str) -> str | None:
    if len(name) > MAX_ATOM_CHARS:
        return (
            f"an atom of {len(name)} characters (Erlang's limit is {MAX_ATOM_CHARS}, "
            "IN-ERLANG-TERMS)"
        )
    return None


def _scan_literal(text: str, pos: int, where: str, line: int) -> Token:
    """A string, quoted atom or character starting at ``pos``."""
    ch = text[pos]
    try:
        if ch == "$":
            if pos + 1 >= len(text):
                raise _Unterminated
            if text[pos + 1] == "\\":
                char, stop = _scan_escape(text, pos + 1)
            else:
                char, stop = text[pos + 1], pos + 2
            return Token("char", text[pos:stop], line, ord(char))
        value, stop = _scan_quoted(text, pos)
    except _Unterminated:
        what = {"'": "quoted atom", '"': "string", "$": "character"}[ch]
        closing = f" (no closing {ch})" if ch != "$" else ""
        raise TermSyntaxError(where, line, f"unterminated {what}{closing}") from None
    except ValueError as exc:
        raise TermSyntaxError(where, line, str(exc)) from None
    if ch == "'":
        problem = _atom_error(value)
        if problem is not None:
            raise TermSyntaxError(where, line, problem)
    return Token("string" if ch == '"' else "qatom", text[pos:stop], line, value)


def tokenize(text: str, where: str) -> list[Token]:
    """The tokens of ``text`` (comments and blanks dropped), each with its line
    (IN-ERLANG-TERMS, IN-LINEAR: one pass, linear in the text)."""
    tokens: list[Token] = []
    pos, line, end = 0, 1, len(text)
    while pos < end:
        ch = text[pos]
        if ch in "\"'$":
            token = _scan_literal(text, pos, where, line)
            tokens.append(token)
            line += text.count("\n", pos, pos + len(token.text))
            pos += len(token.text)
            continue
        m = _TOKEN.match(text, pos)
        if m is None:
            if ch == ".":
                raise TermSyntaxError(where, line, "a full stop must be followed by a blank")
            if ch == "\ufeff":
                raise TermSyntaxError(
                    where, line, "a byte-order mark (U+FEFF); Erlang refuses it, remove it"
                )
            raise TermSyntaxError(where, line, f"unexpected character {ch!r}")
        kind, piece = m.lastgroup or "", m.group()
        if kind == "variable":
            raise TermSyntaxError(
                where, line, f"{piece} is a variable; a config file holds only terms"
            )
        if kind == "atom":
            problem = _atom_error(piece)
            if problem is not None:
                raise TermSyntaxError(where, line, problem)
        if kind not in ("space", "comment"):
            tokens.append(Token(kind, piece, line))
        line += piece.count("\n")
        pos = m.end()
    return tokens


#: IN-ERLANG-TERMS: binary type specifiers by category (``erl_bits``); a segment may
#: give each category once (the same value again is allowed).
_BIT_SPECIFIERS = {
    **dict.fromkeys(
        ("integer", "float", "binary", "bytes", "bitstring", "bits", "utf8", "utf16", "utf32"),
        "type",
    ),
    **dict.fromkeys(("signed", "unsigned"), "sign"),
    **dict.fromkeys(("big", "little", "native"), "endian"),
}
_UTF = frozenset({"utf8", "utf16", "utf32"})


class _Parser:
    def __init__(self, tokens: list[Token], where: str, last_line: int) -> None:
        self.tokens = tokens
        self.pos = 0
        self.where = where
        self.last_line = last_line

    def error(self, problem: str, line: int | None = None) -> TermSyntaxError:
        if line is None:
            line = self.peek().line if self.pos < len(self.tokens) else self.last_line
        return TermSyntaxError(self.where, line, problem)

    def peek(self) -> Token:
        if self.pos >= len(self.tokens):
            raise self.error("the term ends too early (unterminated, or no full stop)")
        return self.tokens[self.pos]

    def take(self) -> Token:
        token = self.peek()
        self.pos += 1
        return token

    def expect(self, text: str, after: str) -> Token:
        token = self.take()
        if token.text != text or token.kind not in ("punct", "stop"):
            raise self.error(f"expected {text!r} {after}, found {token.text!r}", token.line)
        return token

    def at(self, text: str) -> bool:
        return (
            self.pos < len(self.tokens)
            and self.tokens[self.pos].kind == "punct"
            and self.tokens[self.pos].text == text
        )

    def enter(self, depth: int, line: int) -> int:
        """IN-DEPTH: the depth inside a container opened at ``depth`` (containers
        counted: 48 nest, the 49th is refused)."""
        if depth + 1 > MAX_DEPTH:
            raise self.error(f"containers nested deeper than {MAX_DEPTH} levels (IN-DEPTH)", line)
        return depth + 1

    def strings(self, first: Token) -> str:
        """A string and the adjacent strings concatenated to it."""
        parts = [str(first.value)]
        while self.pos < len(self.tokens) and self.tokens[self.pos].kind == "string":
            parts.append(str(self.take().value))
        return "".join(parts)

    def term(self, depth: int) -> Term:
        token = self.take()
        kind, text, line = token.kind, token.text, token.line
        if kind == "atom":
            if text in RESERVED:
                raise self.error(f"{text} is a reserved word; quote it ('{text}')", line)
            return Term("atom", text, line)
        if kind == "qatom":
            return Term("atom", token.value, line)
        if kind == "string":
            return Term("string", self.strings(token), line)
        if kind == "char":
            return Term("integer", token.value, line)
        if kind == "number":
            return self.number(text, line, 1)
        if kind == "punct":
            if text in "-+" and self.pos < len(self.tokens):
                nxt = self.tokens[self.pos]
                if nxt.kind in ("number", "char"):
                    self.pos += 1
                    sign = -1 if text == "-" else 1
                    if nxt.kind == "char":
                        return Term("integer", sign * int(str(nxt.value)), line)
                    return self.number(nxt.text, nxt.line, sign)
            if text == "{":
                items = self.sequence("}", self.enter(depth, line), "in a tuple")
                return Term("tuple", items, line)
            if text == "[":
                return self.list_term(self.enter(depth, line), line)
            if text == "<<":
                self.enter(depth, line)
                return self.binary(line)
            if text == "#":
                self.expect("{", "after '#' (records are not terms; a map is #{...})")
                return self.map_term(self.enter(depth, line), line)
        if kind == "stop":
            raise self.error("a full stop where a term was expected", line)
        raise self.error(f"unexpected {text!r} where a term was expected", line)

    def number(self, literal: str, line: int, sign: int) -> Term:
        problem = _number_error(literal)
        if problem is not None:
            raise self.error(problem, line)
        digits = literal.replace("_", "")
        if "#" in digits:
            base_text, _, body = digits.partition("#")
            base = int(base_text)
            if not 2 <= base <= 36:
                raise self.error(f"{literal}: the base must be 2 to 36", line)
            try:
                number = int(body, base)
            except ValueError:
                raise self.error(f"{literal} is not a base-{base} integer", line) from None
        elif "." in digits:
            value = float(digits) * sign
            if not math.isfinite(value):
                raise self.error(f"the number {literal} overflows to infinity (IN-FINITE)", line)
            return Term("float", value, line)
        else:
            number = int(digits)
        if number > MAX_INT:
            raise self.error(f"integer {literal} beyond ±{MAX_INT} (IN-INT)", line)
        return Term("integer", sign * number, line)

    def sequence(self, close: str, depth: int, where: str) -> tuple[Term, ...]:
        items: list[Term] = []
        if self.at(close):
            self.take()
            return ()
        while True:
            items.append(self.term(depth))
            token = self.take()
            if token.kind == "punct" and token.text == close:
                return tuple(items)
            if not (token.kind == "punct" and token.text == ","):
                raise self.error(
                    f"expected ',' or {close!r} {where}, found {token.text!r}", token.line
                )

    def list_term(self, depth: int, line: int) -> Term:
        items: list[Term] = []
        if self.at("]"):
            self.take()
            return Term("list", (), line)
        while True:
            items.append(self.term(depth))
            token = self.take()
            if token.kind == "punct" and token.text == "]":
                return Term("list", tuple(items), line)
            if token.kind == "punct" and token.text == "|":
                tail = self.term(depth)
                self.expect("]", "after the tail of a list")
                if tail.kind == "list":
                    return Term("list", (*items, *tail.items), line)
                if tail.kind == "string" and tail.value == "":
                    return Term("list", tuple(items), line)
                return Term("improper-list", (*items, tail), line)
            if not (token.kind == "punct" and token.text == ","):
                raise self.error(
                    f"expected ',', '|' or ']' in a list, found {token.text!r}", token.line
                )

    def map_term(self, depth: int, line: int) -> Term:
        pairs: list[tuple[Term, Term]] = []
        if self.at("}"):
            self.take()
            return Term("map", (), line)
        while True:
            key = self.term(depth)
            self.expect("=>", "between a map key and its value")
            pairs.append((key, self.term(depth)))
            token = self.take()
            if token.kind == "punct" and token.text == "}":
                return Term("map", tuple(pairs), line)
            if not (token.kind == "punct" and token.text == ","):
                raise self.error(f"expected ',' or '}}' in a map, found {token.text!r}", token.line)

    def binary(self, line: int) -> Term:
        segments: list[Term] = []
        if self.at(">>"):
            self.take()
            return Term("binary", (), line)
        while True:
            segments.append(self.segment())
            token = self.take()
            if token.kind == "punct" and token.text == ">>":
                return Term("binary", tuple(segments), line)
            if not (token.kind == "punct" and token.text == ","):
                raise self.error(
                    f"expected ',' or '>>' in a binary, found {token.text!r}", token.line
                )

    def segment(self) -> Term:
        """IN-ERLANG-TERMS: one binary segment ``Value[:Size][/Specifiers]``, checked as
        ``erl_parse:parse_term/1`` evaluates it: a float only as ``float`` (of 16, 32 or
        64 bits), ``utf*`` without a size and with a character, no ``binary`` type for a
        literal, a unit only with a size."""
        token = self.take()
        sign = 1
        if token.kind == "punct" and token.text in "-+":
            sign = -1 if token.text == "-" else 1
            token = self.take()
            if token.kind not in ("number", "char"):
                raise self.error(f"{token.text!r} is not a binary segment", token.line)
        if token.kind == "string":
            value = Term("string", self.strings(token), token.line)
        elif token.kind == "char":
            value = Term("integer", sign * int(str(token.value)), token.line)
        elif token.kind == "number":
            value = self.number(token.text, token.line, sign)
        else:
            raise self.error(f"{token.text!r} is not a binary segment", token.line)
        size: int | None = None
        if self.at(":"):
            self.take()
            size_token = self.take()
            if size_token.kind != "number" or "." in size_token.text:
                raise self.error("a segment size must be an integer", size_token.line)
            size = int(str(self.number(size_token.text, size_token.line, 1).value))
        specifiers: dict[str, str] = {}
        unit: int | None = None
        if self.at("/"):
            self.take()
            specifiers, unit = self.type_specifiers()
        self.check_segment(value, size, specifiers, unit)
        return value

    def check_segment(
        self, value: Term, size: int | None, specifiers: dict[str, str], unit: int | None
    ) -> None:
        kind = specifiers.get("type", "integer")
        line = value.line
        if unit is not None and size is None:
            raise self.error("a binary segment's unit needs a size", line)
        if kind in ("binary", "bytes", "bitstring", "bits"):
            raise self.error(f"a {value.kind} is not a {kind} segment", line)
        if kind in _UTF:
            if size is not None or unit is not None:
                raise self.error(f"a {kind} segment takes no size or unit", line)
            codes = [ord(c) for c in str(value.value)] if value.kind == "string" else [value.value]
            for code in codes:
                if not isinstance(code, int) or not (
                    0 <= code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF
                ):
                    raise self.error(f"{value.describe()} is not a {kind} character", line)
            return
        if kind == "float":
            bits = (64 if size is None else size) * (1 if unit is None else unit)
            if bits not in (16, 32, 64):
                raise self.error(f"a float segment is 16, 32 or 64 bits, not {bits}", line)
            return
        if value.kind == "float":
            raise self.error(
                "a float in a binary needs the type /float (integer segments take integers)",
                line,
            )

    def type_specifiers(self) -> tuple[dict[str, str], int | None]:
        specifiers: dict[str, str] = {}
        unit: int | None = None
        while True:
            spec = self.take()
            if spec.kind != "atom":
                raise self.error(f"{spec.text!r} is not a binary type specifier", spec.line)
            if spec.text == "unit":
                self.expect(":", "after unit")
                number = self.take()
                value = (
                    self.number(number.text, number.line, 1).value
                    if number.kind == "number" and "." not in number.text
                    else None
                )
                if not isinstance(value, int) or not 1 <= value <= 256 or unit not in (None, value):
                    raise self.error("a unit must be an integer from 1 to 256", number.line)
                unit = value
            else:
                category = _BIT_SPECIFIERS.get(spec.text)
                if category is None:
                    raise self.error(f"{spec.text!r} is not a binary type specifier", spec.line)
                if specifiers.get(category, spec.text) != spec.text:
                    raise self.error(
                        f"binary type specifiers {specifiers[category]} and {spec.text} conflict",
                        spec.line,
                    )
                specifiers[category] = spec.text
            if not self.at("-"):
                return specifiers, unit
            self.take()


def parse_terms(text: str, where: str) -> list[Term]:
    """IN-ERLANG-TERMS: every term of ``text``, each ended by a full stop, as
    ``file:consult/1`` reads them; :class:`TermSyntaxError` (``WHERE:LINE: problem``)
    for anything else: unterminated terms, missing full stops, trailing garbage."""
    tokens = tokenize(text, where)
    last_line = text.count("\n") + 1
    parser = _Parser(tokens, where, last_line)
    terms: list[Term] = []
    while parser.pos < len(tokens):
        terms.append(parser.term(0))
        if parser.pos >= len(tokens):
            raise parser.error("the term has no full stop ('.') at its end")
        token = parser.take()
        if token.kind != "stop":
            raise parser.error(
                f"expected a full stop after the term, found {token.text!r}", token.line
            )
    return terms
