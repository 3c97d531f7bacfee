"""A small real build (one project per split): every instance's gold patch resolves it and its base commit fails
exactly FAIL_TO_PASS, instances carry what the policy and lineage need, and an exported split evaluates through `--repos`.
All of them, for the full catalog (and the base run failing exactly FAIL_TO_PASS): `scripts/verify_all_tasks.py`.
"""

from __future__ import annotations

import pytest

from evals.factory.build import build, build_tasks
from evals.factory.instances import export_split, load_split, prompt_files
from evals.harness import HarnessSettings, evaluate, load_instances, run_tests
from postgame.runtime import store
from tests.support import make_config

# The three smallest suites, one per split; one instance each.
SAMPLE = {
    "projects": ["graphlib2", "lrucache", "matrixops"],
    "instances_per_project": 1,
    "candidates_per_project": 3,
    "workers": 2,
}
GRADING = HarnessSettings(timeout_s=60)


def build_sample(tmp_path_factory):
    """Build the sample catalog in a fresh home; verdicts are cached for the whole session, so a second caller
    (tests/data/test_splits_disjoint.py) costs no test runs."""
    home = tmp_path_factory.mktemp("tasks-sample")
    cfg = make_config(home, tasks=SAMPLE)
    cache = tmp_path_factory.getbasetemp() / "factory-verdicts"
    result = build(cfg.factory, cfg.eval, store(cfg), cache_dir=cache)
    return cfg, result


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory):
    return build_sample(tmp_path_factory)


def test_sample_has_one_instance_per_project_in_three_splits(sample_build):
    _, result = sample_build
    assert result.instances == 3
    # round(0.3 x 1) = 0 set aside
    assert result.per_split == {"train": 1, "eval": 1, "holdout": 1, "indomain": 0, "dev": 0}


def test_gold_resolves_and_the_base_fails_exactly_fail_to_pass(sample_build):
    """The base commit's tests really run (the evaluator grades an empty patch unresolved without running anything, so
    it cannot show this): every FAIL_TO_PASS test fails there and every PASS_TO_PASS test passes."""
    cfg, _ = sample_build
    for inst in load_split(cfg):
        gold = evaluate(inst, inst.patch, repos_dir=None, settings=GRADING)
        assert gold.status == "resolved", (inst.instance_id, gold.log[-2000:])
        base = run_tests(inst, "", repos_dir=None, settings=GRADING)
        assert base.infra_error is None and base.statuses, (inst.instance_id, base.log[-2000:])
        assert {t: base.statuses.get(t) for t in inst.FAIL_TO_PASS if base.statuses.get(t) == "PASSED"} == {}
        assert {t: base.statuses.get(t) for t in inst.PASS_TO_PASS if base.statuses.get(t) != "PASSED"} == {}


def test_instances_carry_what_the_policy_and_lineage_need(sample_build):
    cfg, _ = sample_build
    for inst in load_split(cfg):
        assert inst.FAIL_TO_PASS and inst.PASS_TO_PASS and inst.problem_statement.strip()
        files = prompt_files(inst)
        assert list(files) == inst.prompt_files == [inst.mutation["path"]]
        assert inst.environment_uri.endswith(f"envs/{inst.environment_sha256}.tar.gz")
        assert inst.mutation["path"] not in inst.problem_statement  # the statement does not point at the file


def test_export_evaluates_through_repos(sample_build, tmp_path):
    cfg, _ = sample_build
    result = export_split(cfg, "train", tmp_path / "out")
    instances = load_instances(result.instances_path)
    assert len(instances) == 1 and instances[0].environment is None
    graded = evaluate(instances[0], instances[0].patch, repos_dir=result.repos_dir, settings=GRADING)
    assert graded.status == "resolved", graded.log[-2000:]


def test_rebuild_is_found_in_the_store(sample_build):
    cfg, first = sample_build
    again = build_tasks(cfg)
    assert again.reused and again.build_id == first.build_id
