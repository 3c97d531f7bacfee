"""Does a candidate patch keep the visible tests passing? The scaffold's regression check.

    with VisibleTests(instance, settings) as tests:        # the tree an agent sees: FAIL_TO_PASS cut out
        for patch in candidates:                           # likeliest first
            if tests.check(patch).passed:                  # no visible test that passed at base fails with it
                break

What a coding agent does before it submits, done by the scaffold for a single answer: Agentless's regression-test
filtering (its candidate patches are run against the repository's existing tests, and those that break one are
dropped). The tree is the agent environment's (`open_workspace`: the base, the test patch applied, every
FAIL_TO_PASS test cut out), so only tests the agent could run itself ever run — the hidden tests that grade the answer
never do. The visible tests run once at base and once per candidate, each a launch of the harness's sandbox over the
copy; after each candidate its files are put back from the base. A candidate that edits a test file is not run
(the grader drops such edits). A candidate passes when it applies and no visible test that passed
at base fails, errors or goes missing with it. What it cannot see it cannot check: a PASS_TO_PASS test in a file the
cut hid whole, or a case of a parametrised test the cut had to take out whole (`evals.agent.visible`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from evals.agent.repro import Reproduction
from evals.agent.workspace import Workspace, open_workspace
from evals.harness.instance import Instance
from evals.harness.patching import apply_patch, patch_paths, safe_restore
from evals.harness.paths import UnsafePath
from evals.harness.protect import is_test_path
from evals.harness.testrun import TestRun
from postgame.settings.harness import HarnessSettings

PASSING = ("PASSED", "XFAIL", "SKIPPED")


@dataclass(frozen=True)
class Verdict:
    passed: bool
    broken: tuple[str, ...]  # visible tests that passed at base and do not with the candidate
    seconds: float
    reason: str = ""  # why it did not pass, in a few words


class VisibleTests:
    """The visible tests of one instance, run at base and against candidate patches (see the module docstring)."""

    def __init__(
        self,
        instance: Instance,
        settings: HarnessSettings,
        *,
        repos_dir: Path | None = None,
        memo: dict[str, TestRun] | None = None,
    ):
        self.instance, self.settings, self.repos_dir = instance, settings, repos_dir
        self.memo = memo  # an episode's test runs by tree (`Workspace.run_tests`): a patch tried twice runs once
        self.runs = 0
        self.seconds = 0.0
        self._ws: Workspace | None = None
        self._passing: set[str] = set()
        self.repros: dict[str, bool | None] = {}  # the reproduction by patch (`reproduces`)

    def __enter__(self) -> VisibleTests:
        self._ws = open_workspace(self.instance, repos_dir=self.repos_dir, settings=self.settings)
        statuses, _ = self._run()
        self._passing = {t for t, s in statuses.items() if s in PASSING}
        return self

    def __exit__(self, *exc: object) -> None:
        if self._ws is not None:
            self._ws.close()
            self._ws = None

    def _run(self, settings: HarnessSettings | None = None) -> tuple[dict[str, str], bool]:
        assert self._ws is not None, "use VisibleTests as a context manager"
        reused = self._ws.reused
        run = self._ws.run_tests(None, settings or self.settings, self.memo)
        if self._ws.reused == reused:
            self.runs += 1
            self.seconds += run.seconds
        return dict(run.statuses), bool(run.timed_out or run.infra_error)

    def reproduces(self, patch: str, repro: Reproduction, settings: HarnessSettings | None = None) -> bool | None:
        """Does the visible tree with `patch` do what the issue says it should (`evals.agent.repro`)? The same
        fresh copy as `check`, put back after; each patch is run once (`self.repros`). False for a patch that
        does not apply or edits a test file; None when the run could not tell."""
        ws = self._ws
        assert ws is not None, "use VisibleTests as a context manager"
        if patch not in self.repros:
            start = time.monotonic()
            with self._applied(patch) as applied:
                self.repros[patch] = applied and ws.reproduce(repro, settings or self.settings)
            self.seconds += time.monotonic() - start
        return self.repros[patch]

    @contextlib.contextmanager
    def _applied(self, patch: str) -> Iterator[bool]:
        """The tree with `patch` applied (an empty patch: as it is) while inside; False when it does not apply or
        edits a test file (the grader drops such edits: never run them here). Put back from the base after."""
        ws = self._ws
        assert ws is not None, "use VisibleTests as a context manager"
        touched = patch_paths(patch) if patch.strip() else []
        if any(rel in ws.test_paths or is_test_path(rel) for rel in touched):
            yield False
            return
        try:
            yield not touched or apply_patch(ws.copy, patch, base_dir=ws.base).applied
        finally:
            for rel in touched:
                try:
                    safe_restore(ws.copy, ws.base, rel)
                except UnsafePath:
                    pass

    def check(self, patch: str, settings: HarnessSettings | None = None) -> Verdict:
        """Apply `patch` to the visible tree, run the visible tests (within `settings`' limits when given: an
        agent's episode hands the time it has left), put the tree back."""
        ws = self._ws
        assert ws is not None, "use VisibleTests as a context manager"
        start = time.monotonic()
        if not patch.strip():
            return Verdict(False, (), 0.0, "empty patch")
        if any(rel in ws.test_paths or is_test_path(rel) for rel in patch_paths(patch)):
            return Verdict(False, (), 0.0, "edits a test file")  # the grader drops such edits; never run them here
        with self._applied(patch) as applied:
            if not applied:
                return Verdict(False, (), time.monotonic() - start, "does not apply")
            statuses, failed_run = self._run(settings)
        broken = tuple(sorted(t for t in self._passing if statuses.get(t) not in PASSING))
        if failed_run:
            return Verdict(False, broken, time.monotonic() - start, "the visible tests timed out or could not run")
        if broken:
            return Verdict(False, broken, time.monotonic() - start, f"breaks {len(broken)} visible test(s)")
        return Verdict(True, (), time.monotonic() - start)
