"""``creditflow matrix`` (spec/matrix.md): the table of findings × releases, its
renderings, its exit codes, and docs/amqp.md's version matrices as its output.

The real-release tests run the releases ``scripts/setup.sh`` installs (MATRIX-RELEASES);
a missing one is installed on first use, and one that cannot be is a failure, not a skip.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from creditflow.adapters.amqp import versions as amqp_versions
from creditflow.conformance.cli.matrix import (
    MatrixSettings,
    block_args,
    doc_blocks,
    matrix,
    render_html,
    render_markdown,
    render_text,
    replace_blocks,
    run_matrix,
)
from creditflow.conformance.differential.findings import Finding, Rule, finding_id
from creditflow.conformance.matrix.table import (
    ReleaseResult,
    build_matrix,
    version_key,
)

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "amqp.md"
SETTINGS = {"seed": 1, "depth": 3, "max_examples": 10, "steps": 8, "skip_op": []}


def finding(sig: str, rule: str = "r", witness: tuple[str, ...] = ("transfer",)) -> Finding:
    return Finding(finding_id(sig), Rule(rule, "must", "test"), sig, witness)


def release(v: str, *sigs: str, code: int = 1, failure: str | None = None) -> ReleaseResult:
    return ReleaseResult(v, tuple(finding(s) for s in sigs), code, 0.5, failure)


# --- the table (pure) -------------------------------------------------------------


def test_columns_in_version_order_whatever_the_order_given():
    """MATRIX-ORDER: numeric parts compare as numbers."""
    m = build_matrix("lib", [release("3.0.10"), release("2.0.8"), release("3.0.4")], SETTINGS)
    assert m.releases == ("2.0.8", "3.0.4", "3.0.10")
    assert version_key("3.0.10") > version_key("3.0.9")


def test_rows_say_which_release_introduced_and_fixed_a_finding():
    """MATRIX-ROWS, MATRIX-CHANGES: one row per signature; introduced = first release it
    stands in, fixed = the first release after the last one it stands in."""
    m = build_matrix(
        "lib",
        [release("1.0", "a"), release("2.0", "a", "b"), release("3.0", "b"), release("4.0", "b")],
        SETTINGS,
    )
    rows = {r.signature: r for r in m.rows}
    assert set(rows) == {"a", "b"}
    assert (rows["a"].introduced, rows["a"].fixed) == ("1.0", "3.0")
    assert (rows["b"].introduced, rows["b"].fixed) == ("2.0", None)
    assert rows["a"].present == {"1.0": True, "2.0": True, "3.0": False, "4.0": False}
    assert [r.signature for r in m.differing("2.0", "3.0")] == ["a"]
    assert [r.signature for r in m.shared("2.0", "3.0")] == ["b"]
    assert m.exit_code == 0  # MATRIX-EXIT: findings are data


def test_a_release_that_did_not_run_is_not_absent_and_exits_4():
    """MATRIX-EXIT, MATRIX-ROWS: an adapter failure is ``not run`` in every row (never
    "absent"), "fixed" skips it, and the matrix exits 4."""
    m = build_matrix(
        "lib",
        [release("1.0", "a"), release("2.0", code=3, failure="crashed"), release("3.0")],
        SETTINGS,
    )
    (row,) = m.rows
    assert "2.0" not in row.present and row.fixed == "3.0"
    assert m.not_run == ("2.0",) and m.exit_code == 4
    md = render_markdown(m)
    assert "| `a` | must | `transfer` | yes | not run | — | 1.0 | 3.0 |" in md
    assert "exit 3 (not run: crashed)" in md


def test_a_release_given_twice_is_refused():
    with pytest.raises(ValueError, match="twice"):
        build_matrix("lib", [release("1.0"), release("1.0")], SETTINGS)


def test_formats_render_the_same_table():
    """MATRIX-FORMATS: text (with seconds), Markdown and HTML (escaped, no timings), JSON."""
    m = build_matrix("lib", [release("1.0", "x <y>|z"), release("2.0")], SETTINGS)
    md, page, text = render_markdown(m), render_html(m), render_text(m)
    assert "`x <y>\\|z`" in md and "0.5" not in md
    assert "x &lt;y&gt;|z" in page and "<y>" not in page and "0.5" not in page
    assert "1.0: exit 1, 1 finding(s), 0.5 s" in text
    doc = json.loads(json.dumps(m.to_json()))
    assert doc["rows"][0]["introduced"] == "1.0" and doc["rows"][0]["fixed"] == "2.0"
    assert doc["runs"]["1.0"]["findings"] == ["x <y>|z"] and doc["exit_code"] == 0


# --- the command ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--adapter", "nope", "--versions", "1.0"], "no matrix hook"),
        (["--adapter", "h2", "--versions", "4.1.0"], "no matrix hook"),  # not wired yet
        (["--adapter", "rhea@3.0.5", "--versions", "3.0.5"], "releases in --versions"),
        (["--adapter", "rhea", "--versions", "3.0.5,../x"], "not a release name"),
        (["--adapter", "rhea", "--versions", "3.0.5,3.0.5"], "twice"),
        (["--adapter", "rhea"], "--versions"),
        (["--adapter", "amqp10-client", "--versions", "1.0"], "no releases to choose"),
    ],
)
def test_bad_adapter_or_release_is_one_line_exit_2(argv, says):
    """MATRIX-VERSIONS, MATRIX-EXIT: usage errors exit 2 before anything runs."""
    result = CliRunner().invoke(matrix, argv)
    assert result.exit_code == 2, result.output
    assert says in result.stderr


def test_an_uninstallable_release_is_one_line_naming_it_exit_3(tmp_path, monkeypatch):
    """MATRIX-EXIT: a release npm cannot install: exit 3, one line naming the release."""
    monkeypatch.setenv("CREDITFLOW_CACHE", str(tmp_path))
    result = CliRunner().invoke(matrix, ["--adapter", "rhea", "--versions", "99.99.99"])
    assert result.exit_code == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "release rhea@99.99.99: cannot install" in lines[0]


def test_the_command_runs_a_release_and_writes_json_to_out(tmp_path):
    """MATRIX-COMMAND, MATRIX-FORMATS, MATRIX-FINDINGS: a real rhea run; its first finding
    is the missing drain echo, keyed by rule @ op."""
    out = tmp_path / "m.json"
    argv = ["--adapter", "rhea", "--versions", "3.0.5", "--depth", "2", "--max-examples", "1"]
    result = CliRunner().invoke(matrix, [*argv, "--format", "json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["releases"] == ["3.0.5"] and doc["runs"]["3.0.5"]["exit_code"] == 1
    assert doc["runs"]["3.0.5"]["ran"] is True
    assert any(r["signature"].startswith("AMQ-LINK-DRAIN @ drained") for r in doc["rows"])


def test_versions_all_are_the_cached_releases():
    """MATRIX-VERSIONS, MATRIX-RELEASES: every matrix release is in the cache (setup.sh
    installs them), so ``all`` covers them."""
    for library, releases in amqp_versions.MATRIX_RELEASES.items():
        assert set(releases) <= set(amqp_versions.cached_releases(library)), library
    assert "install-matrix" in (ROOT / "scripts" / "setup.sh").read_text()


# --- the docs' matrices -----------------------------------------------------------


@pytest.fixture(scope="module")
def generated():
    """Every block of docs/amqp.md run once: its arguments → the matrix."""
    out = {}
    for args, _body in doc_blocks(PAGE.read_text(encoding="utf-8")):
        ctx = matrix.make_context("matrix", list(block_args(args)))
        p = ctx.params
        settings = MatrixSettings(
            p["seed"], p["depth"], p["max_examples"], p["steps"], p["skip_ops"], p["timeout"]
        )
        out[args] = run_matrix(p["adapter"], p["versions"], settings)
    return out


def test_the_docs_version_matrices_are_the_tools_output(generated):
    """MATRIX-DOCS: docs/amqp.md's blocks (rhea, proton, azure-pyamqp over three releases
    each) are exactly what a fresh run renders."""
    text = PAGE.read_text(encoding="utf-8")
    libraries = {m.adapter for m in generated.values()}
    assert {"rhea", "proton", "azure-pyamqp"} <= libraries
    assert all(len(m.releases) >= 3 and m.exit_code == 0 for m in generated.values())
    assert replace_blocks(text, lambda args: render_markdown(generated[args])) == text


def test_neighbouring_releases_differ_in_one_row_and_share_the_rest(generated):
    """MATRIX-CHANGES on real runs, one matrix: with every finding of each run listed
    (FIND-EVERY), rhea 2.0.8 and 3.0.4 share the missing drain echo (it stands in both)
    and differ in exactly one row, the ring stall that 3.0.4 introduced; without drains
    the stall is again the one difference."""
    every_op = next(m for a, m in generated.items() if "rhea" in a and "skip-op" not in a)
    no_drain = next(m for a, m in generated.items() if "rhea" in a and "--skip-op drain" in a)
    shared = every_op.shared("2.0.8", "3.0.4")
    assert any(r.rule == "AMQ-LINK-DRAIN" for r in shared)
    assert all(r.present["2.0.8"] and r.present["3.0.4"] for r in shared)
    for m in (every_op, no_drain):
        (changed,) = m.differing("2.0.8", "3.0.4")
        assert changed.rule == "PROP-AMQ-NO-STALL" and changed.introduced == "3.0.4"
        assert changed.present == {"2.0.8": False, "3.0.4": True, "3.0.5": True}
