"""``creditflow conform --adapter rabbit-fifo``: RabbitMQ's quorum-queue state machine
against the model's queue end (AD-AMQ-FIFO-CONFORM). Rendering only; the engine is
``differential/amqp_queue_conform.py``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import click

from creditflow.adapters.registry import amqp_adapter_factory
from creditflow.conformance import exit_codes
from creditflow.conformance.cli.common import Saver, fail
from creditflow.conformance.differential.amqp_protocol import DEFAULT_AMQP_EXAMPLES
from creditflow.conformance.differential.amqp_queue_conform import (
    QUEUE_PHASES,
    queue_run_lines,
    run_queue_conform,
)
from creditflow.conformance.outputs.streams import printable
from creditflow.conformance.runtime import signals

#: AD-AMQ-FIFO-CONFORM: ops per Hypothesis run without --steps
DEFAULT_QUEUE_STEPS = 15


def conform_queue(
    timeout: float,
    max_examples: int | None,
    steps: int | None,
    depth: int,
    seed: int | None,
    phases: tuple[str, ...],
    as_json: bool,
    rabbitmq_ebin: Path | None,
) -> None:
    """AD-AMQ-FIFO-CONFORM: exit 0 conformant, 1 diverged (the first diverging op and
    the shortest trace), 3 the adapter failed (no Erlang or beams: one line)."""
    factory = amqp_adapter_factory("rabbit-fifo", timeout=timeout, rabbitmq_ebin=rabbitmq_ebin)
    if seed is None:
        seed = random.randrange(2**32)
    click.echo(f"creditflow conform: seed {seed}", err=as_json)
    signals.note(seed=seed)
    result = run_queue_conform(
        factory,
        seed,
        depth,
        DEFAULT_AMQP_EXAMPLES if max_examples is None else max_examples,
        DEFAULT_QUEUE_STEPS if steps is None else steps,
        tuple(p for p in QUEUE_PHASES if p in phases) if phases else QUEUE_PHASES,
    )
    saver = Saver()
    if as_json:
        click.echo(json.dumps(saver.annotate(result.to_json())))
        saver.exit(result.exit_code)
    if result.failure is not None and not result.phases:
        fail(result.failure, exit_codes.ADAPTER_FAILURE)
    click.echo(f"creditflow conform: {printable(result.adapter)} {result.version}, seed {seed}")
    policy = ", ".join(f"{k} {v}" for k, v in result.policy.items())
    click.echo(f"  policy: {printable(policy)}")
    for p in result.phases:
        click.echo(f"  {p.name:15} {p.runs:6,} runs {p.ops:9,} ops {p.seconds:7.2f} s")
    if result.failure is not None:
        fail(result.failure, exit_codes.ADAPTER_FAILURE)
    if result.run is None:
        ops = sum(p.ops for p in result.phases)
        click.echo(f"CONFORMANT: no divergence from the model's queue end in {ops:,} ops")
    else:
        click.echo(f"DIVERGENCE found by {result.found_by}")
        for line in queue_run_lines(result.run):
            click.echo(printable(line))
    saver.exit(result.exit_code)
