"""Differential test of the config reader against Erlang itself (IN-ERLANG-TERMS,
IN-CONFIG-KEYS): generated ``advanced.config`` files are read by creditflow and by
``file:consult/1`` in one ``erl -noshell`` for the whole session (tests/fuzz/
consult_oracle.erl, which also applies IN-CONFIG-KEYS in Erlang). The test fails on a
file one accepts and the other refuses, and on different credit values. The only
allowed difference is creditflow's own documented bounds (IN-DEPTH, IN-INT), which
Erlang does not have. Derandomized, no example database."""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from creditflow.conformance.inputs.rabbitmq_config import ConfigFileError, load_credit_config
from creditflow.model.credit.spec import CreditSpec
from tests.fuzz.hostile import fuzz_settings

ORACLE = Path(__file__).with_name("consult_oracle.erl")
#: creditflow's bounds that Erlang does not have: a refusal citing one of them, of a
#: file Erlang reads, is the documented difference, not a divergence.
OWN_BOUNDS = ("IN-DEPTH)", "IN-INT)")


class Consult:
    """One ``erl`` running the oracle; :meth:`read` sends a path, returns its line."""

    def __init__(self, folder: Path) -> None:
        erlc = shutil.which("erlc")
        erl = shutil.which("erl")
        assert erlc and erl, "erl/erlc missing: scripts/setup.sh installs erlang-base"
        subprocess.run([erlc, "-o", str(folder), str(ORACLE)], check=True, capture_output=True)
        self.process = subprocess.Popen(
            [erl, "-noshell", "-pa", str(folder), "-s", "consult_oracle", "main"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def read(self, path: Path) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{path}\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def consult() -> Iterator[Consult]:
    with tempfile.TemporaryDirectory() as folder:
        oracle = Consult(Path(folder))
        yield oracle
        oracle.close()


def _ours(path: Path) -> str:
    try:
        found = load_credit_config(path)
    except ConfigFileError as exc:
        return f"refused {exc}"

    def spec(value: CreditSpec | None) -> str:
        return "none" if value is None else f"{value.initial},{value.more_after}"

    return f"ok {spec(found.default_credit)} {spec(found.msg_store_credit)}"


def assert_same(consult: Consult, data: bytes) -> None:
    """Both readers agree on ``data`` as an advanced.config."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "advanced.config"
        path.write_bytes(data)
        theirs = consult.read(path)
        ours = _ours(path)
    if ours.startswith("refused"):
        if theirs == "ok" or theirs.startswith("ok "):
            assert any(bound in ours for bound in OWN_BOUNDS), (data, ours, theirs)
        return
    assert ours == theirs, (data, ours, theirs)


# -- the cases of issue 30 ----------------------------------------------------------------------

RABBIT = b"{rabbit,[{credit_flow_default_credit,{400,0}}]}"
ISSUE_30 = [
    b"[{kernel,[{a,<<1.5>>}]}," + RABBIT + b"].",
    b"[{kernel,[{a,'" + b"x" * 256 + b"'}]}," + RABBIT + b"].",
    b"[{kernel,[{a,'" + b"x" * 255 + b"'}]}," + RABBIT + b"].",
    b'[{kernel,[{a,"\\x{D800}"}]},' + RABBIT + b"].",
    b'[{kernel,[{a,"\\x{}"}]},' + RABBIT + b"].",
    b"[{kernel,[{a,\xc2\xa0b}]},\xc2\xa0" + RABBIT + b"].",
    b"[" + RABBIT + b"].\x1a",
    b"[{kernel,[{a,else}]}," + RABBIT + b"].",
    b'[{rabbit, ""}].',
    b"[" + RABBIT + b",{x," + b"[" * 46 + b"a" + b"]" * 46 + b"}].",
    b"\xef\xbb\xbf[" + RABBIT + b"].",
]


@pytest.mark.parametrize("data", ISSUE_30)
def test_issue_30_cases_agree_with_erlang(consult: Consult, data: bytes) -> None:
    """IN-ERLANG-TERMS: each case of issue 30 classes 1 and 2 is read as Erlang reads it."""
    assert_same(consult, data)


# -- generated files ----------------------------------------------------------------------------

BLANKS = st.sampled_from([" ", " ", "\n", "\t", "\u00a0", "\x1a", "\x85", "\r\n", " %c\n"])
NAMES = ["a", "kernel", "b_2", "x@y", "else", "maybe", "\u00dfa", "n\u00e9", "rabbit"]
GOOD_ESCAPES = ["\\n", "\\x41", "\\x{263A}", "\\101", "\\8", "\\^a", "\\z", '\\"', "\\s"]
GOOD_ESCAPES += ["\\'", "\\\\", "\\x{0000041}", "\\x{10FFFF}"]
GOOD_ESCAPES += ['\\^"', "\\^'", "\\\\\\n", "\\\n"]
BAD_ESCAPES = ["\\x{D800}", "\\x{}", "\\x{110000}", "\\x4", "\\x{41"]
GOOD_INTEGERS = ["1_000", "16#FF", "2#101", "36#z", "16#f_f", "$a", "$\\n", "$\\x{41}", "- 1"]
GOOD_INTEGERS += ["+2", "-$a", "$ "]
BAD_INTEGERS = ["99999999999999999999", "$\\x{D800}", "1__0", "1_", "2#102", "- -1"]
GOOD_FLOATS = ["1.5", "2.0e-3", "1_0.5", "1.5E+3", "0.0", "-2.5", "1.5e1_0"]
BAD_FLOATS = ["1.0e999", "1.", "1e5"]
GOOD_SEGMENTS = ["1", "-1", "$a", '"ab"', '"a" "b"', "300", "1:16", "1:0", "1:1", "1.5/float"]
GOOD_SEGMENTS += ["1.5:32/float", "1/float", '"x"/utf8', '"ab"/utf16', "$a/utf8", "1:8/unit:8"]
GOOD_SEGMENTS += ["1.5/float-little", "1:8/signed-integer", "1.5/float-float", "1:16/float"]
BAD_SEGMENTS = ["1.5", "1/foo", "1/binary", '"x"/binary', "1/bits", "1:7/float", "1/unit:8"]
BAD_SEGMENTS += ["16#D800/utf8", "1:8/utf8", "1:8/big-little", "1:8/unit:0", "1.5/integer"]
BAD_SEGMENTS += ["-1/utf8", "1.5:8/float"]


def _text(escapes: list[str]) -> st.SearchStrategy[str]:
    plain = st.text(
        st.characters(
            blacklist_categories=("Cs",), blacklist_characters="\x00\\\"'", max_codepoint=0x2FF
        ),
        max_size=6,
    )
    return st.lists(st.one_of(plain, st.sampled_from(escapes)), max_size=3).map("".join)


def _scalars(hostile: bool) -> st.SearchStrategy[str]:
    """Scalars; with ``hostile``, also the pieces Erlang refuses (or we must not)."""
    escapes = GOOD_ESCAPES + (BAD_ESCAPES if hostile else [])
    segments = GOOD_SEGMENTS + (BAD_SEGMENTS if hostile else [])
    names = NAMES + (["end", "cond", "'" + "q" * 256 + "'", "a" * 256] if hostile else [])
    return st.one_of(
        st.sampled_from(names + ["'" + "q" * 255 + "'"]),
        _text(escapes).map(lambda t: f"'{t}'"),
        _text(escapes).map(lambda t: f'"{t}"'),
        st.just('""'),
        st.integers(-1000, 5000).map(str),
        st.sampled_from(
            GOOD_INTEGERS + GOOD_FLOATS + (BAD_INTEGERS + BAD_FLOATS if hostile else [])
        ),
        st.lists(st.sampled_from(segments), max_size=3).map(lambda s: "<<" + ",".join(s) + ">>"),
    )


def _joined(blank: str, items: list[str]) -> str:
    return ("," + blank).join(items)


def _terms(hostile: bool) -> st.SearchStrategy[str]:
    return st.recursive(
        _scalars(hostile),
        lambda inner: st.one_of(
            st.builds(
                lambda b, xs: "{" + b + _joined(b, xs) + "}", BLANKS, st.lists(inner, max_size=3)
            ),
            st.builds(
                lambda b, xs: "[" + _joined(b, xs) + b + "]", BLANKS, st.lists(inner, max_size=3)
            ),
            st.builds(lambda x, t: "[" + x + "|" + t + "]", inner, inner),
            st.lists(st.tuples(inner, inner), max_size=2).map(
                lambda kv: "#{" + ",".join(f"{k}=>{v}" for k, v in kv) + "}"
            ),
        ),
        max_leaves=8,
    )


def _deep(hostile: bool) -> st.SearchStrategy[str]:
    """Nested lists as a value of an application (2 containers outside): 46 are the
    most IN-DEPTH allows there; hostile ones go past it."""
    return st.integers(40, 50 if hostile else 46).map(lambda n: "[" * n + "a" + "]" * n)


@functools.cache
def _files(hostile: bool) -> st.SearchStrategy[bytes]:
    """advanced.config files: clean ones (Erlang reads them) or hostile ones."""
    terms = _terms(hostile)
    small = st.integers(-5, 5000).map(str)
    number = st.one_of(small, st.sampled_from(GOOD_INTEGERS)) if not hostile else _scalars(True)
    credit = st.one_of(
        st.builds(lambda b, i, m: "{" + i + "," + b + m + "}", BLANKS, number, number),
        terms if hostile else st.nothing(),
    )
    default = st.builds(lambda v: "{credit_flow_default_credit," + v + "}", credit)
    msg_store = st.builds(lambda v: "{msg_store_credit_disc_bound," + v + "}", credit)
    other = st.builds(lambda k, v: "{" + k + "," + v + "}", st.sampled_from(NAMES), terms)
    deep = st.builds(lambda k, v: "{" + k + "," + v + "}", st.sampled_from(NAMES), _deep(hostile))
    settings_list = st.lists(
        st.one_of(default, msg_store, other, deep) if hostile else st.one_of(default, msg_store),
        min_size=0 if hostile else 1,
        max_size=3,
        unique_by=lambda s: s[:14],
    ).map(lambda s: "[" + ",".join(s) + "]")
    rabbit = st.one_of(
        settings_list, st.sampled_from(['""', '"ab"', "x"] if hostile else ['""', "[]"])
    )
    other_app = st.builds(
        lambda k, v: "{" + k + "," + v + "}", st.sampled_from(NAMES[:4]), st.one_of(terms, deep)
    )
    apps = st.builds(
        lambda before, app, after: [*before, app, *after],
        st.lists(other_app, max_size=1),
        st.builds(lambda s: "{rabbit," + s + "}", rabbit),
        st.lists(other_app, max_size=1),
    )
    if hostile:
        apps = st.lists(st.one_of(apps.map(lambda a: a[0]), other_app), min_size=1, max_size=3)
    tails = ["", "\n", "\x1a", " \x1a\n", "\u00a0", "%end"]
    return st.builds(
        lambda bom, lead, apps, blank, tail: (
            bom + lead + "[" + blank + ("," + blank).join(apps) + "]." + tail
        ).encode("utf-8"),
        st.sampled_from(["", "\ufeff"] if hostile else [""]),
        st.sampled_from(["", "%% advanced.config\n", "\u00a0", "\n\n"]),
        apps,
        BLANKS,
        st.sampled_from(tails + ([".", "x", "\ufeff"] if hostile else [])),
    )


#: Two clean files for one hostile one.
CONFIG_FILES = st.integers(0, 2).flatmap(lambda n: _files(n == 0))


DIFFERENTIAL = fuzz_settings(300)


@DIFFERENTIAL
@given(CONFIG_FILES)
def test_generated_configs_agree_with_erlang(consult: Consult, data: bytes) -> None:
    """IN-ERLANG-TERMS, IN-CONFIG-KEYS: creditflow and ``file:consult/1`` accept and
    refuse the same generated files and read the same credits."""
    assert_same(consult, data)
