"""Z3-AMQ-EVERY-SUPPLY, Z3-AMQ-ABSTRACTION, Z3-AMQ-INVARIANT, Z3-AMQ-WITNESS: "holds for
every supply" for AMQP topologies by proof, checked against the model and the explorer.

* the abstraction agrees with the model on every reachable state and step of random
  small publish topologies (and a mutant model or a mutant encoding is caught);
* the proof never says "proved" for a property the explorer violates at a small supply
  (random topologies, cross-checked);
* the presets and real sizes are answered in seconds.
"""

from __future__ import annotations

import functools
import json
import random
import time
from collections import deque
from dataclasses import replace
from pathlib import Path

import pytest
import z3
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.families.amqp import supply_encoding as aes
from creditflow.conformance.families.amqp.checking import search
from creditflow.conformance.families.amqp.every_supply import check_every_supply
from creditflow.conformance.inputs.amqp_topologies import load_amqp_preset
from creditflow.model.amqp import properties, system
from creditflow.model.amqp.endpoints import ReceiverConfig
from creditflow.model.amqp.policies import (
    CreditWindow,
    QueuePolicy,
    RabbitLinkCredit,
    RabbitSessionWindow,
    RelayPolicy,
    SenderCredit,
    WindowFixed,
    WindowNever,
)
from creditflow.model.amqp.topology import Topology

ROOT = Path(__file__).resolve().parents[1]


def publish(
    credit: int, window, supply: int, consumes: bool = False, initial: int = 2**32 - 3
) -> Topology:
    return Topology(
        name=f"pub-c{credit}-{window}",
        shape="publish",
        initial=initial,
        supply=supply,
        sender_window=WindowFixed(8, 4),
        receiver=ReceiverConfig(None, RabbitSessionWindow(), 0, (), 0),
        sender_credit=SenderCredit(),
        broker_window=window,
        broker_credit=RabbitLinkCredit(credit),
        queue=QueuePolicy(consumes=consumes),
    )


def random_publish(rng: random.Random) -> Topology:
    w = rng.randint(1, 5)
    window = rng.choice(
        [RabbitSessionWindow(w), WindowFixed(w, rng.randint(0, w - 1)), WindowNever(w)]
    )
    return publish(rng.randint(1, 4), window, rng.randint(0, 6), rng.random() < 0.5)


def link(credit: CreditWindow, window, supply: int, holds: int = 0) -> Topology:
    return Topology(
        name=f"link-{credit}-{window}",
        shape="link",
        initial=2**32 - 2,
        supply=supply,
        sender_window=WindowFixed(8, 4),
        receiver=ReceiverConfig(credit, window, holds, (), 0),
        sender_credit=SenderCredit(),
    )


def random_link(rng: random.Random) -> Topology:
    c = rng.randint(1, 4)
    credit = CreditWindow(
        c,
        rng.randint(0, c - 1),
        rng.choice(["credit", "since_grant"]),
        rng.choice(["absolute", "delta"]),
    )
    w = rng.randint(1, 5)
    window = rng.choice(
        [RabbitSessionWindow(w), WindowFixed(w, rng.randint(0, w - 1)), WindowNever(w)]
    )
    return link(credit, window, rng.randint(0, 6), rng.randint(0, 2))


def consume(
    credit: CreditWindow, window, supply: int, holds: int = 0, q: int = 2, drains: int = 0
) -> Topology:
    return Topology(
        name=f"consume-{credit}-{window}-d{drains}",
        shape="consume",
        initial=2**32 - 3,
        supply=supply,
        sender_window=RabbitSessionWindow(400),
        receiver=ReceiverConfig(credit, window, holds, (), drains),
        sender_credit=SenderCredit(),
        broker_window=RabbitSessionWindow(400),
        relay=RelayPolicy(q),
        queue=QueuePolicy(consumes=True),
    )


