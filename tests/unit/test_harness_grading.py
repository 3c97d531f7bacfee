"""Grading is pure: statuses + test lists -> tests_status, resolution, reward. Checked case by case against
SWE-bench's semantics and the holes postgame closes (missing and SKIPPED tests fail, a timeout is NO)."""

import itertools

import pytest

from evals.harness import grading
from evals.harness.constants import Resolution, TestStatus

ALL = [s.value for s in TestStatus] + [None]  # None: missing from the results


@pytest.mark.parametrize("status", ALL)
def test_only_passed_and_xfail_pass(status):
    statuses = {} if status is None else {"t::a": status}
    report = grading.tests_report(["t::a"], [], statuses)
    passed = status in ("PASSED", "XFAIL")
    assert report.fail_to_pass.success == (["t::a"] if passed else [])
    assert report.fail_to_pass.failure == ([] if passed else ["t::a"])


def _expected(f2p_pass: list[bool], p2p_pass: list[bool]) -> Resolution:
    f2p_rate = 1.0 if not f2p_pass else sum(f2p_pass) / len(f2p_pass)
    p2p_rate = 1.0 if not p2p_pass else sum(p2p_pass) / len(p2p_pass)
    if f2p_rate == 1 and p2p_rate == 1:
        return Resolution.FULL
    if 0 < f2p_rate < 1 and p2p_rate == 1:
        return Resolution.PARTIAL
    return Resolution.NO


@pytest.mark.parametrize("n_f2p,n_p2p", [(0, 0), (1, 0), (0, 1), (2, 1), (1, 2), (3, 2)])
def test_resolution_matches_swe_bench_for_every_combination(n_f2p, n_p2p):
    f2p = [f"f::{i}" for i in range(n_f2p)]
    p2p = [f"p::{i}" for i in range(n_p2p)]
    for outcome in itertools.product([True, False], repeat=n_f2p + n_p2p):
        statuses = {t: ("PASSED" if ok else "FAILED") for t, ok in zip(f2p + p2p, outcome)}
        report = grading.tests_report(f2p, p2p, statuses)
        expected = _expected(list(outcome[:n_f2p]), list(outcome[n_f2p:]))
        assert grading.resolution(report) is expected, (statuses, expected)


def test_missing_tests_fail_never_assumed_passing():  # SWE-smith #24
    report = grading.tests_report(["t::f"], ["t::p"], {})
    assert grading.resolution(report) is Resolution.NO
    assert report.fail_to_pass.failure == ["t::f"] and report.pass_to_pass.failure == ["t::p"]


def test_skipped_fail_to_pass_is_a_failure():
    report = grading.tests_report(["t::f"], ["t::p"], {"t::f": "SKIPPED", "t::p": "PASSED"})
    assert grading.resolution(report) is Resolution.NO


def test_skipped_pass_to_pass_is_a_failure():
    report = grading.tests_report(["t::f"], ["t::p"], {"t::f": "PASSED", "t::p": "SKIPPED"})
    assert grading.resolution(report) is Resolution.NO


def test_xpass_fails_like_swe_bench():
    assert grading.resolution(grading.tests_report(["t::f"], [], {"t::f": "XPASS"})) is Resolution.NO


def test_timeout_is_no_even_when_everything_passed():
    report = grading.tests_report(["t::f"], ["t::p"], {"t::f": "PASSED", "t::p": "PASSED"})
    assert grading.resolution(report) is Resolution.FULL
    assert grading.resolution(report, timed_out=True) is Resolution.NO


def test_empty_lists_are_full_like_swe_bench():
    assert grading.resolution(grading.tests_report([], [], {})) is Resolution.FULL


@pytest.mark.parametrize(
    "res,rate,partial,expected",
    [
        (Resolution.FULL, 1.0, False, 1.0),
        (Resolution.FULL, 1.0, True, 1.0),
        (Resolution.PARTIAL, 0.5, False, 0.0),
        (Resolution.PARTIAL, 0.5, True, 0.5),
        (Resolution.NO, 0.0, True, 0.0),
        (Resolution.NO, 0.0, False, 0.0),
    ],
)
def test_reward(res, rate, partial, expected):
    f2p = ["a", "b"]
    statuses = {"a": "PASSED"} if rate == 0.5 else ({"a": "PASSED", "b": "PASSED"} if rate == 1 else {})
    report = grading.tests_report(f2p, [], statuses)
    assert grading.reward(res, report, partial_credit=partial) == expected


def test_tests_status_keeps_swe_bench_shape():
    d = grading.tests_report(["f"], ["p"], {"f": "PASSED", "p": "FAILED"}).to_dict()
    assert set(d) == {"FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL"}
    assert d["FAIL_TO_PASS"] == {"success": ["f"], "failure": []}
    assert d["PASS_TO_PASS"] == {"success": [], "failure": ["p"]}
