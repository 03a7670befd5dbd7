"""Fuzzing the Erlang-term reader of config files (IN-ERLANG-TERMS, IN-CONFIG,
IN-ONE-LINE): arbitrary bytes, and mutations of a real advanced.config, never raise
anything but the one error type, :class:`ConfigFileError`, whose text is one line
``FILE:LINE: problem`` or ``FILE: problem``. Derandomized, no example database."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from creditflow.conformance.inputs.rabbitmq_config import (
    ConfigFileError,
    CreditSettings,
    load_credit_config,
)

FUZZ = settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)

SEED = b"""%% advanced.config
[{rabbit, [{credit_flow_default_credit, {400, 200}},
           {msg_store_credit_disc_bound, {4000, 800}},
           {log, #{level => debug, "f" => <<"x"/utf8, 1:8>>}},
           {tags, ['q a', $a, 16#FF, 1_000, -2.5e3, [a | b]]}]},
 {kernel, [{net_ticktime, 60}]}].
"""
#: Pieces of Erlang syntax the mutations splice in.
PIECES = [
    b"{",
    b"}",
    b"[",
    b"]",
    b"<<",
    b">>",
    b"#{",
    b"=>",
    b"|",
    b",",
    b".",
    b". ",
    b"'",
    b'"',
    b"$",
    b"%",
    b"\n",
    b"\\",
    b"16#",
    b"_",
    b"e",
    b"-",
    b"X",
    b"end",
    b"\x00",
    b"\xff",
    b"99999999999999999999",
    b"{1}",
    b"{a,b}",
    b"\\x{110000}",
    b"1.0e999",
]


def _load(data: bytes, suffix: str) -> CreditSettings | None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"advanced{suffix}"
        path.write_bytes(data)
        try:
            return load_credit_config(path)
        except ConfigFileError as exc:
            text = str(exc)
            assert "\n" not in text and text.startswith(str(path)), text
            return None


@FUZZ
@given(st.binary(max_size=400), st.sampled_from([".config", ".conf"]))
def test_arbitrary_bytes(data: bytes, suffix: str) -> None:
    """IN-ONE-LINE: any bytes give settings or one ConfigFileError, nothing else."""
    _load(data, suffix)


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.integers(0, len(SEED)),
            st.integers(0, 8),
            st.sampled_from(PIECES),
        ),
        max_size=6,
    )
)
def test_mutated_real_config(edits: list[tuple[int, int, bytes]]) -> None:
    """IN-ERLANG-TERMS: a real advanced.config with pieces of Erlang syntax spliced in
    (and spans cut out) still gives settings or one ConfigFileError; an unmutated file
    gives its settings (the fuzz reaches the parser, not only the first line)."""
    data = SEED
    for at, cut, piece in edits:
        at = min(at, len(data))
        data = data[:at] + piece + data[at + cut :]
    settings = _load(data, ".config")
    if not edits:
        assert settings is not None and settings.default_credit == (400, 200)


@FUZZ
@given(
    st.recursive(
        st.one_of(
            st.integers(-(10**20), 10**20).map(lambda n: str(n).encode()),
            st.sampled_from([b"a", b"'b c'", b'"s"', b"$x", b"1.5", b"<<>>", b"#{}"]),
        ),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4).map(lambda xs: b"{" + b", ".join(xs) + b"}"),
            st.lists(inner, max_size=4).map(lambda xs: b"[" + b", ".join(xs) + b"]"),
        ),
        max_leaves=30,
    )
)
def test_generated_terms(term: bytes) -> None:
    """IN-ERLANG-TERMS: well-formed generated terms as rabbit's default credit are read
    (a pair of integers), or refused in one line (any other shape, IN-INT)."""
    _load(b"[{rabbit, [{credit_flow_default_credit, " + term + b"}]}].\n", ".config")
