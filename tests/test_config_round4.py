"""Issue 30, classes 1-4 and the FIFO: the config reader reads exactly what Erlang's
``file:consult/1`` reads (IN-ERLANG-TERMS), in memory linear in the file (IN-LINEAR),
refuses dotted credit keys in rabbitmq.conf (IN-RABBITMQ-CONF) and never blocks on a
file that is not a regular file (IN-READ)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from creditflow.conformance.inputs.erlang_terms import parse_terms
from creditflow.conformance.inputs.rabbitmq_config import ConfigFileError, load_credit_config
from creditflow.conformance.inputs.reading import InputError, parse_json, read_text
from creditflow.model.credit.spec import CreditSpec

RABBIT = b"{rabbit,[{credit_flow_default_credit,{400,0}}]}"


def _write(tmp_path: Path, data: bytes, name: str = "advanced.config") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"[{kernel,[{a,<<1.5>>}]}," + RABBIT + b"].", "float"),
        (b"[{kernel,[{a,'" + b"x" * 256 + b"'}]}," + RABBIT + b"].", "255"),
        (b"[{kernel,[{a," + b"x" * 256 + b"}]}," + RABBIT + b"].", "255"),
        (b'[{kernel,[{a,"\\x{D800}"}]},' + RABBIT + b"].", "not a character"),
        (b'[{kernel,[{a,"\\x{}"}]},' + RABBIT + b"].", "\\x{"),
        (b"[{kernel,[{a,<<1/foo>>}]}," + RABBIT + b"].", "type specifier"),
        (b"[{kernel,[{a,<<1/binary>>}]}," + RABBIT + b"].", "binary"),
        (b"[{kernel,[{a,<<1:7/float>>}]}," + RABBIT + b"].", "16, 32 or 64"),
        (b"[{kernel,[{a,<<1/unit:8>>}]}," + RABBIT + b"].", "unit"),
        (b"[{kernel,[{a,<<16#D800/utf8>>}]}," + RABBIT + b"].", "utf8"),
        (b"\xef\xbb\xbf[" + RABBIT + b"].", "byte-order mark"),
    ],
)
def test_class1_what_erlang_refuses_is_refused(tmp_path: Path, body: bytes, problem: str) -> None:
    """IN-ERLANG-TERMS: files ``file:consult/1`` refuses (RabbitMQ would not boot) are
    refused in one line naming the file, not read as credits."""
    path = _write(tmp_path, body)
    with pytest.raises(ConfigFileError) as raised:
        load_credit_config(path)
    message = str(raised.value)
    assert "\n" not in message and message.startswith(str(path)), message
    assert problem in message, message


@pytest.mark.parametrize(
    "body",
    [
        "[{kernel,[{a,\u00a0b}]},\u00a0" + RABBIT.decode() + "].",
        "[" + RABBIT.decode() + "].\x1a",
        "[{kernel,[{a,else}]}," + RABBIT.decode() + "].",
        '[{kernel, ""},' + RABBIT.decode() + "].",
        "[" + RABBIT.decode() + ',{kernel,"ab"},{x,<<"a" "b", 1.5/float, 1:16/float>>}].',
        "[" + RABBIT.decode() + ",{x," + "[" * 46 + "a" + "]" * 46 + "}].",
    ],
)
def test_class2_what_erlang_reads_is_read(tmp_path: Path, body: str) -> None:
    """IN-ERLANG-TERMS: what ``file:consult/1`` reads is read: Erlang's blanks (the
    no-break space, Ctrl-Z), ``else`` (OTP 25), ``""`` (the empty list), 48 nested
    containers (IN-DEPTH counts containers)."""
    settings = load_credit_config(_write(tmp_path, body.encode()))
    assert settings.effective_default == CreditSpec(400, 0)


def test_class2_rabbit_with_an_empty_string_is_the_empty_list(tmp_path: Path) -> None:
    """IN-CONFIG-KEYS: ``{rabbit, ""}`` is ``{rabbit, []}``: the defaults."""
    settings = load_credit_config(_write(tmp_path, b'[{rabbit, ""}].'))
    assert settings.default_credit is None and settings.msg_store_credit is None


def test_49_nested_containers_are_refused() -> None:
    """IN-DEPTH: 48 containers nest; the 49th is refused."""
    parse_terms("[" * 48 + "]" * 48 + ".", "t")
    with pytest.raises(InputError, match="IN-DEPTH"):
        parse_terms("[" * 49 + "]" * 49 + ".", "t")


def _peak(parse: Callable[[str, str], object], text: str) -> int:
    tracemalloc.start()
    try:
        parse(text, "t")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("parse", "template"),
    [
        (parse_terms, '[{rabbit, [{x, "%s"}, {y, <<"%s"/utf8>>}]}].'),
        (parse_json, '{"x": "%s", "y": "%s"}'),
    ],
)
def test_class3_memory_is_linear_in_a_long_string(
    parse: Callable[[str, str], object], template: str
) -> None:
    """IN-LINEAR: reading a long string costs a few bytes per character (not hundreds,
    as a pattern repeating a group did), and 4 times the string costs at most about 4
    times the memory. Measured by tracemalloc, not by time."""
    small, large = 200_000, 800_000
    body_small = "a\\n" * (small // 3)
    body_large = "a\\n" * (large // 3)
    peak_small = _peak(parse, template % (body_small, body_small))
    peak_large = _peak(parse, template % (body_large, body_large))
    assert peak_large <= 12 * 2 * len(body_large), (peak_large, len(body_large))
    assert peak_large <= 5 * peak_small, (peak_small, peak_large)


@pytest.mark.parametrize(
    "line",
    [
        "credit_flow_default_credit.initial_credit = 400",
        "credit_flow_default_credit.more_credit_after = 0",
        "rabbit.msg_store_credit_disc_bound.initial_credit = 4000",
        "credit_flow_default_credit.1 = 400",
    ],
)
def test_class4_dotted_credit_keys_are_refused(tmp_path: Path, line: str) -> None:
    """IN-RABBITMQ-CONF: a line whose key names a credit setting, with any dotted
    suffix, is refused with the hint to use advanced.config (RabbitMQ refuses it)."""
    path = _write(tmp_path, f"# x\n{line}\n".encode(), "rabbitmq.conf")
    with pytest.raises(ConfigFileError) as raised:
        load_credit_config(path)
    message = str(raised.value)
    assert message.startswith(f"{path}:2: ") and "advanced.config" in message, message


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """IN-READ: a FIFO with no writer (or any file that is not a regular file) is
    refused at once in one line; the reader never blocks on it."""
    fifo = tmp_path / "advanced.config"
    os.mkfifo(fifo)
    outcome: list[BaseException | str] = []

    def read() -> None:
        try:
            read_text(fifo)
            outcome.append("read")
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # unblock the reader so the test run does not hang
        with open(fifo, "wb"):
            pass
        reader.join(10)
        pytest.fail("read_text blocked on a FIFO with no writer")
    assert len(outcome) == 1 and isinstance(outcome[0], InputError), outcome
    assert str(outcome[0]).startswith(str(fifo)) and "not a regular file" in str(outcome[0])
    with pytest.raises(ConfigFileError, match="not a regular file"):
        load_credit_config(fifo)


def test_check_with_a_fifo_config_exits_2_at_once(tmp_path: Path) -> None:
    """IN-READ through the CLI: ``check --config FIFO`` (no writer) ends with exit 2 and
    one stderr line naming the file, instead of blocking (the subprocess is killed and
    the test fails after 120 s if it hangs)."""
    fifo = tmp_path / "advanced.config"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "creditflow.conformance.cli", "check", "stalled-queue"]
        + ["--config", str(fifo), "--publishes", "2", "--no-prove"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(fifo) in lines[0] and "not a regular file" in lines[0]
