"""Fuzzing the Erlang-term reader of config files (IN-ERLANG-TERMS, IN-CONFIG,
IN-ONE-LINE): arbitrary bytes, and mutations of a real advanced.config, never raise
anything but the one error type, :class:`ConfigFileError`, whose text is one line
``FILE:LINE: problem`` or ``FILE: problem``; through the CLI, `check --config` and
`show` (TRACE-STEPS) keep the promises of IN-ONE-LINE. Derandomized, no example
database."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from creditflow.conformance.explore.check import CheckOptions, check_graph
from creditflow.conformance.inputs.graphs import load_preset
from creditflow.conformance.inputs.rabbitmq_config import (
    ConfigFileError,
    CreditSettings,
    load_credit_config,
)
from creditflow.conformance.traces.network import network_trace
from tests.fuzz.hostile import fuzz_settings, mutated_json, run_cli

FUZZ = fuzz_settings(300)

SEED = b"""%% advanced.config
[{rabbit, [{credit_flow_default_credit, {400, 200}},
           {msg_store_credit_disc_bound, {4000, 800}},
           {log, #{level => debug, "f" => <<"x"/utf8, 1:8>>}},
           {tags, ['q a', $a, 16#FF, 1_000, -2.5e3, [a | b]]}]},
 {kernel, [{net_ticktime, 60}]}].
"""


def _network_trace() -> dict:
    """A credit-network counterexample: stalled-queue's, as ``check`` writes it."""
    system, result = check_graph(load_preset("stalled-queue"), CheckOptions(stop_at_deadlock=True))
    finding = result.primary()
    assert finding is not None
    return json.loads(json.dumps(network_trace(system, finding, "stalled-queue")))


NETWORK_TRACE = _network_trace()
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


CLI_FUZZ = settings(FUZZ, max_examples=40)


def _run_cli_on(data: bytes, name: str, args: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / name).write_bytes(data)
        return run_cli([a.replace("@", name) for a in args], cwd, ("counterexamples",)).exit_code


@CLI_FUZZ
@given(st.lists(st.tuples(st.integers(0, len(SEED)), st.sampled_from(PIECES)), max_size=3))
def test_check_with_a_mutated_config(edits: list[tuple[int, bytes]]) -> None:
    """IN-CONFIG, IN-ONE-LINE through the CLI: `check --config` with a mutated file ends
    with a documented exit code, one stderr line for bad input, no traceback."""
    data = SEED.replace(b"{400, 200}", b"{2, 1}").replace(b"{4000, 800}", b"{2, 1}")
    for at, piece in edits:
        data = data[:at] + piece + data[at:]
    args = ["check", "stalled-queue", "--config", "@", "--publishes", "3", "--no-prove"]
    assert _run_cli_on(data, "advanced.config", args) in {0, 2, 4, 10}


@CLI_FUZZ
@given(mutated_json(NETWORK_TRACE))
def test_show_a_mutated_network_trace(data: bytes) -> None:
    """TRACE-STEPS, TRACE-REPLAY, IN-ONE-LINE: `show` of a mutated credit-network trace
    lists it (when it still replays) or refuses it in one line, exit 2."""
    assert _run_cli_on(data, "t.itf.json", ["show", "@"]) in {0, 2}
