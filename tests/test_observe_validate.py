"""Trace validation (OBS-VALIDATE) on traces generated from the model: a run of CF and
NET validates; one event dropped, swapped or altered is rejected at the first event
where model and trace disagree. No broker needed (the broker tests do the same on a
recorded trace)."""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from creditflow.conformance.cli import main
from creditflow.conformance.observe.validate import TraceError, load_trace, validate
from tests.observe_traces import generate


def first_index(doc, pred):
    return next(i for i, e in enumerate(doc["events"]) if pred(i, e))


def test_model_trace_validates():
    """OBS-VALIDATE, OBS-CF-RUN, OBS-VALIDATE-FINAL hold on a NET run of the CF model."""
    doc = generate(600, seed=3)
    res = validate(doc)
    assert res.ok, res.divergence
    assert res.stats["block"] > 0 and res.stats["unblock"] > 0 and res.stats["grant"] > 0


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_dropped_grant_rejected_at_next_event_of_sender(seed):
    """A dropped bump_credit send (OBS-CF-RUN) is caught at the sender's next event or at
    the bump it was for (OBS-NET-BUMP), whichever comes first."""
    doc = generate(500, seed=seed)
    k = first_index(doc, lambda i, e: e[3] == "grant" and i > 50)
    dropped = doc["events"][k]
    bad = copy.deepcopy(doc)
    del bad["events"][k]
    pid, to = dropped[2], dropped[4]
    ev = bad["events"]
    flying = sum(1 for e in ev[:k] if e[3] == "grant" and e[2] == pid and e[4] == to) - sum(
        1 for e in ev[:k] if e[3] == "bump" and e[2] == to and e[4] == pid
    )
    want = None
    for i in range(k, len(ev)):
        e = ev[i]
        if e[2] == pid:
            want = i
            break
        if e[2] == to and e[3] == "bump" and e[4] == pid:
            flying -= 1
            if flying < 0:
                want = i
                break
    res = validate(bad)
    assert not res.ok
    assert res.divergence.index == want
    assert res.divergence.rule in ("OBS-CF-RUN", "OBS-NET-BUMP")


def test_swapped_bump_before_its_grant_rejected():
    """Moving a bump before the grant that carried it breaks NET-FIFO (OBS-NET-BUMP)."""
    doc = generate(500, seed=7)
    k = first_index(doc, lambda i, e: e[3] == "bump" and i > 50)
    bump = doc["events"][k]
    g = max(
        i
        for i, e in enumerate(doc["events"][:k])
        if e[3] == "grant" and e[2] == bump[4] and e[4] == bump[2]
    )
    bad = copy.deepcopy(doc)
    ev = bad["events"]
    ev[g], ev[k] = ev[k], ev[g]
    ev[g][0], ev[k][0] = doc["events"][g][0], doc["events"][k][0]
    sender = bump[4]
    want = next(i for i in range(g + 1, len(ev)) if ev[i][2] == sender)
    res = validate(bad)
    assert not res.ok
    assert res.divergence.index == want and res.divergence.rule == "OBS-CF-RUN"


def test_altered_ack_spec_rejected_at_that_event():
    """An ack with another credit spec breaks PROP-CONSERVATION or OBS-SPEC right there."""
    doc = generate(300, seed=4)
    k = first_index(doc, lambda i, e: e[3] == "ack" and i > 30)
    bad = copy.deepcopy(doc)
    bad["events"][k][5] += 1
    res = validate(bad)
    assert not res.ok and res.divergence.index == k
    assert res.divergence.rule in ("OBS-SPEC", "PROP-CONSERVATION")


def test_altered_blocked_answer_rejected():
    """A blocked() answer the model disagrees with (CF-BLOCKED) is OBS-CF-RUN."""
    doc = generate(300, seed=4)
    k = first_index(doc, lambda i, e: e[3] == "blocked?")
    bad = copy.deepcopy(doc)
    bad["events"][k][4] = True
    res = validate(bad)
    assert not res.ok and res.divergence.index == k and res.divergence.rule == "OBS-CF-RUN"


def test_ack_without_send_rejected():
    """OBS-NET-ACK: an ack for which nothing is in flight."""
    doc = generate(300, seed=4)
    k = first_index(doc, lambda i, e: e[3] == "send" and e[2] == "<0.1.0>")
    bad = copy.deepcopy(doc)
    bad["events"].insert(k, [bad["events"][k][0] - 0.5, 0, "<0.2.0>", "ack", "<0.1.0>", 4, 2])
    res = validate(bad)
    assert not res.ok and res.divergence.index == k
    assert res.divergence.rule in ("OBS-NET-ACK", "PROP-CONSERVATION")


def test_cli_validate_exit_codes_and_itf(tmp_path):
    """`observe validate`: 0 on a valid trace; 1 and an ITF file (OBS-DIVERGENCE,
    TRACE-ITF) on a divergence; 2 and one line on a file that is not a trace."""
    doc = generate(300, seed=9)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc))
    runner = CliRunner()
    assert runner.invoke(main, ["observe", "validate", str(good)]).exit_code == 0
    k = first_index(doc, lambda i, e: e[3] == "grant" and i > 20)
    del doc["events"][k]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = runner.invoke(main, ["observe", "validate", str(bad), "--json"])
    assert out.exit_code == 1
    itf_doc = json.loads((tmp_path / "bad.json.divergence.itf.json").read_text())
    assert itf_doc["#meta"]["rule"] in ("OBS-CF-RUN", "OBS-NET-BUMP")
    assert itf_doc["states"]
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    out = runner.invoke(main, ["observe", "validate", str(junk)])
    assert out.exit_code == 2 and "junk.json" in out.output
    with pytest.raises(TraceError):
        load_trace(junk)
