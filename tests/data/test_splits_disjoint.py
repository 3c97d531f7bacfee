"""Splits are by seed project: no project is in two splits, so evaluation measures generalisation to code the policy
never trained on. Checked on the shipped seed projects for many seeds, with pins, and on a built catalog."""

from __future__ import annotations

import json

import pytest

from evals.factory.seeds import load_seeds
from evals.factory.splits import assign_splits
from postgame.settings.factory import SPLITS, FactorySettings

PROJECTS = [s.name for s in load_seeds()]
# One train, one eval, one holdout project, 4 instances each: the built-catalog tests share its cached verdicts.
# The split settings are spelled out: the defaults (a dev split, fewer guard instances) are the embedded world's.
TINY_BUILD = {
    "projects": ["lrucache", "matrixops", "graphlib2"],
    "instances_per_project": 4,
    "candidates_per_project": 8,
    "workers": 2,
    "indomain_fraction": 0.5,
    "dev_fraction": 0.0,  # no dev split and every guard instance kept, unless a test asks for them
    "guard_instances_per_project": 0,
    "split_projects": {"train": ["lrucache"], "eval": ["matrixops"], "holdout": ["graphlib2"]},
}


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
        tasks=TINY_BUILD,
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


# --- the dev split: a seeded share of the held-out bugs, where settings are tuned --------------------------------------


def test_dev_is_a_per_project_share_of_the_held_out_bugs():
    from evals.factory.splits import assign_dev, assign_indomain

    ids = {"a": [f"a-{i}" for i in range(20)], "b": [f"b-{i}" for i in range(10)]}
    settings = FactorySettings(indomain_fraction=0.5, dev_fraction=0.4)
    held = assign_indomain(ids, settings)
    per_project = {p: sorted(i for i in held if i.startswith(p)) for p in ids}
    dev = assign_dev(per_project, settings)
    assert dev < held and [sum(i.startswith(p) for i in dev) for p in "ab"] == [4, 2]
    assert dev == assign_dev({p: list(reversed(v)) for p, v in reversed(per_project.items())}, settings)
    assert assign_indomain(ids, FactorySettings(indomain_fraction=0.5)) == held  # dev_fraction moves no indomain draw
    assert assign_dev(per_project, FactorySettings(indomain_fraction=0.5, dev_fraction=0.0)) == set()


def test_the_gate_never_decides_or_guards_on_the_dev_split():
    from postgame.settings.promote import PromoteSettings

    with pytest.raises(ValueError, match="`dev` split is where settings are tuned"):
        PromoteSettings(decide_split="dev")
    with pytest.raises(ValueError, match="`dev` split is where settings are tuned"):
        PromoteSettings(guard_splits={"eval": 0.05, "dev": 0.05})


def test_a_built_catalog_moves_a_share_of_its_held_out_bugs_to_dev(tmp_path_factory):
    """dev_fraction and guard_instances_per_project on a real build (the verdicts of the build above, cached): dev is
    drawn from what would be indomain, never trained on (the base's held-out bugs include it), guard projects keep
    fewer instances."""
    # checked: fails when build.py leaves dev ids in indomain, or limits() ignores guard_instances_per_project
    from evals.factory.build import build
    from evals.factory.instances import load_manifest, load_records
    from models.base_data import held_out_bugs
    from postgame.runtime import store
    from tests.support import make_config

    tasks = TINY_BUILD
    cache = tmp_path_factory.getbasetemp() / "factory-verdicts"
    plain = make_config(tmp_path_factory.mktemp("plain-build"), tasks=tasks)
    build(plain.factory, plain.eval, store(plain), cache_dir=cache)
    before = {r["instance_id"]: r["split"] for r in load_records(plain)}
    cfg = make_config(
        tmp_path_factory.mktemp("dev-build"), tasks={**tasks, "dev_fraction": 0.5, "guard_instances_per_project": 2}
    )
    result = build(cfg.factory, cfg.eval, store(cfg), cache_dir=cache)
    records = load_records(cfg)
    split_of = {r["instance_id"]: r["split"] for r in records}
    dev = {i for i, s in split_of.items() if s == "dev"}
    assert len(dev) == round(0.5 * sum(s == "indomain" for s in before.values())) > 0
    assert {before[i] for i in dev} == {"indomain"}  # dev comes out of the held-out bugs
    for i, split in before.items():  # train and the rest of indomain do not move; guard projects keep their first 2
        assert split_of.get(i, "cut") == ("dev" if i in dev else split) or split in ("eval", "holdout")
    assert {i for i, s in split_of.items() if s in ("eval", "holdout")} < set(before)
    assert result.per_split["dev"] == len(dev) and result.per_split["eval"] == result.per_split["holdout"] == 2
    assert load_manifest(cfg)["dev"] == {"lrucache": sorted(dev)}
    held = held_out_bugs(records)
    assert all(
        (r["seed_project"], r["mutation"]["path"], r["mutation"]["key"]) in held for r in records if r["split"] == "dev"
    )
