"""The pytest plugin (AD-CORPUS): a trace corpus becomes test items, JUnit XML comes
from pytest's own --junitxml, expectations turn known divergences into xfails (an
unexpected pass fails), and without an adapter the plugin collects nothing. Most runs
are in-process (fast); the CI-gate one runs pytest in a subprocess, as CI does."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET

import pytest

from creditflow.conformance.differential.corpus import corpus_dir

pytest_plugins = ["pytester"]


@pytest.fixture
def corpus(pytester):
    target = pytester.path / "corpus"
    shutil.copytree(corpus_dir(), target)
    return target


def junit(path) -> tuple[int, int, int, list[str]]:
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    names = [case.get("name") for case in suite.iter("testcase")]
    return (int(suite.get("tests")), int(suite.get("failures")), int(suite.get("skipped")), names)


def test_corpus_gates_the_real_module(pytester, corpus):
    """CI: every corpus trace is an item and passes against RabbitMQ 3.10.8, in a fresh
    interpreter (the plugin loads through its pytest11 entry point)."""
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        str(corpus),
        "--creditflow-adapter",
        "rabbitmq",
        f"--junitxml={xml}",
        "-p",
        "no:cacheprovider",
    )
    n = len(list(corpus.glob("*.itf.json")))
    result.assert_outcomes(passed=n)
    tests, failures, skipped, names = junit(xml)
    assert (tests, failures, skipped) == (n, 0, 0)
    assert "cf4-channel-blocked-on-dead-queue" in names


def test_divergences_fail_with_the_diff(pytester, corpus):
    """A mutant fails the CF3 and CF4 traces; the failure shows model vs implementation."""
    xml = pytester.path / "junit.xml"
    result = pytester.runpytest(
        str(corpus),
        "--creditflow-adapter",
        "mutant:peer-down-no-unblock",
        f"--junitxml={xml}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=len(list(corpus.glob("*.itf.json"))) - 2, failed=2)
    result.stdout.fnmatch_lines(["*peer_down(channel, queue)*", "*blocked*[[]]*[[]queue[]]*"])
    assert junit(xml)[1] == 2


def test_expectations_make_known_divergences_xfail(pytester, corpus):
    """AD-EXPECTATIONS, AD-EXPECTATIONS-MATCH through the plugin: known divergences
    xfail, and an unexpected pass fails."""
    from creditflow.conformance.inputs.expectations import shipped_expectations

    known = shipped_expectations("mutant-peer-down-no-unblock")
    result = pytester.runpytest(
        str(corpus),
        "--creditflow-adapter",
        "mutant:peer-down-no-unblock",
        f"--creditflow-expectations={known}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=len(list(corpus.glob("*.itf.json"))) - 2, xfailed=2)
    result = pytester.runpytest(
        str(corpus),
        "--creditflow-adapter",
        "reference",
        f"--creditflow-expectations={known}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=len(list(corpus.glob("*.itf.json"))) - 2, failed=2)


def test_without_an_adapter_nothing_is_collected(pytester, corpus):
    result = pytester.runpytest(str(corpus), "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_adapter_cmd_and_bad_options(pytester, corpus):
    """AD-CMD through the plugin, and usage errors for unknown adapters."""
    import sys

    cmd = f"{sys.executable} -m creditflow.adapters.python_template"
    result = pytester.runpytest(
        str(corpus), f"--creditflow-adapter-cmd={cmd}", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=len(list(corpus.glob("*.itf.json"))))
    result = pytester.runpytest(str(corpus), "--creditflow-adapter=nope", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
