"""``conform --adapter rabbit-fifo`` against the model's queue end
(AD-AMQ-FIFO-CONFORM): RabbitMQ 3.10.8's ``rabbit_fifo`` agrees with AMQ-QQ-CREDITED and
AMQ-QQ-CHECKOUT for credited consumers (drain included) and is caught, with a shortest
trace, crediting a ``simple_prefetch`` consumer twice for a return dropped at the
delivery limit (AMQ-QQ-PREFETCH; fixed in 3.11.0). Needs Erlang and the installed
beams (``make test`` installs them), not a broker."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.adapters.amqp.rabbit_fifo import RabbitFifoAdapter, locate_rabbit_ebin
from creditflow.conformance.cli import main
from creditflow.conformance.families.amqp.queue_conform import (
    QUEUE_ALPHABET,
    QUEUE_SIZES,
    QueueModel,
    QueueOp,
    run_queue_ops,
)
from tests.adapter_setup import started_amqp_adapter
from tests.json_schemas import validate

pytest_plugins = ["pytester"]


def test_erlang_and_rabbit_fifo_are_installed() -> None:
    """AD-AMQ-FIFO: ``make test`` installs Erlang and RabbitMQ's beams; a machine without
    them fails here, it does not skip this module."""
    assert shutil.which("erl") is not None, "erl is missing (scripts/setup.sh installs it)"
    assert locate_rabbit_ebin().is_dir()


CREDITED, PREFETCH_1_LIMIT_0, PREFETCH_2 = QUEUE_SIZES


@pytest.fixture(scope="module")
def fifo() -> Iterator[RabbitFifoAdapter]:
    yield from started_amqp_adapter("rabbit-fifo", RabbitFifoAdapter)


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_the_model_queue_end_by_hand() -> None:
    """AMQ-QQ-CREDITED, AMQ-QQ-PREFETCH as the conform model plays them."""
    m = QueueModel.start(CREDITED)
    m.apply(QueueOp("enqueue"))
    assert m.apply(QueueOp("drain", 2)) == 1
    assert m.view(0) | {"delivered": 0} == {
        "ready": 0,
        "credit": 0,
        "delivery_count": 2,
        "checked_out": 1,
        "delivered": 0,
    }
    p = QueueModel.start(PREFETCH_1_LIMIT_0)
    assert p.apply(QueueOp("enqueue")) == 1 and p.consumer.credit == 0
    p.apply(QueueOp("return"))  # dropped at limit 0: one credit back, not two
    assert (p.consumer.credit, p.msgs.ready) == (1, 0)


def test_credited_consumers_agree_with_the_model_up_to_depth_3(fifo: RabbitFifoAdapter) -> None:
    """AD-AMQ-FIFO-CONFORM: every op sequence of up to 3 ops, credited and prefetch 2."""
    runs = 0
    for sizes in (CREDITED, PREFETCH_2):
        for n in range(1, 4):
            for seq in itertools.product(QUEUE_ALPHABET, repeat=n):
                run = run_queue_ops(fifo, sizes, seq)
                assert not run.failed, run
                runs += 1
    assert runs > 100


def test_conform_catches_the_double_credit_of_a_dropped_return() -> None:
    """AD-AMQ-FIFO-CONFORM through the CLI: exit 1 with the shortest trace."""
    code, out = cli("conform", "--adapter", "rabbit-fifo", "--seed", "1")
    assert code == 1, out
    assert "rabbit-fifo 3.10.8" in out and "DIVERGENCE found by explorer-runs" in out
    assert "(sizes: mode simple_prefetch, prefetch 1, delivery_limit 0)" in out
    assert "     1  enqueue\n  >  2  return" in out
    assert "    credit  1      2" in out
    code, out = cli("conform", "--adapter", "rabbit-fifo", "--seed", "1", "--json")
    validate("conform", out.splitlines()[-1])
    doc = json.loads(out.splitlines()[-1])
    assert (code, doc["verdict"], doc["run"]["ops"]) == (1, "divergence", ["enqueue", "return"])


def test_a_bad_ebin_and_options_that_do_not_apply() -> None:
    """AD-AMQ-FIFO-CONFORM: no beams is exit 3 in one line; expectations and replay are
    a usage error."""
    code, out = cli("conform", "--adapter", "rabbit-fifo", "--rabbitmq-ebin", "/", "--seed", "1")
    assert code == 3 and "no rabbit_fifo.beam" in out
    # AD-AMQ-FIFO-EXPECTATIONS: a missing expectations file is one line, exit 2
    code, out = cli("conform", "--adapter", "rabbit-fifo", "--expectations", "x.json")
    assert code == 2 and "x.json: no such file" in out
    # a link-end trace (not "/", whose traces other tests write and remove meanwhile)
    link = (
        Path(__file__).resolve().parents[1]
        / "conformance/corpus/amqp/rhea-3.0.5-ring-stall.itf.json"
    )
    code, out = cli("replay", str(link), "--adapter", "rabbit-fifo")
    assert code == 2 and "not a queue-run trace" in out  # AD-AMQ-FIFO-REPLAY


def test_the_plugin_refuses_rabbit_fifo_for_link_traces(pytester: pytest.Pytester) -> None:
    """AD-AMQ-FIFO-CONFORM: the plugin says so instead of failing every item."""
    result = pytester.runpytest(".", "--creditflow-adapter=rabbit-fifo", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*rabbit-fifo runs queue ops, not AMQP link traces*"])
