"""FAM-CHECKING for AMQP on the one explorer (EXP-FIRST, EXP-INTERN): the packed system
is tied to the readable model (``model/amqp/system.py``) — same states, numbering,
verdicts and shortest runs on every preset and on random small topologies, every
expansion and every state's properties compared — and the search keeps the figures the
old AMQP search (``conformance/explore/amqp.py`` of 6a55cb7) recorded."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli.root import main
from creditflow.conformance.explore.explorer import DeadlinePassed, explore_first
from creditflow.conformance.explore.interned import DeclarationError, Group
from creditflow.conformance.families.amqp import checking
from creditflow.conformance.families.amqp.checking import (
    STALL,
    AmqpReadable,
    amqp_system,
    check_amqp,
    search,
)
from creditflow.conformance.inputs.amqp_topologies import amqp_preset_names, read_amqp_preset
from creditflow.model.amqp.queue import QueuePolicy
from creditflow.model.amqp.topology import Topology
from tests.test_amqp_every_supply import random_topology

#: recorded with the old search at 6a55cb7 (``search(t, 200_000)``): states, complete,
#: the property and the length of its shortest run
OLD_PRESETS = {
    "credit-as-delta": (18, False, "PROP-AMQ-AGREE", 6),
    "limit-removed-no-go": (50, False, "PROP-AMQ-PUBLISHER-GO", 9),
    "rabbitmq4-consume": (1918, True, None, None),
    "rabbitmq4-publish": (36, True, None, None),
    "regrant-ignores-in-flight": (30, False, "PROP-AMQ-AGREE", 8),
    "ring-one-held": (10, False, "PROP-AMQ-NO-STALL", 7),
    "session-window-never-renewed": (14, False, "PROP-AMQ-NO-STALL", 8),
    "threshold-reset-by-grant": (71, False, "PROP-AMQ-NO-STALL", 6),
}
#: ... and rabbitmq4-consume's complete searches at larger supplies (the 20 in
#: benchmarks/amqp_explore_bench.py: 2,879,398 states)
OLD_CONSUME = {6: 8435, 8: 28286}


def _key(result):
    v = result.violation
    return (
        result.states,
        result.complete,
        None if v is None else (v.prop, v.props, v.steps, v.states),
    )


def _same_searches(t: Topology, budget: int = 20_000) -> None:
    """The packed and the readable system give the same search, and every expansion
    and property of the packed one equals the readable model's (``verify``)."""
    packed = amqp_system(t)
    packed.verify = True
    a = explore_first(packed, max_states=budget)
    b = explore_first(AmqpReadable(t), max_states=budget)
    assert (a.n_states, a.complete, a.index, a.property_ids) == (
        b.n_states,
        b.complete,
        b.index,
        b.property_ids,
    )
    assert [packed.decode(s) for s in a.graph.states] == list(b.graph.states)
    assert list(a.graph.action) == list(b.graph.action)
    assert list(a.graph.parent) == list(b.graph.parent)
    assert _key(search(t, budget)) == _key(search(t, budget, packed=False))


def test_the_amqp_family_names_its_checking_part():
    from creditflow.conformance.family.registry import get

    assert get("amqp").checking.load() is checking.CHECKING


@pytest.mark.parametrize("name", sorted(OLD_PRESETS))
def test_every_preset_keeps_the_old_figures_and_both_systems_agree(name):
    """AMQ-TS, EXP-FIRST: states, verdict and shortest length as recorded, and the
    packed system equals the readable one state for state (EXP-INTERN)."""
    t = read_amqp_preset(name).topology
    r = search(t, 200_000)
    v = r.violation
    assert (r.states, r.complete, v and v.prop, v and len(v.steps)) == OLD_PRESETS[name]
    _same_searches(t)


def test_every_preset_is_a_known_one():
    assert sorted(amqp_preset_names()) == sorted(OLD_PRESETS)


@pytest.mark.parametrize("supply", sorted(OLD_CONSUME))
def test_rabbitmq4_consume_keeps_its_state_counts(supply):
    t = replace(read_amqp_preset("rabbitmq4-consume").topology, supply=supply)
    r = search(t, 100_000)
    assert (r.states, r.complete, r.violation) == (OLD_CONSUME[supply], True, None)


