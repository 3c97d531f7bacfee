"""Batches, reports, the cache, the RL reward and the CLI: one bad instance never kills the batch; infrastructure
errors are kept apart from model failures (None reward, error_ids) and are never cached."""

import json

import pytest
import typer
from typer.testing import CliRunner

from evals.harness import GradeCache, Instance, Prediction, evaluate, make_reward_fn, run_evaluation
from evals.harness import evaluator as evaluator_module
from evals.harness.cli import register
from evals.harness.evaluator import _flaky
from evals.harness.testrun import TestRun
from tests.harness_fixtures import CALC_BASE, CALC_TESTS, calc_instance, diff_against, quick_settings
from tests.support import sandbox_shortfall


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return calc_instance(tmp_path_factory.mktemp("calc"))


def test_run_report_keeps_swe_bench_shape_and_isolates_bad_instances(tiny, tmp_path):
    missing = Instance(instance_id="ghost-1", repo="acme/ghost", base_commit="deadbeef")
    broken = tiny.instance.model_copy(
        update={"instance_id": "broken-1", "test_patch": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"}
    )
    empty = tiny.instance.model_copy(update={"instance_id": "empty-1"})
    preds = [
        Prediction(instance_id=tiny.instance.instance_id, model_name_or_path="m", model_patch=tiny.gold),
        Prediction(instance_id="ghost-1", model_patch=tiny.gold),
        Prediction(instance_id="broken-1", model_patch=tiny.gold),
        Prediction(instance_id="empty-1", model_patch=""),
        Prediction(instance_id="nobody-1", model_patch="x"),
    ]
    report = run_evaluation(
        [tiny.instance, missing, broken, empty],
        preds,
        repos_dir=tiny.repos_dir,
        out_dir=tmp_path,
        settings=quick_settings(),
        workers=2,
        progress=False,
    )
    data = json.loads((tmp_path / "report.json").read_text())
    for key in (
        "total_instances",
        "submitted_instances",
        "completed_instances",
        "resolved_instances",
        "resolved_ids",
        "unresolved_ids",
        "error_ids",
        "empty_patch_ids",
    ):
        assert key in data
    assert data["resolved_ids"] == [tiny.instance.instance_id]
    assert data["error_ids"] == ["ghost-1", "broken-1"]
    assert data["empty_patch_ids"] == ["empty-1"] and "empty-1" in data["unresolved_ids"]
    assert data["unknown_prediction_ids"] == ["nobody-1"]
    assert "not found" in data["instances"]["ghost-1"]["error"] and data["instances"]["ghost-1"]["reward"] is None
    assert "test_patch does not apply" in data["instances"]["broken-1"]["error"]
    gold = data["instances"][tiny.instance.instance_id]
    assert gold["patch_successfully_applied"] and gold["resolved"] and gold["status"] == "resolved"
    assert gold["sandbox"] == ("rlimits" if sandbox_shortfall("bwrap") else "bwrap")  # never rlimits where bwrap works
    assert gold["seconds"] > 0 and gold["reverted_files"] == []
    assert gold["tests_status"]["FAIL_TO_PASS"]["success"] == ["tests/test_ops.py::test_divide"]
    inst_dir = tmp_path / tiny.instance.instance_id
    assert {p.name for p in inst_dir.iterdir()} == {"patch.diff", "test_output.txt", "report.json"}
    assert "PASSED tests/test_ops.py::test_divide" in (inst_dir / "test_output.txt").read_text()  # pytest -rA's line
    assert report.resolved_rate == 0.25


def test_reward_is_the_evaluation_graded_once_per_distinct_patch(tiny, monkeypatch):
    calls = []
    real = evaluator_module.run_tests
    monkeypatch.setattr(evaluator_module, "run_tests", lambda *a, **k: calls.append(1) or real(*a, **k))
    cache = GradeCache()
    reward = make_reward_fn(
        {tiny.instance.instance_id: tiny.instance}, repos_dir=tiny.repos_dir, settings=quick_settings(), cache=cache
    )
    iid = tiny.instance.instance_id
    conversation = [{"role": "user", "content": "fix it"}, {"role": "assistant", "content": tiny.gold}]
    rewards = reward(
        prompts=["p"] * 5,
        completions=[tiny.gold, tiny.gold, "", "not a patch", conversation],
        instance_id=[iid, iid, iid, iid, iid],
    )
    assert rewards[:4] == [1.0, 1.0, 0.0, 0.0]
    assert rewards[4] == 1.0
    # The real extractor reads the gold diff out of each completion; "" and prose hold no patch, so they need no run.
    assert len(calls) == 1  # the gold patch once, whichever of the three completions carried it
    assert reward(completions=[tiny.gold], instance_id=["unknown"]) == [None]
    assert reward(completions=[tiny.gold], instance_id=[iid]) == [1.0] and len(calls) == 1  # cached
    assert reward.__name__ == "swe_reward"


def test_infrastructure_errors_are_none_and_never_cached(tmp_path):
    cache = GradeCache(tmp_path / "cache")
    ghost = Instance(instance_id="ghost-1", repo="acme/ghost", base_commit="deadbeef")
    for _ in range(2):
        result = evaluate(ghost, "--- a/x\n+++ b/x\n", repos_dir=tmp_path, settings=quick_settings(), cache=cache)
        assert result.status == "error" and result.reward is None and not result.cached
    assert not (tmp_path / "cache").exists()


def test_disk_cache_round_trip(tiny, tmp_path):
    settings = quick_settings()
    first = evaluate(tiny.instance, tiny.gold, repos_dir=tiny.repos_dir, settings=settings, cache=GradeCache(tmp_path))
    again = evaluate(tiny.instance, tiny.gold, repos_dir=tiny.repos_dir, settings=settings, cache=GradeCache(tmp_path))
    assert again.cached and again.to_report() | {"cached": False, "seconds": 0} == first.to_report() | {"seconds": 0}


def test_flaky_tests_are_those_whose_results_disagree():
    runs = [
        TestRun("i", statuses={"a": "PASSED", "b": "PASSED"}),
        TestRun("i", statuses={"a": "FAILED", "b": "PASSED"}),
        TestRun("i", statuses={"b": "PASSED", "c": "PASSED"}),
        TestRun("i", infra_error="x"),
    ]
    assert _flaky(runs) == ["a", "c"]


def test_partial_credit_by_settings():
    inst = Instance(instance_id="i", repo="o/n", FAIL_TO_PASS=["t::a", "t::b"], PASS_TO_PASS=["t::c"])
    run = TestRun("i", statuses={"t::a": "PASSED", "t::b": "FAILED", "t::c": "PASSED"}, patch_applied=True)
    assert evaluator_module._grade(inst, run, quick_settings())[:3] == ("unresolved", "PARTIAL", 0.0)
    assert evaluator_module._grade(inst, run, quick_settings(partial_credit=True))[:3] == ("unresolved", "PARTIAL", 0.5)
    run.timed_out = True
    assert evaluator_module._grade(inst, run, quick_settings(partial_credit=True))[:3] == ("unresolved", "NO", 0.0)
    run.infra_error = "disk"
    assert evaluator_module._grade(inst, run, quick_settings())[:3] == ("error", "NO", None)


@pytest.fixture
def cli():
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        pass

    register(app)
    return app


def test_cli_contract(cli, tiny, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POSTGAME_CONFIG", raising=False)
    (tmp_path / "i.jsonl").write_text(tiny.instance.model_dump_json() + "\n")
    (tmp_path / "p.jsonl").write_text(
        json.dumps({"instance_id": tiny.instance.instance_id, "model_patch": "nope", "model_name_or_path": "m"}) + "\n"
    )
    runner = CliRunner()
    args = [
        "eval",
        "run",
        "--instances",
        "i.jsonl",
        "--predictions",
        "p.jsonl",
        "--repos",
        str(tiny.repos_dir),
        "--out",
        "out",
        "--workers",
        "1",
        "--timeout",
        "60",
        "--json",
        "--no-progress",
    ]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "out" / "report.json").read_text())["unresolved_ids"] == [tiny.instance.instance_id]
    bad = runner.invoke(cli, [*args[:3], "missing.jsonl", *args[4:]])
    assert bad.exit_code == 2 and "cannot read" in bad.output
    bad = runner.invoke(cli, [*args[:-4], "--timeout", "-1", "--no-progress"])
    assert bad.exit_code == 2 and "timeout_s" in bad.output


