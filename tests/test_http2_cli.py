"""``creditflow check`` answers HTTP/2 topologies through the family interface
(FAM-CHECKING, FAM-CODEC, FAM-OPTIONS; PROP-H2-NO-STALL, H2-TOPOLOGY)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from creditflow.conformance.cli import main


def check(tmp_path: Path, *args: str):
    out = tmp_path / "t.itf.json"
    return CliRunner().invoke(main, ["check", *args, "--trace-out", str(out)]), out


def test_an_upload_holds_for_its_body_and_says_every_supply_is_not_established(tmp_path):
    r, _ = check(tmp_path, "upload")
    assert r.exit_code == 4, r.output
    assert "holds for supply 131072" in r.output
    assert "for every supply: not established" in r.output
    doc = json.loads(check(tmp_path, "upload", "--json")[0].output)
    # every property decided over every state of the upload, PROP-H2-NO-ERROR included
    assert doc["complete"] and doc["properties"]["PROP-H2-NO-ERROR"] is True
    assert doc["properties"]["PROP-H2-NO-STALL"] is True
    assert doc["scope"] == {"supply": "every", "explored_supply": 131072, "max_states": 6_000_000}


def test_an_unread_stream_starves_the_connection_with_its_shortest_witness(tmp_path):
    r, trace = check(tmp_path, "unread-starves-connection", "--json")
    assert r.exit_code == 10, r.output
    doc = json.loads(r.output)
    assert doc["family"] == "http2"
    assert doc["violation"]["property"] == "PROP-H2-NO-STALL"
    assert doc["violation"]["length"] == 4 and doc["violation"]["shortest"]
    written = json.loads(trace.read_text())
    assert written["#meta"]["creditflow"]["model"] == "http2"
    assert written["#meta"]["creditflow"]["property"] == "PROP-H2-NO-STALL"
    text, _ = check(tmp_path, "unread-starves-connection")
    assert "   4. send_data(stream 1)" in text.output
    assert "client sends into 0" in text.output


def test_an_option_http2_does_not_take_is_refused_in_one_line(tmp_path):
    for args in (["--credit", "2,1"], ["--publishes", "3"], ["--all-check-blocked"]):
        r, _ = check(tmp_path, "upload", *args)
        assert r.exit_code == 2, (args, r.output)
        assert "not an option of the http2 family" in r.output
