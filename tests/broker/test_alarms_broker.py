"""AL-BROKER: Debian's real RabbitMQ 3.10.8 against the alarm model, checkpoint by checkpoint.

A publishing and a consuming pika connection; the memory alarm raised with
``set_vm_memory_high_watermark 0`` and cleared with ``0.4``. The model predicts each
connection's ``list_connections`` state, the ``Connection.Blocked``/``Unblocked`` frames
each client gets, what the consumer has received and what is queued.
"""

from __future__ import annotations

import pytest

from creditflow.adapters.rabbitmq.alarms import (
    CONSUMER,
    PUBLISHER,
    broker_alarm_run,
    model_alarm_run,
    scenario_config,
)
from creditflow.adapters.rabbitmq.broker import PrivateBroker
from creditflow.model.alarms.properties import AlarmProperties
from creditflow.model.alarms.rules import AlarmModel

pytestmark = pytest.mark.xdist_group("broker")

BEFORE, AFTER = 10, 3


def _run_scenarios(workdir):
    out = {}
    with PrivateBroker(workdir) as broker:
        for empty_body in (False, True):
            expected, visited = model_alarm_run(BEFORE, AFTER, empty_body)
            actual = broker_alarm_run(
                broker, BEFORE, AFTER, expected.checkpoints, empty_body=empty_body
            )
            out[empty_body] = (expected, visited, actual)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Both scenarios on one private broker (the same PrivateBroker as conftest's fixture),
    run once and the broker stopped at once; the results are plain data. Broker tests run
    in their own single-process pytest pass (see tests/conftest.py)."""
    return _run_scenarios(tmp_path_factory.mktemp("alarm-broker"))


def test_model_prediction_satisfies_the_alarm_properties(runs):
    """AL-BLOCK-ON-PUBLISH, AL-CONSUMERS, AL-UNBLOCKED, AL-NOTHING-LOST, AL-CLUSTER on every
    state the model passes through in the scenario."""
    for empty_body in (False, True):
        _, visited, _ = runs[empty_body]
        properties = AlarmProperties(AlarmModel(scenario_config(BEFORE, AFTER, empty_body)))
        assert all(properties.violations(s) == () for s in visited)
    expected = runs[False][0]
    assert [c.states[PUBLISHER] for c in expected.checkpoints] == [
        "running",
        "blocking",
        "blocking",
        "blocked",
        "running",
    ]


@pytest.mark.parametrize("empty_body", [False, True], ids=["with-body", "empty-body"])
def test_broker_matches_the_model_at_every_checkpoint(runs, empty_body):
    """AL-BROKER, AL-REPORTED-STATE: each checkpoint of the real broker equals the model's,
    for publishes with a body and with an empty body."""
    expected, _, actual = runs[empty_body]
    assert [c.name for c in actual.checkpoints] == [c.name for c in expected.checkpoints]
    for want, got in zip(expected.checkpoints, actual.checkpoints, strict=True):
        assert got == want, f"checkpoint {want.name}: broker {got} != model {want}"


def test_only_the_publisher_is_blocked_and_told(runs):
    """AL-BLOCK-ON-PUBLISH, AL-BLOCKED-ONCE, AL-CONSUMERS: the publisher's connection goes
    blocked and gets one Connection.Blocked; the consumer stays 'blocking' (never blocked),
    gets no frame, and receives everything queued before the alarm while it is on."""
    _, _, actual = runs[False]
    by_name = {c.name: c for c in actual.checkpoints}
    under = by_name["published-under-alarm"]
    assert under.states == {PUBLISHER: "blocked", CONSUMER: "blocking"}
    assert under.notices == {PUBLISHER: ("connection.blocked",), CONSUMER: ()}
    assert by_name["consumed"].consumed == BEFORE and by_name["consumed"].queued == 0
    assert under.consumed == BEFORE and under.queued == 0  # nothing got through while blocked


def test_clearing_unblocks_and_nothing_is_lost(runs):
    """AL-UNBLOCKED, AL-NOTHING-LOST: clearing the alarm sends one Connection.Unblocked,
    publishing resumes, every message arrives once and in order, every publish confirmed."""
    _, _, actual = runs[False]
    cleared = actual.checkpoints[-1]
    assert cleared.notices[PUBLISHER] == ("connection.blocked", "connection.unblocked")
    assert cleared.states == {PUBLISHER: "running", CONSUMER: "running"}
    assert actual.bodies == [str(i).encode() for i in range(BEFORE + AFTER)]
    assert actual.confirmed == BEFORE + AFTER


def test_empty_bodies_let_one_publish_through_per_alarm(runs):
    """AL-ONE-PUBLISH (AL6): with empty bodies the first publish under the alarm completes at
    its header and reaches the consumer before the reader blocks; the rest wait."""
    _, _, actual = runs[True]
    under = {c.name: c for c in actual.checkpoints}["published-under-alarm"]
    assert under.states[PUBLISHER] == "blocked" and under.consumed == BEFORE + 1
    assert actual.bodies == [str(i).encode() for i in range(BEFORE + AFTER)]
