"""Splits are by seed project: no project is in two splits, so evaluation measures generalisation to code the policy
never trained on. Checked on the shipped seed projects for many seeds, with pins, and on a built catalog."""

from __future__ import annotations

import json

import pytest

from evals.factory.seeds import load_seeds
from evals.factory.splits import assign_splits
from postgame.settings.factory import SPLITS, FactorySettings

PROJECTS = [s.name for s in load_seeds()]


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory):
    from tests.data.test_tasks_sample import build_sample

    return build_sample(tmp_path_factory)


def test_there_are_enough_seed_projects_for_three_splits():
    # Guards the floor of 12 seed projects (and that each split can get one).
    assert len(PROJECTS) >= 12, PROJECTS


@pytest.mark.parametrize("seed", range(20))
def test_every_seed_deals_the_projects_in_the_configured_proportions(seed):
    # 12 projects x 0.6 / 0.2 / 0.2 by largest remainder: 7.2 -> 7, 2.4 -> 3 (first of the tied remainders), 2.4 -> 2.
    assignment = assign_splits(PROJECTS, FactorySettings(seed=seed))
    assert sorted(assignment) == sorted(PROJECTS)
    sizes = {s: sum(1 for split in assignment.values() if split == s) for s in SPLITS}
    assert sizes == {"train": 7, "eval": 3, "holdout": 2}


def test_the_seed_changes_which_projects_are_held_out():
    eval_sets = {frozenset(p for p, s in assign_splits(PROJECTS, FactorySettings(seed=seed)).items() if s == "eval")
                 for seed in range(20)}
    assert len(eval_sets) >= 10  # a seed that were ignored would give one set


def test_assignment_is_deterministic_and_pins_are_kept():
    settings = FactorySettings(seed=3, split_projects={"holdout": PROJECTS[:2], "eval": PROJECTS[2:3]})
    assert assign_splits(PROJECTS, settings) == assign_splits(list(reversed(PROJECTS)), settings)
    got = assign_splits(PROJECTS, settings)
    assert got[PROJECTS[0]] == got[PROJECTS[1]] == "holdout" and got[PROJECTS[2]] == "eval"


def test_a_project_pinned_twice_is_refused():
    with pytest.raises(ValueError, match="more than one split"):
        FactorySettings(split_projects={"train": [PROJECTS[0]], "eval": [PROJECTS[0]]})


def test_built_instances_are_disjoint_by_project(sample_build):
    """On real built instances: the projects behind each split's instances do not overlap."""
    cfg, _ = sample_build
    from evals.factory.instances import load_records

    records = load_records(cfg)
    projects = {s: {r["seed_project"] for r in records if r["split"] == s} for s in SPLITS}
    for a in SPLITS:
        for b in SPLITS:
            if a < b:
                assert not projects[a] & projects[b], (a, b)
    manifest = json.loads((cfg.home / "store" / "tasks" / "current.json").read_text())
    assert manifest["build_id"]
