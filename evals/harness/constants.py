"""Names shared by the harness: test statuses, resolutions, report keys, paths inside the sandbox."""

from __future__ import annotations

from enum import Enum


class TestStatus(str, Enum):
    __test__ = False  # not a pytest test class

    PASSED = "PASSED"
    FAILED = "FAILED"
    ERROR = "ERROR"
    SKIPPED = "SKIPPED"
    XFAIL = "XFAIL"
    XPASS = "XPASS"


class Resolution(str, Enum):
    FULL = "FULL"
    PARTIAL = "PARTIAL"
    NO = "NO"


class GradeStatus(str, Enum):
    RESOLVED = "resolved"
    UNRESOLVED = "unresolved"
    ERROR = "error"  # infrastructure: never the model's fault, reward None


# SWE-bench: a test passes when PASSED or XFAIL. Everything else, a missing test included, fails.
# SKIPPED is a failure too (SWE-bench ignores it): a model must not pass by skipping the tests that check it.
PASSING = frozenset({TestStatus.PASSED.value, TestStatus.XFAIL.value})

FAIL_TO_PASS = "FAIL_TO_PASS"
PASS_TO_PASS = "PASS_TO_PASS"
FAIL_TO_FAIL = "FAIL_TO_FAIL"
PASS_TO_FAIL = "PASS_TO_FAIL"

# Where things are inside the bubblewrap sandbox.
SANDBOX_TESTBED = "/testbed"
SANDBOX_TOOLS = "/opt/postgame-harness"
SANDBOX_UID = 1000
SANDBOX_USER = "sandbox"
SANDBOX_ENV = "/opt/postgame-env"  # a per-repository environment (venv): built there, mounted read-only there
SANDBOX_BUILD = "/opt/postgame-build"  # an environment build's scratch: TMPDIR/HOME and copies of local packages
