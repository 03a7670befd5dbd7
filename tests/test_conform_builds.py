"""Conformance against another build of ``credit_flow`` (issue #14): a pre-3.8-like
module without ``block/1``/``unblock/1`` in a copy of the installed ebin folder.

The module is our own small Erlang code (tests/credit_flow_builds.py, shared with the
fault replay of tests/test_faults.py), compiled with ``erlc`` at test time; the real
``credit_flow_adapter`` drives it in a real Erlang VM. Cost: about 3 s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.adapters.rabbitmq.module import RabbitMQAdapter
from creditflow.conformance.cli import main
from creditflow.conformance.differential.adapter import AdapterFailure
from creditflow.conformance.differential.corpus import corpus_dir
from creditflow.conformance.differential.protocol import Op
from creditflow.model.credit.spec import CreditSpec
from tests.credit_flow_builds import build_pre38_ebin


@pytest.fixture(scope="module")
def old_ebin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pre-3.8-like build (tests/credit_flow_builds.py)."""
    return build_pre38_ebin(tmp_path_factory.mktemp("ebin"))


def test_hello_declares_only_the_exported_ops_and_names_the_beam(old_ebin: Path) -> None:
    """AD-CAPABILITIES, AD-RABBITMQ: hello lists the ops the loaded module exports; the
    report names the beam itself (path, md5), not only rabbit_common.app's version."""
    with RabbitMQAdapter(old_ebin) as old, RabbitMQAdapter() as installed:
        assert old.supported_ops == ("send", "ack", "bump", "peer_down", "state")
        assert old.missing_ops == ("block", "unblock")
        assert installed.missing_ops == ()
        impl, real = old.info["implementation"], installed.info["implementation"]
        assert impl["module"] == str(old_ebin / "credit_flow.beam")
        assert impl["app_version"] == real["app_version"] == "3.10.8"
        assert len(impl["md5"]) == 32 and impl["md5"] != real["md5"]
        assert impl["md5"][:8] in old.info["name"]


def test_conform_draws_only_offered_ops_and_says_what_was_not_exercised(
    old_ebin: Path, tmp_path: Path
) -> None:
    """AD-CAPABILITIES: conform against the old module never sends block/unblock (no
    "refused"), finds it conformant, and reports the ops it did not exercise; the
    printed replay command keeps --rabbitmq-ebin (AD-REPRODUCE)."""
    result = CliRunner().invoke(
        main,
        [
            "conform",
            "--adapter",
            "rabbitmq",
            "--rabbitmq-ebin",
            str(old_ebin),
            "--seed",
            "4",
            "--max-examples",
            "40",
            "--out",
            str(tmp_path),
            "--json",
        ],
        catch_exceptions=False,
    )
    report = json.loads(result.stdout)
    assert result.exit_code == 0, report
    assert report["verdict"] == "conformant"
    assert report["ops_not_exercised"] == ["block", "unblock"]
    assert report["implementation_info"]["module"] == str(old_ebin / "credit_flow.beam")
    assert all(p["ops"] > 0 for p in report["phases"])


def test_replay_does_not_send_ops_the_module_lacks(old_ebin: Path) -> None:
    """AD-CAPABILITIES: replaying the corpus against the old module runs every trace
    it can and names the ones needing block/unblock as not run (not passed, not a
    refusal with an Erlang stack trace)."""
    result = CliRunner().invoke(
        main,
        [
            "replay",
            str(corpus_dir()),
            "--adapter",
            "rabbitmq",
            "--rabbitmq-ebin",
            str(old_ebin),
            "--json",
        ],
        catch_exceptions=False,
    )
    report = json.loads(result.stdout)
    assert result.exit_code == 0, report
    not_run = {
        Path(t["trace"]).name: t["ops_not_offered"]
        for t in report["traces"]
        if t["status"] == "not-offered"
    }
    assert not_run["cf7-quorum-queue-pseudo-peer.itf.json"] == ["block", "unblock"]
    assert report["counts"]["pass"] + len(not_run) == len(report["traces"])
    assert report["counts"]["pass"] >= 10


def test_an_op_the_module_lacks_is_refused_in_one_line(old_ebin: Path) -> None:
    """AD-CAPABILITIES: sent anyway (a driver that ignores hello), block is refused
    with one line naming the missing export."""
    with RabbitMQAdapter(old_ebin) as old:
        old.reset(CreditSpec(2, 1))
        with pytest.raises(AdapterFailure) as info:
            old.run([Op("block", "A", "B")])
    message = str(info.value)
    assert "this credit_flow module does not export block/1" in message
    assert "\n" not in message and "is not among the ops" in message
