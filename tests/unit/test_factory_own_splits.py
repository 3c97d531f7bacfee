"""Which role each project plays is config: a team's registered projects are in-domain (`train`, their held-out and
mined bugs `indomain`) unless `factory.own.split` or a `split_projects` pin says otherwise, and adding one never moves
a shipped seed (the seeds stay the unseen-project guards they were)."""

from __future__ import annotations

from evals.factory.seeds import SeedProject
from evals.factory.splits import assign_splits, project_splits
from postgame.settings.factory import FactorySettings

SEEDS = [f"seed{i}" for i in range(12)]


def projects(*own: str) -> list[SeedProject]:
    return [SeedProject(n, f"x/{n}", "", "", {}, {}) for n in SEEDS] + [
        SeedProject(n, f"team/{n}", "", "own", {}, {}, role="own") for n in own
    ]


def test_own_projects_are_in_domain_and_the_seeds_do_not_move():
    settings = FactorySettings()
    before = assign_splits(SEEDS, settings)
    splits = project_splits(projects("api", "billing"), settings)
    assert {k: splits[k] for k in SEEDS} == before
    assert splits["api"] == splits["billing"] == "train"


def test_the_role_is_config():
    assert project_splits(projects("api"), FactorySettings(own={"split": "holdout"}))["api"] == "holdout"
    pinned = FactorySettings(split_projects={"eval": ["billing"]})
    splits = project_splits(projects("api", "billing"), pinned)
    assert (splits["api"], splits["billing"]) == ("train", "eval")


def test_seeds_can_all_be_guards():
    guards = FactorySettings(split_fractions={"train": 0.0, "eval": 0.5, "holdout": 0.5})
    splits = project_splits(projects("api"), guards)
    assert splits["api"] == "train" and {splits[s] for s in SEEDS} == {"eval", "holdout"}