@pytest.mark.parametrize("seed", range(40))
def test_random_topologies_packed_equals_readable(seed):
    """EXP-INTERN on random small topologies of the three shapes (with leader changes
    on consume, AMQ-FAULT-LEADER-CHANGE): same states, numbering, verdicts, runs."""
    rng = random.Random(seed)
    t = random_topology(rng)
    if t.shape == "consume" and rng.random() < 0.5:
        assert t.queue is not None
        t = replace(t, queue=replace(t.queue, leader_changes=rng.randint(1, 2)))
    _same_searches(t, 5_000)


def test_a_wrong_declaration_is_refused_not_believed():
    """EXP-INTERN: a group that does not declare a field its action changes raises,
    where it would otherwise give other states."""
    t = read_amqp_preset("rabbitmq4-consume").topology
    packed = amqp_system(t)
    fields = list(packed.groups)
    settle = next(g for g in fields if checking.CODE["settle"] in g.actions)
    fields[fields.index(settle)] = Group(settle.actions, settle.reads, settle.pops, ())
    packed.groups = tuple(fields)
    with pytest.raises(DeclarationError):
        explore_first(packed, max_states=2_000)


def test_the_budget_stores_at_most_max_states():
    t = replace(read_amqp_preset("rabbitmq4-consume").topology, supply=6)
    r = search(t, 1_000)
    assert (r.states, r.complete, r.violation) == (1_000, False, None)


def test_a_stall_is_the_explorers_terminal_deadlock_under_its_amqp_id():
    r = search(read_amqp_preset("ring-one-held").topology)
    assert r.violation is not None and r.violation.prop == STALL
    assert check_amqp(read_amqp_preset("ring-one-held").topology, None, False).exit_code == 10


def test_progress_is_reported_while_searching():
    from creditflow.conformance.explore.explorer import PROGRESS_MASK

    seen: list[tuple[int, int]] = []
    t = replace(read_amqp_preset("rabbitmq4-consume").topology, supply=8)
    search(t, 100_000, progress=lambda found, done: seen.append((found, done)))
    # FAM-DEADLINE: the first call after PROGRESS_MASK + 1 expansions (or a wide one)
    assert seen[-1] == (28286, 28286) and seen[0][1] == PROGRESS_MASK + 1


def test_a_passed_deadline_stops_the_search():
    """FAM-DEADLINE: past its deadline a search raises, it decides nothing."""
    t = replace(read_amqp_preset("rabbitmq4-consume").topology, supply=8)
    with pytest.raises(DeadlinePassed):
        check_amqp(t, None, False, 100_000, deadline=0.0)


def test_leader_changes_run_through_the_fast_path():
    t = read_amqp_preset("rabbitmq4-consume").topology
    assert t.queue is not None
    t = replace(t, supply=3, queue=replace(t.queue, leader_changes=1))
    assert isinstance(t.queue, QueuePolicy)
    _same_searches(t)


@pytest.mark.parametrize("name", sorted(OLD_PRESETS))
def test_full_search_decides_every_property_with_the_same_shortest_run(name):
    """``check --full-search``: every state, every property decided; the violation is
    the first search's (same property, same shortest length)."""
    t = read_amqp_preset(name).topology
    first = search(t, 200_000)
    full = checking.search_every_state(t, 200_000)
    assert full.complete and full.states >= first.states
    if first.violation is None:
        assert full.violation is None and full.violated == ()
    else:
        assert full.violation is not None
        assert len(full.violation.steps) == len(first.violation.steps)
        assert first.violation.prop in full.violated


def test_full_search_json_says_which_properties_hold():
    out = CliRunner().invoke(main, ["check", "credit-as-delta", "--full-search", "--json"])
    doc = json.loads(out.output.strip().splitlines()[-1])
    assert doc["complete"] and doc["properties"]["PROP-AMQ-AGREE"] is False
    assert doc["properties"]["PROP-AMQ-CONSERVATION"] is True and out.exit_code == 12