def random_consume(rng: random.Random) -> Topology:
    c = rng.randint(1, 3)
    credit = CreditWindow(c, rng.randint(0, c - 1), rng.choice(["credit", "since_grant"]))
    w = rng.randint(1, 4)
    window = rng.choice(
        [RabbitSessionWindow(w), WindowFixed(w, rng.randint(0, w - 1)), WindowNever(w)]
    )
    return consume(
        credit,
        window,
        rng.randint(0, 3),
        rng.randint(0, 1),
        rng.randint(1, 3),
        rng.randint(0, 1),  # AMQ-LINK-DRAIN: a client that may drain once
    )


def random_topology(rng: random.Random) -> Topology:
    return rng.choice([random_publish, random_link, random_consume])(rng)


def reachable(t: Topology, limit: int = 20_000):
    """Every reachable state and step of ``t`` (a second, plain search)."""
    start = system.initial_state(t)
    seen = {start}
    todo = deque([start])
    steps = []
    while todo:
        s = todo.popleft()
        for a, nxt in system.successors(t, s):
            steps.append((s, a, nxt))
            if nxt not in seen:
                assert len(seen) < limit
                seen.add(nxt)
                todo.append(nxt)
    return seen, steps


@functools.cache
def _value(x: int | bool) -> z3.ExprRef:
    return z3.BoolVal(x) if isinstance(x, bool) else z3.IntVal(x)


def _at(enc: aes.Encoding, values: dict) -> list:
    return [(enc.v[k], _value(x)) for k, x in values.items()]


def _substitute(e: z3.ExprRef, *pairs: tuple[z3.ExprRef, z3.ExprRef]) -> z3.ExprRef:
    """``z3.substitute`` without its Python-side check of every pair's sorts (the pairs
    here are variables and values of their own sorts): the same C call."""
    n = len(pairs)
    frm, to = (z3.Ast * n)(), (z3.Ast * n)()
    for i, (a, b) in enumerate(pairs):
        frm[i], to[i] = a.as_ast(), b.as_ast()
    return z3.z3._to_expr_ref(z3.Z3_substitute(e.ctx_ref(), e.as_ast(), n, frm, to), e.ctx)


def disagreements(enc: aes.Encoding, t: Topology) -> list[str]:
    """Z3-AMQ-ABSTRACTION on ``t``: where the abstraction and the model disagree. Every
    reachable state and step is compared; Z3's answers are cached per abstract state
    and per abstract step (many concrete states share one), which changes no verdict."""
    states, steps = reachable(t)
    problems: list[str] = []
    props = enc.properties()
    abstract_at: dict[tuple, tuple[set[str], dict[str, bool]]] = {}
    # every enabledness and property formula as one bit of one integer term, so that a
    # state needs one substitution, not one a formula (the same formulas, decided alike)
    names = list(enc.names)
    formulas = [*(enc.enabled(n) for n in names), *props.values()]
    packed = z3.Sum([z3.If(f, z3.IntVal(1 << i), z3.IntVal(0)) for i, f in enumerate(formulas)])
    for s in states:
        a = enc.alpha(s)
        key = tuple(sorted(a.items()))
        if key not in abstract_at:
            bits = z3.simplify(_substitute(packed, *_at(enc, a)))
            assert z3.is_int_value(bits), bits
            word = bits.as_long()
            enabled = {n for i, n in enumerate(names) if word >> i & 1}
            values = {p: bool(word >> (len(names) + i) & 1) for i, p in enumerate(props)}
            abstract_at[key] = (enabled, values)
        abstract, values = abstract_at[key]
        concrete = {name for name, _ in system.successors(t, s)}
        if concrete != abstract:
            problems.append(f"enabled {sorted(abstract)} != model {sorted(concrete)}")
        bad = set(properties.state_violations(t, s))
        if properties.stalled(t, s):
            bad.add("PROP-AMQ-NO-STALL")
        for p, holds in values.items():
            if holds == (p in bad):
                problems.append(f"{p}: formula {holds}, model violated={p in bad}")
    primed = {k: z3.Const(f"{k}'", x.sort()) for k, x in enc.v.items()}
    relation: dict[str, z3.BoolRef] = {}  # per action name: some abstract step v -> v'
    checked: set[tuple] = set()
    for s, name, nxt in steps:
        a_before, a_after = enc.alpha(s), enc.alpha(nxt)
        key = (tuple(sorted(a_before.items())), name, tuple(sorted(a_after.items())))
        if key in checked:
            continue
        checked.add(key)
        if name not in relation:
            relation[name] = z3.Or(
                *(
                    z3.And(act.guard, act.side, *(act.nexts[k] == primed[k] for k in enc.v))
                    for act in enc.actions
                    if act.name == name
                )
            )
        after = [(primed[k], _value(x)) for k, x in a_after.items()]
        # every variable is given a value: the formula is closed, and simplify decides it
        # (a solver only where it does not)
        closed = z3.simplify(_substitute(relation[name], *_at(enc, a_before), *after))
        if z3.is_true(closed):
            continue
        solver = z3.Solver()
        solver.add(closed)
        if solver.check() != z3.sat:
            problems.append(f"step {name} has no abstract step")
    return problems


