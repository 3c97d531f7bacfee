"""The factory keeps a mutant only when real harness runs show it breaks some tests and not others, every time. Each
drop verdict, produced by a real run on a tiny seed project: no_failing_test, no_passing_test, flaky, timed_out,
crashed — and kept, with its exact FAIL_TO_PASS / PASS_TO_PASS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.factory.mutate import Mutation
from evals.factory.verify import Job, baseline, validate_candidate
from postgame.settings.harness import HarnessSettings

SOURCE = """import os


def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def unused(x):
    return x


def coin(i):
    return True
"""

TESTS = """import pytest

from tinycalc import add, coin, mul


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6


@pytest.mark.parametrize("i", range(24))
def test_coin(i):
    assert coin(i)
"""

COIN = [f"tests/test_calc.py::test_coin[{i}]" for i in range(24)]
ADD, MUL = "tests/test_calc.py::test_add", "tests/test_calc.py::test_mul"


def edit(original: str, replacement: str) -> Mutation:
    start = SOURCE.index(original)
    return Mutation(
        "hand_made",
        "tinycalc/__init__.py",
        start,
        start + len(original),
        SOURCE[:start].count("\n") + 1,
        original,
        replacement,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Job, list[str]]:
    root = tmp_path_factory.mktemp("seeds") / "tinycalc"
    (root / "tinycalc").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tinycalc" / "__init__.py").write_text(SOURCE)
    (root / "tests" / "test_calc.py").write_text(TESTS)
    (root / "seed.json").write_text(json.dumps({"name": "tinycalc", "repo": "acme/tinycalc"}))
    scratch = tmp_path_factory.mktemp("scratch")
    settings = HarnessSettings(timeout_s=4, workers=1)
    job = Job(
        seed_dir=str(root),
        project="tinycalc",
        harness=settings.model_dump(mode="json"),
        runs=2,
        scratch=str(scratch),
        cache_dir=str(scratch / "cache"),
    )
    clean = baseline(job)
    assert clean.error is None, clean.error
    return job, clean.passing


def verdict(project, mutation: Mutation):
    job, passing = project
    return validate_candidate(Job(**{**job.__dict__, "passing": tuple(passing), "mutation": mutation}))


def test_the_clean_suite_passes_entirely(project):
    _, passing = project
    assert sorted(passing) == sorted([ADD, MUL, *COIN])


def test_a_mutant_that_breaks_some_tests_is_kept_with_exact_lists(project):
    got = verdict(project, edit("return a + b", "return a - b"))
    assert (got.status, got.fail_to_pass, sorted(got.pass_to_pass)) == ("kept", [ADD], sorted([MUL, *COIN]))


def test_a_mutant_no_test_notices_is_dropped(project):
    assert verdict(project, edit("    return x\n", "    return x + 1\n")).status == "no_failing_test"


def test_a_mutant_that_breaks_every_test_is_dropped(project):
    broken = "def add(a, b):\n    return None\n\n\ndef mul(a, b):\n    return None"
    whole = SOURCE[SOURCE.index("def add") : SOURCE.index("\n\n\ndef unused")]
    coin = verdict(
        project,
        edit(whole + SOURCE[SOURCE.index("\n\n\ndef unused") :], broken + "\n\n\ndef coin(i):\n    return False\n"),
    )
    assert coin.status == "no_passing_test"


def test_a_mutant_whose_tests_disagree_between_runs_is_flaky(project):
    # 24 coin tests, each a fair coin per run: two runs agree on all of them with probability 2**-24.
    assert verdict(project, edit("return True", "return os.urandom(1)[0] % 2 == 0")).status == "flaky"


def test_a_mutant_that_loops_forever_times_out(project):
    assert verdict(project, edit("return a * b", "while True:\n        pass")).status == "timed_out"


def test_a_mutant_that_kills_the_test_process_crashed(project):
    assert verdict(project, edit("return True", "os.abort()")).status == "crashed"


def test_verdicts_are_cached_by_snapshot(project, tmp_path: Path):
    first = verdict(project, edit("return a + b", "return a - b"))
    assert verdict(project, edit("return a + b", "return a - b")).cached and first.status == "kept"
