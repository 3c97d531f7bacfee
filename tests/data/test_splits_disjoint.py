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
    eval_sets = {
        frozenset(p for p, s in assign_splits(PROJECTS, FactorySettings(seed=seed)).items() if s == "eval")
        for seed in range(20)
    }
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


# --- in-domain held-out bugs: a seeded share of each train project's instances --------------------------------------


def test_indomain_is_per_project_deterministic_and_the_seeded_share():
    # checked: fails when assign_indomain draws from the pooled ids of all projects (not per project)
    from evals.factory.splits import assign_indomain

    ids = {"a": [f"a-{i}" for i in range(10)], "b": [f"b-{i}" for i in range(7)], "c": ["c-0"]}
    settings = FactorySettings(indomain_fraction=0.3)
    chosen = assign_indomain(ids, settings)
    assert chosen == assign_indomain({k: list(reversed(v)) for k, v in reversed(ids.items())}, settings)
    assert [sum(i.startswith(p) for i in chosen) for p in "abc"] == [3, 2, 0]
    # a project's draw does not depend on the other projects
    assert {i for i in chosen if i.startswith("a")} == assign_indomain({"a": ids["a"]}, settings)
    assert chosen != assign_indomain(ids, FactorySettings(indomain_fraction=0.3, seed=1))
    assert assign_indomain(ids, FactorySettings(indomain_fraction=0.0)) == set()


def test_a_built_catalog_sets_indomain_apart_from_train_within_train_projects(tmp_path_factory):
    from evals.factory.build import build
    from evals.factory.instances import load_manifest, load_records
    from postgame.runtime import store
    from tests.support import make_config

    home = tmp_path_factory.mktemp("indomain-build")
    cfg = make_config(
        home,
        tasks={
            "projects": ["lrucache", "matrixops", "graphlib2"],
            "instances_per_project": 4,
            "candidates_per_project": 8,
            "workers": 2,
            "indomain_fraction": 0.5,
            "split_projects": {"train": ["lrucache"], "eval": ["matrixops"], "holdout": ["graphlib2"]},
        },
    )
    cache = tmp_path_factory.getbasetemp() / "factory-verdicts"
    result = build(cfg.factory, cfg.eval, store(cfg), cache_dir=cache)
    records = load_records(cfg)
    by_split = {s: {r["instance_id"] for r in records if r["split"] == s} for s in ("train", "indomain")}
    assert len(by_split["indomain"]) == round(0.5 * result.projects["lrucache"].kept) > 0
    assert by_split["train"] and not by_split["train"] & by_split["indomain"]
    assert {r["seed_project"] for r in records if r["split"] == "indomain"} == {"lrucache"}
    manifest = load_manifest(cfg)
    assert manifest["indomain"] == {"lrucache": sorted(by_split["indomain"])}
    assert manifest["settings"]["indomain_fraction"] == 0.5 and result.per_split["indomain"] == len(
        by_split["indomain"]
    )
    again = build(cfg.factory, cfg.eval, store(cfg), cache_dir=cache, force=True)  # cached verdicts: no test runs
    assert again.instances_sha256 == result.instances_sha256