@pytest.mark.parametrize("half", [0, 1])
def test_the_abstraction_agrees_with_the_model_on_random_small_topologies(half):
    """Z3-AMQ-ABSTRACTION: on every reachable state of random small publish and link
    topologies the enabled actions and every PROP-AMQ-* agree, and every model step is
    an abstract step (serial counters start near 2^32, so they wrap). The ten
    topologies of seed 28, in two halves so that two workers share them."""
    rng = random.Random(28)
    topologies = [random_topology(rng) for _ in range(10)]
    for t in topologies[half::2]:
        enc = aes.encoding_for(t)
        assert enc is not None
        assert disagreements(enc, t) == [], t


def test_a_mutant_model_is_caught_by_the_abstraction_check(monkeypatch):
    """Z3-AMQ-ABSTRACTION: a broker that grants credit without looking at its
    unconfirmed deliveries (AMQ-RMQ-LINK-CREDIT broken) is a different system; the
    check says so."""
    t = publish(2, RabbitSessionWindow(3), 5)
    enc = aes.encoding_for(t)
    assert enc is not None
    assert disagreements(enc, t) == []
    monkeypatch.setattr(system, "broker_may_grant", lambda b, c: b.link.credit <= c // 2)
    assert disagreements(enc, t) != []


def test_a_mutant_link_model_is_caught_by_the_abstraction_check(monkeypatch):
    """Z3-AMQ-ABSTRACTION: a receiver that renews its credit window one arrival late
    (AMQ-POL-CREDIT-WINDOW broken) is caught."""
    from creditflow.model.amqp import endpoints

    t = link(CreditWindow(3, 1), WindowFixed(4, 2), 5)
    enc = aes.encoding_for(t)
    assert enc is not None
    assert disagreements(enc, t) == []
    renew = endpoints._renew
    monkeypatch.setattr(
        endpoints,
        "_renew",
        lambda cfg, r, point: renew(cfg, r, point) if r.link.credit < 1 else (r, None),
    )
    assert disagreements(enc, t) != []


def test_a_mutant_relay_is_caught_by_the_abstraction_check(monkeypatch):
    """Z3-AMQ-ABSTRACTION on the consume shape: a relay that does not count a delivery
    against the client's credit (AMQ-RMQ-RELAY broken) is caught."""
    from creditflow.model.amqp import relay

    t = consume(CreditWindow(2, 0), WindowFixed(3, 1), 2, q=1)
    enc = aes.encoding_for(t)
    assert enc is not None
    assert disagreements(enc, t) == []
    sent = relay.on_delivery_sent

    def forgetful(r, policy):
        out, reqs = sent(r, policy)
        return out._replace(client_credit=r.client_credit), reqs

    monkeypatch.setattr(relay, "on_delivery_sent", forgetful)
    assert disagreements(enc, t) != []


def test_a_mutant_drain_answer_is_caught_by_the_abstraction_check(monkeypatch):
    """Z3-AMQ-ABSTRACTION with AMQ-LINK-DRAIN: a relay whose drain answer does not
    consume the client's credit left (AMQ-RMQ-RELAY broken) is caught."""
    from creditflow.model.amqp import relay

    t = consume(CreditWindow(2, 0), WindowFixed(3, 1), 1, q=1, drains=1)
    enc = aes.encoding_for(t)
    assert enc is not None
    assert disagreements(enc, t) == []
    answer = relay.on_credit_reply

    def lazy(r, reply, policy):
        out, reqs, flows = answer(r, reply, policy)
        return out, reqs, tuple(f._replace(delivery_count=r.client_dc) for f in flows)

    monkeypatch.setattr(relay, "on_credit_reply", lazy)
    assert disagreements(enc, t) != []


def test_a_mutant_encoding_is_caught_by_the_abstraction_check(monkeypatch):
    """Z3-AMQ-ABSTRACTION: an encoding whose session window renews one transfer late
    disagrees with the model."""
    t = publish(3, WindowFixed(3, 1), 6)
    enc = aes.encoding_for(t)
    assert enc is not None
    enc.T = 0
    enc.actions = enc._actions()
    assert disagreements(enc, t) != []


def test_the_proof_never_contradicts_the_explorer_on_random_topologies():
    """Z3-AMQ-EVERY-SUPPLY cross-checked: where the explorer finds a violation at a
    small supply the proof never says that property is proved; where the proof proves
    everything the explorer finds nothing. Both outcomes occur."""
    rng = random.Random(2028)
    seen_proved = seen_violated = 0
    for _ in range(18):
        t = random_topology(rng)
        proof = aes.prove_every_supply(t)
        assert proof is not None
        seen_proved += proof.proved
        for supply in range(0, 8):
            r = search(replace(t, supply=supply), 50_000)
            assert r.complete or r.violation is not None
            if r.violation is not None:
                seen_violated += 1
                for p in r.violation.props:
                    assert proof.verdicts[p] == "not-proved", (t, supply, p)
                assert not proof.proved
    assert seen_proved and seen_violated


def test_a_window_never_renewed_is_not_proved_and_its_stall_is_found():
    """Z3-AMQ-EVERY-SUPPLY, Z3-AMQ-WITNESS: a broker session window never renewed
    stalls once the window is spent: not proved, and ``check`` finds the stall (exit 10)
    at a supply past the window."""
    t = publish(170, WindowNever(400), 4)
    proof = aes.prove_every_supply(t)
    assert proof is not None and proof.verdicts["PROP-AMQ-NO-STALL"] == "not-proved"
    explored = check_every_supply(t, _explored(t))
    assert explored is not None
    v = explored.result.search.violation
    assert v is not None and v.prop == "PROP-AMQ-NO-STALL" and explored.exit_code == 10
    assert explored.result.supply > 400 and not explored.result.shortest


def _explored(t: Topology):
    from creditflow.conformance.families.amqp.checking import check_amqp

    return check_amqp(t, None, True)


def test_rabbitmq4_publish_holds_for_every_supply_with_its_true_unconfirmed_bound():
    """Z3-AMQ-EVERY-SUPPLY on the preset at RabbitMQ 4's numbers: every property is
    proved for every supply, AMQ-SERIAL too. PROP-AMQ-BOUNDS is the true bound
    2 · 170 − 1 (AMQ-RMQ-LINK-CREDIT): RabbitMQ's own "170 + 85" is not inductive (Houdini
    drops it), the tight bound is kept; `check` says so and exits 0."""
    t = load_amqp_preset("rabbitmq4-publish")
    proof = aes.prove_every_supply(t)
    assert proof is not None and proof.serial == "proved"
    assert proof.open == () and proof.proved
    assert "U <= C + C div 2" in proof.dropped and "U <= 2C - 1" in proof.lemmas
    checked = check_every_supply(t, _explored(t))
    assert checked is not None and checked.exit_code == 0
    assert checked.claim.startswith("holds for every supply (proved:")


@pytest.mark.parametrize(
    ("window", "credit"), [(65_535, 10_000), (2**31 - 1, 10_000), (2_048, 170)]
)
def test_real_sizes_are_answered_for_every_supply_in_seconds(window, credit):
    """Issue 28 point 5: windows of 65,535 and 2^31 − 1, credits of 10,000: the same
    proof, in the same time (the numbers are constants of linear arithmetic)."""
    t = publish(credit, RabbitSessionWindow(window), 4)
    started = time.perf_counter()
    proof = aes.prove_every_supply(t)
    assert proof is not None and time.perf_counter() - started < 30
    assert proof.serial == "proved" and proof.open == () and proof.proved


def test_a_window_of_2_to_the_31_is_not_proved_serially_defined():
    """AMQ-SERIAL: a window of 2^31 cannot be added to a serial number; the proof says
    AMQ-SERIAL is not proved, so nothing holds for every supply."""
    t = publish(4, RabbitSessionWindow(2**31), 4)
    proof = aes.prove_every_supply(t)
    assert proof is not None and proof.serial == "not-proved" and not proof.proved


def test_a_topology_that_holds_for_every_supply_exits_0(tmp_path):
    """SCOPE-EXIT with Z3-AMQ-EVERY-SUPPLY: a publish topology whose every property is
    proved says "holds for every supply", exit 0, and --json carries the proof."""
    doc = json.loads((ROOT / "spec/graphs/amqp/rabbitmq4-publish.json").read_text())
    for node in doc["nodes"]:
        if node["id"] == "broker-session":
            node["credit"]["max_link_credit"] = 1
    path = tmp_path / "one.json"
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert "holds for every supply (proved: an inductive invariant" in result.output
    js = CliRunner().invoke(main, ["check", str(path), "--json"])
    d = json.loads(js.stdout)
    assert d["exit_code"] == 0 and d["proof"]["proved"] is True
    assert d["proof"]["rule"] == "Z3-AMQ-EVERY-SUPPLY"
    assert all(v is True for v in d["properties"].values())


def test_the_link_stall_shapes_are_not_proved_and_a_sound_link_holds(tmp_path):
    """Z3-AMQ-EVERY-SUPPLY on link topologies: the stall shapes it covers are not
    proved (a window never renewed: NO-STALL; credit sent as a delta: AGREE, NO-STALL);
    a client with a credit window of 10,000 at half and windows of 65,535 holds for
    every supply, exit 0."""
    never = aes.prove_every_supply(load_amqp_preset("session-window-never-renewed"))
    assert never is not None and "PROP-AMQ-NO-STALL" in never.open
    delta = aes.prove_every_supply(load_amqp_preset("credit-as-delta"))
    assert delta is not None and {"PROP-AMQ-AGREE", "PROP-AMQ-NO-STALL"} <= set(delta.open)
    doc = json.loads((ROOT / "spec/graphs/amqp/credit-as-delta.json").read_text())
    nodes = {n["id"]: n for n in doc["nodes"]}
    nodes["receiver"]["credit"].update(encoding="absolute", window=10_000, threshold=5_000)
    for name in ("sender-session", "receiver-session"):
        nodes[name]["window"] = {"policy": "fixed", "window": 65_535, "threshold": 32_767}
    path = tmp_path / "sound.json"
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert "holds for every supply (proved:" in result.output


def test_rabbitmq4_consume_without_its_drain_holds_for_every_supply(tmp_path):
    """Z3-AMQ-EVERY-SUPPLY on the consume shape: RabbitMQ 4's relay (max_queue_credit
    256, window 400) and a client granting 100 at half, without the drain the preset's
    client may start, holds for every supply: exit 0, in seconds."""
    doc = json.loads((ROOT / "spec/graphs/amqp/rabbitmq4-consume.json").read_text())
    for node in doc["nodes"]:
        if node["id"] == "client":
            node["drains"] = 0
    path = tmp_path / "consume.json"
    path.write_text(json.dumps(doc))
    started = time.perf_counter()
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert "holds for every supply (proved:" in result.output
    assert time.perf_counter() - started < 30


def _consume_file(tmp_path, **client) -> Path:
    doc = json.loads((ROOT / "spec/graphs/amqp/rabbitmq4-consume.json").read_text())
    for node in doc["nodes"]:
        if node["id"] == "client":
            node.update(client)
    path = tmp_path / "consume.json"
    path.write_text(json.dumps(doc))
    return path


def test_rabbitmq4_consume_with_its_drain_holds_for_every_supply():
    """Issue 28's done-when, Z3-AMQ-EVERY-SUPPLY with AMQ-LINK-DRAIN: the preset's
    client that may drain once (its drain FLOW, the relay's drain rounds, the queue's
    drain reply, the answer toward the client) holds for every supply, PROP-AMQ-DRAIN
    included: exit 0, in seconds."""
    t = load_amqp_preset("rabbitmq4-consume")
    assert t.receiver.drains == 1
    started = time.perf_counter()
    proof = aes.prove_every_supply(t)
    assert proof is not None and proof.proved and proof.serial == "proved"
    assert time.perf_counter() - started < 30
    result = CliRunner().invoke(main, ["check", "rabbitmq4-consume"])
    assert result.exit_code == 0, result.output
    assert "holds for every supply (proved:" in result.output


def test_a_shape_outside_the_abstraction_stays_not_established(tmp_path):
    """SCOPE-EXIT: a client that may drain twice is not covered by Z3-AMQ-ABSTRACTION
    (one drain at most): no proof, and ``check`` keeps exit 4 for every supply."""
    path = _consume_file(tmp_path, drains=2)
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 4, result.output
    assert "for every supply: not established" in result.output


def test_prove_answers_an_amqp_topology_per_property(tmp_path):
    """Z3-AMQ-EVERY-SUPPLY through ``creditflow prove``: per property proved or not,
    AMQ-SERIAL, the invariant; exit 0 only when everything is proved, 4 otherwise (a
    client draining twice: not covered), 2 for an option it does not take."""
    out = CliRunner().invoke(main, ["prove", "rabbitmq4-publish"])
    assert out.exit_code == 0, out.output
    assert "  PROP-AMQ-NO-STALL      proved for every supply" in out.output
    assert "  PROP-AMQ-BOUNDS        proved for every supply" in out.output
    assert "holds for every supply (proved: an inductive invariant" in out.output
    config = tmp_path / "advanced.config"
    config.write_text("[{rabbit, [{max_incoming_window, 2147483648}]}].\n")
    out = CliRunner().invoke(main, ["prove", "rabbitmq4-publish", "--config", str(config)])
    # AMQ-TOPOLOGY-LIMITS: a window of 2^31 (where serial addition is not defined) is
    # refused by the input layer, blamed on the config file (FAM-CONFIG-BLAME)
    assert out.exit_code == 2, out.output
    assert "advanced.config:1: max_incoming_window: 2147483648 exceeds" in out.output
    out = CliRunner().invoke(main, ["prove", str(_consume_file(tmp_path, drains=2))])
    assert out.exit_code == 4 and "outside Z3-AMQ-ABSTRACTION" in out.output, out.output
    out = CliRunner().invoke(main, ["prove", "rabbitmq4-publish", "--symbolic"])
    assert out.exit_code == 2 and "--symbolic: not an option of the amqp family" in out.output
