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


#: Erlang's reserved words: not atoms unless quoted (``maybe`` only from OTP 27 on, so
#: it is accepted).
RESERVED = frozenset(
    {
        *("after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr", "bxor"),
        *("case", "catch", "cond", "div", "else", "end", "fun", "if", "let", "not", "of"),
        *("or", "orelse", "receive", "rem", "try", "when", "xor"),
    }
)

_LOWER = "a-z\u00df-\u00f6\u00f8-\u00ff"
_NAME = "A-Za-z0-9_@\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff"
_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\r\n\f\v]+)
  | (?P<comment>%[^\n]*)
  | (?P<float>[0-9](?:_?[0-9])*\.[0-9](?:_?[0-9])*(?:[eE][+-]?[0-9](?:_?[0-9])*)?)
  | (?P<based>[0-9]+\#[0-9A-Za-z](?:_?[0-9A-Za-z])*)
  | (?P<integer>[0-9](?:_?[0-9])*)
  | (?P<atom>[LOWER][NAME]*)
  | (?P<variable>[A-Z_\u00c0-\u00d6\u00d8-\u00de][NAME]*)
  | (?P<qatom>'(?:[^'\\]|\\.)*')
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<char>\$(?:\\(?:x\{[0-9A-Fa-f]+\}|x[0-9A-Fa-f]{2}|[0-7]{1,3}|\^.|.)|[^\\]))
  | (?P<stop>\.(?=[ \t\r\n\f\v%]|$))
  | (?P<punct><<|>>|=>|[{}\[\](),|\#:/+-])
    """.replace("LOWER", _LOWER).replace("NAME", _NAME),
    re.VERBOSE | re.DOTALL,
)

_ESCAPE = re.compile(r"\\(x\{[0-9A-Fa-f]+\}|x[0-9A-Fa-f]{2}|[0-7]{1,3}|\^.|.|\n)", re.DOTALL)
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


def _unescape_one(body: str) -> str:
    if body.startswith("x{"):
        if len(body) > 12 or int(body[2:-1], 16) > 0x10FFFF:
            raise ValueError(f"\\{body[:12]} is not a character")
        return chr(int(body[2:-1], 16))
    if body.startswith("x") and len(body) == 3:
        return chr(int(body[1:], 16))
    if body[0] in "01234567":
        return chr(int(body, 8))
    if body.startswith("^") and len(body) == 2:
        return chr(ord(body[1]) & 0x1F)
    return _SIMPLE_ESCAPES.get(body, body)


def _unescape(quoted: str) -> str:
    return _ESCAPE.sub(lambda m: _unescape_one(m.group(1)), quoted[1:-1])


@dataclass(frozen=True)
class Token:
    """One token: its kind (a group name of the tokenizer), its text and its line."""

    kind: str
    text: str
    line: int


def _number_error(literal: str) -> str | None:
    digits = literal.replace("_", "")
    if len(literal) > 64:
        return f"a number literal of {len(literal)} characters (IN-INT)"
    if "#" not in digits and "." not in digits and len(digits) > MAX_INT_DIGITS:
        return f"an integer with {len(digits)} digits (at most {MAX_INT_DIGITS}, IN-INT)"
    return None


def tokenize(text: str, where: str) -> list[Token]:
    """The tokens of ``text`` (comments and blanks dropped), each with its line."""
    tokens: list[Token] = []
    pos, line, end = 0, 1, len(text)
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            if ch in "'\"":
                what = "quoted atom" if ch == "'" else "string"
                raise TermSyntaxError(where, line, f"unterminated {what} (no closing {ch})")
            if ch == ".":
                raise TermSyntaxError(where, line, "a full stop must be followed by a blank")
            raise TermSyntaxError(where, line, f"unexpected character {ch!r}")
        kind, piece = m.lastgroup or "", m.group()
        if kind == "variable":
            raise TermSyntaxError(
                where, line, f"{piece} is a variable; a config file holds only terms"
            )
        if kind not in ("space", "comment"):
            tokens.append(Token(kind, piece, line))
        line += piece.count("\n")
        pos = m.end()
    return tokens


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

    def term(self, depth: int) -> Term:
        if depth > MAX_DEPTH:
            raise self.error(f"nested deeper than {MAX_DEPTH} levels (IN-DEPTH)")
        token = self.take()
        kind, text, line = token.kind, token.text, token.line
        if kind == "atom":
            if text in RESERVED:
                raise self.error(f"{text} is a reserved word; quote it ('{text}')", line)
            return Term("atom", text, line)
        if kind == "qatom":
            return Term("atom", self.unescape(text, line), line)
        if kind == "string":
            parts = [self.unescape(text, line)]
            while self.pos < len(self.tokens) and self.tokens[self.pos].kind == "string":
                nxt = self.take()
                parts.append(self.unescape(nxt.text, nxt.line))
            return Term("string", "".join(parts), line)
        if kind == "char":
            body = text[1:]
            value = (
                ord(self.unescape("'" + body + "'", line)) if body.startswith("\\") else ord(body)
            )
            return Term("integer", value, line)
        if kind in ("integer", "based", "float"):
            return self.number(text, line, 1)
        if kind == "punct":
            if text in "-+" and self.pos < len(self.tokens):
                nxt = self.tokens[self.pos]
                if nxt.kind in ("integer", "based", "float", "char"):
                    self.pos += 1
                    sign = -1 if text == "-" else 1
                    if nxt.kind == "char":
                        return Term("integer", sign * self.term_char(nxt), line)
                    return self.number(nxt.text, nxt.line, sign)
            if text == "{":
                items = self.sequence("}", depth, "in a tuple")
                return Term("tuple", items, line)
            if text == "[":
                return self.list_term(depth, line)
            if text == "<<":
                return self.binary(line)
            if text == "#":
                self.expect("{", "after '#' (records are not terms; a map is #{...})")
                return self.map_term(depth, line)
        if kind == "stop":
            raise self.error("a full stop where a term was expected", line)
        raise self.error(f"unexpected {text!r} where a term was expected", line)

    def term_char(self, token: Token) -> int:
        body = token.text[1:]
        if body.startswith("\\"):
            return ord(self.unescape("'" + body + "'", token.line))
        return ord(body)

    def unescape(self, quoted: str, line: int) -> str:
        try:
            return _unescape(quoted)
        except ValueError as exc:
            raise self.error(str(exc), line) from None

    def number(self, literal: str, line: int, sign: int) -> Term:
        problem = _number_error(literal)
        if problem is not None:
            raise self.error(problem, line)
        digits = literal.replace("_", "")
        if "." in digits:
            value = float(digits) * sign
            if not math.isfinite(value):
                raise self.error(f"the number {literal} overflows to infinity (IN-FINITE)", line)
            return Term("float", value, line)
        if "#" in digits:
            base_text, _, body = digits.partition("#")
            base = int(base_text)
            if not 2 <= base <= 36:
                raise self.error(f"{literal}: the base must be 2 to 36", line)
            try:
                number = int(body, base)
            except ValueError:
                raise self.error(f"{literal} is not a base-{base} integer", line) from None
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
            items.append(self.term(depth + 1))
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
            items.append(self.term(depth + 1))
            token = self.take()
            if token.kind == "punct" and token.text == "]":
                return Term("list", tuple(items), line)
            if token.kind == "punct" and token.text == "|":
                tail = self.term(depth + 1)
                self.expect("]", "after the tail of a list")
                if tail.kind == "list":
                    return Term("list", (*items, *tail.items), line)
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
            key = self.term(depth + 1)
            self.expect("=>", "between a map key and its value")
            pairs.append((key, self.term(depth + 1)))
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
            token = self.take()
            sign = 1
            if token.kind == "punct" and token.text in "-+":
                sign = -1 if token.text == "-" else 1
                token = self.take()
            if token.kind == "string":
                segments.append(Term("string", self.unescape(token.text, token.line), token.line))
            elif token.kind == "char":
                segments.append(Term("integer", sign * self.term_char(token), token.line))
            elif token.kind in ("integer", "based", "float"):
                segments.append(self.number(token.text, token.line, sign))
            else:
                raise self.error(f"{token.text!r} is not a binary segment", token.line)
            if self.at(":"):
                self.take()
                size = self.take()
                if size.kind not in ("integer", "based"):
                    raise self.error("a segment size must be an integer", size.line)
                self.number(size.text, size.line, 1)
            if self.at("/"):
                self.take()
                self.type_specifiers()
            token = self.take()
            if token.kind == "punct" and token.text == ">>":
                return Term("binary", tuple(segments), line)
            if not (token.kind == "punct" and token.text == ","):
                raise self.error(
                    f"expected ',' or '>>' in a binary, found {token.text!r}", token.line
                )

    def type_specifiers(self) -> None:
        while True:
            spec = self.take()
            if spec.kind != "atom":
                raise self.error(f"{spec.text!r} is not a binary type specifier", spec.line)
            if self.at(":"):
                self.take()
                unit = self.take()
                if unit.kind != "integer":
                    raise self.error("a unit must be an integer", unit.line)
            if not self.at("-"):
                return
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
        terms.append(parser.term(1))
        if parser.pos >= len(tokens):
            raise parser.error("the term has no full stop ('.') at its end")
        token = parser.take()
        if token.kind != "stop":
            raise parser.error(
                f"expected a full stop after the term, found {token.text!r}", token.line
            )
    return terms
