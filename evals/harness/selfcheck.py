"""Check that instances grade as they must: gold patch resolved, empty patch unresolved, and the test patch alone
(on the base) failing every FAIL_TO_PASS test while every PASS_TO_PASS test passes.

    checks = check_instances(load_instances(F), repos_dir=REPOS, settings=HarnessSettings())
    bad = [c for c in checks if c.problems]

Used by the tests of every shipped instance set (the examples here, the task factory's output).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from evals.harness.constants import PASSING
from evals.harness.evaluator import evaluate
from evals.harness.instance import Instance
from evals.harness.testrun import run_tests
from postgame.settings.harness import HarnessSettings


@dataclass
class InstanceCheck:
    instance_id: str
    problems: list[str] = field(default_factory=list)


def check_instance(instance: Instance, *, repos_dir: str | Path | None, settings: HarnessSettings) -> InstanceCheck:
    check = InstanceCheck(instance.instance_id)
    if not instance.FAIL_TO_PASS:
        check.problems.append("no FAIL_TO_PASS tests")
    gold = evaluate(instance, instance.patch, repos_dir=repos_dir, settings=settings)
    if not gold.resolved:
        check.problems.append(f"gold patch is {gold.status}: {gold.error or gold.apply_error or gold.tests_status}")
    empty = evaluate(instance, "", repos_dir=repos_dir, settings=settings)
    if empty.status != "unresolved":
        check.problems.append(f"empty patch is {empty.status}")
    base = run_tests(instance, "", repos_dir=repos_dir, settings=settings)
    if base.infra_error:
        check.problems.append(f"test patch alone: {base.infra_error}")
    else:
        passing = [t for t in instance.FAIL_TO_PASS if base.statuses.get(t) in PASSING]
        if passing:
            check.problems.append(f"FAIL_TO_PASS tests pass without the fix: {passing}")
        failing = [t for t in instance.PASS_TO_PASS if base.statuses.get(t) not in PASSING]
        if failing:
            check.problems.append(f"PASS_TO_PASS tests fail on the base: {failing}")
    return check


def check_instances(
    instances: list[Instance], *, repos_dir: str | Path | None, settings: HarnessSettings, workers: int | None = None
) -> list[InstanceCheck]:
    n = max(1, workers or settings.workers or os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(lambda i: check_instance(i, repos_dir=repos_dir, settings=settings), instances))
