"""H2-EVERY-SUPPLY, H2-SUPPLY-ABSTRACTION, H2-SUPPLY-WITNESS (spec/http2.md): the proof for
every supply of octets per stream, cross-checked against explicit search on small
instances, refuted on a broken model and on the stall presets at real sizes, open past
its deadline (FAM-DEADLINE)."""

from __future__ import annotations

import json
import time

import pytest

from creditflow.conformance.explore.explorer import explore
from creditflow.conformance.families.http2.checking import Http2System
from creditflow.conformance.families.http2.every_supply import prove
from creditflow.conformance.families.http2.reader import READER
from creditflow.model.http2 import receiver
from creditflow.model.http2.properties import NO_STALL
from creditflow.model.http2.topology import EndConfig, StreamConfig, Topology

SMALL = EndConfig(initial_window_size=8, frame_octets=4)


def small(streams: int = 1) -> Topology:
    ss = tuple(StreamConfig(2 * k + 1) for k in range(streams))
    return Topology("small", SMALL, SMALL, ss)


def explicit_holds(t: Topology) -> bool:
    r = explore(Http2System(t), max_states=200_000)
    assert r.complete
    return r.primary() is None


def test_small_upload_proved_and_every_small_supply_holds():
    t = small()
    proof = prove(t)
    assert proof.status == "proved", proof.statement
    assert all(v is True for v in proof.properties.values())
    for n in range(0, 21):
        assert explicit_holds(t.with_octets((n,))), n


def test_mutant_never_crediting_is_refuted_with_a_witness_the_explorer_shows(monkeypatch):
    monkeypatch.setattr(receiver, "credit", lambda cfg, end, i: (end, ()))
    t = small()
    proof = prove(t)
    assert proof.status == "refuted"
    assert proof.properties[NO_STALL] is False
    assert proof.witness is not None
    assert not explicit_holds(proof.witness)


@pytest.mark.parametrize("name", ["unread-starves-connection", "reset-never-credited"])
def test_stall_presets_refuted_at_real_sizes(name):
    t = READER.read(name, {})
    started = time.perf_counter()
    proof = prove(t, time.monotonic() + 60)
    assert proof.status == "refuted", proof.statement
    assert proof.properties[NO_STALL] is False
    assert time.perf_counter() - started < 30


def test_past_the_deadline_is_open_never_proved():
    proof = prove(small(2), deadline=time.monotonic() - 1)
    assert proof.status == "open"
    assert "FAM-DEADLINE" in proof.statement


def test_check_says_holds_for_every_supply_and_exits_0(tmp_path):
    """FAM-EVERY-SUPPLY through ``check``'s generic path (H2-EVERY-SUPPLY)."""
    from click.testing import CliRunner

    from creditflow.conformance.cli import main

    doc = {
        "family": "http2",
        "name": "small-upload",
        "client": {"initial_window_size": 8, "frame_octets": 4},
        "server": {"initial_window_size": 8, "frame_octets": 4},
        "streams": [{"id": 1, "octets": 20}],
    }
    path = tmp_path / "small-upload.json"
    path.write_text(json.dumps(doc))
    r = CliRunner().invoke(main, ["check", str(path)])
    assert r.exit_code == 0, r.output
    assert "holds for every supply (proved: H2-SUPPLY-ABSTRACTION" in r.output


@pytest.mark.parametrize(
    ("argv", "code", "status"),
    [
        (["prove", "SMALL", "--json"], 0, "proved"),
        (["prove", "unread-starves-connection", "--json"], 10, "refuted"),
        (["prove", "upload", "--json", "--timeout", "0.5"], 4, "open"),
    ],
)
def test_prove_answers_through_the_every_supply_part(tmp_path, argv, code, status):
    """FAM-EVERY-SUPPLY, FAM-DEADLINE through ``prove``'s generic path (H2-EVERY-SUPPLY):
    proved exits 0, refuted 10 (a stall for some supply), open 4 — past the deadline too,
    never "proved"."""
    from click.testing import CliRunner

    from creditflow.conformance.cli import main

    doc = {
        "family": "http2",
        "name": "small-upload",
        "client": {"initial_window_size": 8, "frame_octets": 4},
        "server": {"initial_window_size": 8, "frame_octets": 4},
        "streams": [{"id": 1, "octets": 20}],
    }
    path = tmp_path / "small-upload.json"
    path.write_text(json.dumps(doc))
    argv = [str(path) if a == "SMALL" else a for a in argv]
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == code, r.output
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["family"] == "http2" and out["proof"]["status"] == status
    assert out["exit_code"] == code