# 16 fair coins, and a counter kept in the run's copy of the repository: the coins disagree between two runs with
# probability 1 - 2**-16 (the factory's flaky verdict uses the same trick); the counter disagrees only if a rerun
# reused the first run's copy. The sandbox has no state that survives a run, so a test that fails once and then
# passes cannot be built from inside it.
COIN_TESTS = (
    "import os\nfrom pathlib import Path\n\n\n"
    + "".join(f"def test_coin_{i}():\n    assert os.urandom(1)[0] % 2 == 0\n\n\n" for i in range(16))
    + (
        "def test_fresh_copy():\n    counter = Path(__file__).with_name('runs.txt')\n"
        "    runs = int(counter.read_text()) + 1 if counter.exists() else 1\n"
        "    counter.write_text(str(runs))\n    assert runs == 1\n"
    )
)


def test_cli_reruns_find_the_flaky_tests(cli, tmp_path, monkeypatch):
    coins = calc_instance(
        tmp_path / "coins",
        instance_id="acme__calc-coins",
        test_patch=diff_against(CALC_BASE, {**CALC_TESTS, "tests/test_coin.py": COIN_TESTS}),
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POSTGAME_CONFIG", raising=False)
    (tmp_path / "i.jsonl").write_text(coins.instance.model_dump_json() + "\n")
    (tmp_path / "p.jsonl").write_text(
        json.dumps({"instance_id": coins.instance.instance_id, "model_patch": coins.gold, "model_name_or_path": "m"})
        + "\n"
    )
    args = [
        "eval",
        "run",
        "--instances",
        "i.jsonl",
        "--predictions",
        "p.jsonl",
        "--repos",
        str(coins.repos_dir),
        "--workers",
        "1",
        "--timeout",
        "60",
        "--json",
        "--no-progress",
    ]

    def graded(out: str, *extra: str) -> dict:
        result = CliRunner().invoke(cli, [*args, "--out", out, *extra])
        assert result.exit_code == 0, result.output
        return json.loads((tmp_path / out / "report.json").read_text())["instances"][coins.instance.instance_id]

    once = graded("once")  # eval.reruns defaults to 0: one run, nothing to compare
    assert once["resolved"] and once["flaky_tests"] == []
    twice = graded("twice", "--reruns", "1")
    assert twice["resolved"]  # the coins are neither FAIL_TO_PASS nor PASS_TO_PASS: they never decide
    assert twice["flaky_tests"] and set(twice["flaky_tests"]) <= {
        f"tests/test_coin.py::test_coin_{i}" for i in range(16)
    }
    assert (
        "---- rerun 1: 21 results, infra error: None"
        in (tmp_path / "twice" / coins.instance.instance_id / "test_output.txt").read_text()
    )


def test_rlimits_mode_grades_the_same_and_says_so(tiny):
    result = evaluate(tiny.instance, tiny.gold, repos_dir=tiny.repos_dir, settings=quick_settings(sandbox="rlimits"))
    assert result.resolved and result.sandbox == "rlimits"
    assert "no file-system, network or secret isolation" in result.log


def test_bwrap_demanded_but_unusable_is_an_infrastructure_error(tiny, monkeypatch):
    from evals.harness import sandbox

    monkeypatch.setattr(sandbox, "_probe", sandbox.Probe(False, "bwrap does not work here: test"))
    result = evaluate(tiny.instance, tiny.gold, repos_dir=tiny.repos_dir, settings=quick_settings(sandbox="bwrap"))
    assert result.status == "error" and result.reward is None and "bwrap does not work here" in result.error
    fallback = evaluate(tiny.instance, tiny.gold, repos_dir=tiny.repos_dir, settings=quick_settings())
    assert fallback.resolved and fallback.sandbox == "rlimits"
