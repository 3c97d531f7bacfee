"""Grading is pure: statuses + test lists -> tests_status, resolution, reward. Checked case by case against
SWE-bench's semantics and the holes postgame closes (missing and SKIPPED tests fail, a timeout is NO)."""

import pytest

from evals.harness import grading
from evals.harness.constants import Resolution, TestStatus

# Whether a test in this state counts as passed (SWE-bench: PASSED and XFAIL only); None = missing from the results.
PASSES = {"PASSED": True, "XFAIL": True, "FAILED": False, "ERROR": False, "SKIPPED": False, "XPASS": False, None: False}


def test_the_pass_table_covers_every_status():
    assert set(PASSES) == {s.value for s in TestStatus} | {None}


@pytest.mark.parametrize("status,passes", PASSES.items())
def test_only_passed_and_xfail_pass(status, passes):
    statuses = {} if status is None else {"t::a": status}
    report = grading.tests_report(["t::a"], [], statuses)
    assert report.fail_to_pass.success == (["t::a"] if passes else [])
    assert report.fail_to_pass.failure == ([] if passes else ["t::a"])


# SWE-bench's verdict, written out: one letter per listed test, P passed / F failed; "" = none listed.
# FULL: every FAIL_TO_PASS and every PASS_TO_PASS passes. PARTIAL: some but not all FAIL_TO_PASS pass and every
# PASS_TO_PASS passes. NO: anything else (a broken PASS_TO_PASS always loses).
RESOLUTIONS = [
    # FAIL_TO_PASS, PASS_TO_PASS, resolution
    ("", "", Resolution.FULL),
    ("P", "", Resolution.FULL),
    ("F", "", Resolution.NO),
    ("", "P", Resolution.FULL),
    ("", "F", Resolution.NO),
    ("P", "P", Resolution.FULL),
    ("P", "F", Resolution.NO),
    ("F", "P", Resolution.NO),
    ("F", "F", Resolution.NO),
    ("PP", "P", Resolution.FULL),
    ("PF", "P", Resolution.PARTIAL),
    ("FP", "P", Resolution.PARTIAL),
    ("FF", "P", Resolution.NO),
    ("PF", "F", Resolution.NO),
    ("PF", "", Resolution.PARTIAL),
    ("PP", "PF", Resolution.NO),
    ("PPF", "PP", Resolution.PARTIAL),
    ("FFP", "PP", Resolution.PARTIAL),
    ("PPP", "PP", Resolution.FULL),
    ("PPP", "FP", Resolution.NO),
    ("FFF", "PP", Resolution.NO),
]


@pytest.mark.parametrize("f2p,p2p,expected", RESOLUTIONS)
def test_resolution_matches_swe_bench(f2p, p2p, expected):
    f2p_ids = [f"f::{i}" for i in range(len(f2p))]
    p2p_ids = [f"p::{i}" for i in range(len(p2p))]
    statuses = {t: ("PASSED" if ok == "P" else "FAILED") for t, ok in zip(f2p_ids + p2p_ids, f2p + p2p)}
    assert grading.resolution(grading.tests_report(f2p_ids, p2p_ids, statuses)) is expected


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
