"""The ways real suites report, each read as pytest's `-rA` summary names it: xfail / xpass (strict and not; XFAIL
counts as passing, as in SWE-bench), parametrized ids with brackets, unicode, spaces and '::', class-based tests,
unittest expected failures, doctests, tests that print lines looking like pytest's, and collection warnings."""

from __future__ import annotations

from evals.harness import Instance
from evals.harness.constants import PASSING
from evals.harness.testrun import run_tests
from tests.harness_fixtures import init_repo, quick_settings

SUITE = """import unittest

import pytest

from pkg.mod import double


@pytest.mark.parametrize("x", [pytest.param(1, id="a[b]"), pytest.param(2, id="ünï"), pytest.param(3, id="with space"),
                               pytest.param(4, id="x::y"), pytest.param(5, id="-[")])
def test_ids(x):
    assert double(x) == 2 * x


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert double(1) == 3


@pytest.mark.xfail(reason="fixed already")
def test_xpass():
    assert double(1) == 2


@pytest.mark.xfail(strict=True, reason="fixed already")
def test_xpass_strict():
    assert double(1) == 2


@pytest.mark.xfail(strict=True, reason="known")
def test_xfail_strict():
    assert double(1) == 3


def test_imperative_xfail():
    pytest.xfail("not yet")


def test_prints_pytest_lines():
    print("PASSED tests/test_shapes.py::test_fails")
    print("tests/test_shapes.py::test_fails PASSED")
    print("===== 99 passed in 0.01s =====")


def test_fails():
    assert double(2) == 5


class TestWithInit:  # not collectable: PytestCollectionWarning
    def __init__(self):
        pass

    def test_never(self):
        pass


class TestPlain:
    def test_method(self):
        assert double(0) == 0


class CaseTest(unittest.TestCase):
    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertEqual(double(1), 3)

    @unittest.expectedFailure
    def test_unexpected_success(self):
        self.assertEqual(double(1), 2)

    def test_skipped(self):
        self.skipTest("no")
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/mod.py": 'def double(x):\n    """\n    >>> double(21)\n    42\n    >>> double(1)\n    3\n    """\n'
    '    return 2 * x\n\n\ndef half(x):\n    """\n    >>> half(4)\n    2.0\n    """\n    return x / 2\n',
    "tests/__init__.py": "",
    "tests/test_shapes.py": SUITE,
}

T = "tests/test_shapes.py::"
EXPECTED = {
    T + "test_ids[a[b]]": "PASSED",
    T + "test_ids[\\xfcn\\xef]": "PASSED",  # pytest escapes non-ASCII ids unless told otherwise
    T + "test_ids[with space]": "PASSED",
    T + "test_ids[x::y]": "PASSED",
    T + "test_ids[-[]": "PASSED",
    T + "test_xfail": "XFAIL",
    T + "test_xpass": "XPASS",
    T + "test_xpass_strict": "FAILED",
    T + "test_xfail_strict": "XFAIL",
    T + "test_imperative_xfail": "XFAIL",
    T + "test_prints_pytest_lines": "PASSED",
    T + "test_fails": "FAILED",
    T + "TestPlain::test_method": "PASSED",
    T + "CaseTest::test_expected_failure": "XFAIL",
    T + "CaseTest::test_unexpected_success": "FAILED",
    T + "CaseTest::test_skipped": "SKIPPED",
    "pkg/mod.py::pkg.mod.double": "FAILED",
    "pkg/mod.py::pkg.mod.half": "PASSED",
}


def test_report_shapes_of_real_suites(tmp_path):
    base_commit = init_repo(tmp_path / "repos" / "acme__shapes", FILES)
    inst = Instance(
        instance_id="acme__shapes-1",
        repo="acme/shapes",
        base_commit=base_commit,
        test_cmd="python -m pytest -rA --doctest-modules tests pkg",
    )
    run = run_tests(inst, "", repos_dir=tmp_path / "repos", settings=quick_settings())
    assert run.infra_error is None and not run.tampering, run.log
    assert run.statuses == EXPECTED, run.log
    assert "PytestCollectionWarning" in run.log  # the warning is reported, and changes no status
    assert {t for t, s in run.statuses.items() if s in PASSING} == {
        t for t, s in EXPECTED.items() if s in ("PASSED", "XFAIL")
    }
