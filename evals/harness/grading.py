"""Grading, pure: per-test statuses + the instance's test lists -> tests_status, resolution, reward.

Semantics are SWE-bench's (swebench 5.x `grading.py`), with two holes closed:
- a test passes when its status is PASSED or XFAIL; a test missing from the results fails (SWE-bench too; SWE-smith
  #24 assumed the opposite);
- a SKIPPED test fails (SWE-bench leaves it out of both lists, so a model could pass by skipping what checks it);
- FULL when every FAIL_TO_PASS and every PASS_TO_PASS test passes (an empty list counts as all passing), PARTIAL when
  some but not all FAIL_TO_PASS pass and every PASS_TO_PASS passes, NO otherwise. Only FULL is resolved;
- a run that hit the wall-clock timeout is NO whatever it printed: a policy must not learn to hang.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from evals.harness.constants import (
    FAIL_TO_FAIL,
    FAIL_TO_PASS,
    PASS_TO_FAIL,
    PASS_TO_PASS,
    PASSING,
    Resolution,
)


@dataclass(frozen=True)
class Outcome:
    success: list[str] = field(default_factory=list)
    failure: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        total = len(self.success) + len(self.failure)
        return 1.0 if total == 0 else len(self.success) / total

    def to_dict(self) -> dict[str, list[str]]:
        return {"success": list(self.success), "failure": list(self.failure)}


@dataclass(frozen=True)
class TestsReport:
    __test__ = False  # not a pytest test class

    fail_to_pass: Outcome
    pass_to_pass: Outcome

    def to_dict(self) -> dict[str, dict[str, list[str]]]:
        """SWE-bench's `tests_status` shape (FAIL_TO_FAIL / PASS_TO_FAIL are kept, empty, as SWE-bench does)."""
        return {
            FAIL_TO_PASS: self.fail_to_pass.to_dict(),
            PASS_TO_PASS: self.pass_to_pass.to_dict(),
            FAIL_TO_FAIL: Outcome().to_dict(),
            PASS_TO_FAIL: Outcome().to_dict(),
        }


def is_passing(test: str, statuses: Mapping[str, str]) -> bool:
    return statuses.get(test) in PASSING


def _split(tests: Iterable[str], statuses: Mapping[str, str]) -> Outcome:
    success: list[str] = []
    failure: list[str] = []
    for test in tests:
        (success if is_passing(test, statuses) else failure).append(test)
    return Outcome(success, failure)


def tests_report(fail_to_pass: Iterable[str], pass_to_pass: Iterable[str], statuses: Mapping[str, str]) -> TestsReport:
    """Which FAIL_TO_PASS and PASS_TO_PASS tests passed in `statuses` (node id -> status)."""
    return TestsReport(_split(fail_to_pass, statuses), _split(pass_to_pass, statuses))


def resolution(report: TestsReport, *, timed_out: bool = False) -> Resolution:
    if timed_out:
        return Resolution.NO
    f2p, p2p = report.fail_to_pass.rate, report.pass_to_pass.rate
    if f2p == 1 and p2p == 1:
        return Resolution.FULL
    if 0 < f2p < 1 and p2p == 1:
        return Resolution.PARTIAL
    return Resolution.NO


def reward(res: Resolution, report: TestsReport, *, partial_credit: bool = False) -> float:
    """1.0 for FULL, else 0.0; with partial credit, PARTIAL earns its FAIL_TO_PASS pass rate."""
    if res is Resolution.FULL:
        return 1.0
    if partial_credit and res is Resolution.PARTIAL:
        return report.fail_to_pass.rate
    return 0.0
