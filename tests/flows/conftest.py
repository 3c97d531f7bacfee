"""The small world every flow test shares, and its first real cycle: each cycle costs minutes on 2 cores, so the
modules that look at a cycle's results (the cycle itself, lineage, cost) look at this one."""

from __future__ import annotations

import pytest

from tests.support import make_config

SMALL_WORLD = {
    # timeout_s: a clean suite takes ~1 s, but a 2-core machine shared by many jobs has made it take more than 10
    "tasks": {
        "projects": ["textkit", "intervals", "ledger", "semver"],
        "instances_per_project": 2,
        "candidates_per_project": 8,
        "split_projects": {"eval": ["semver"], "holdout": ["ledger"]},
        "timeout_s": 60,
    },
    "policy": {"max_new_tokens": 16, "max_prompt_tokens": 512},
    "train": {"max_steps": 1, "batch_size": 4, "num_generations": 4, "max_prompts": 2},
    "promote": {"eval_instances": 2, "floor": -1},  # no base registered here: the first candidate is champion
    "eval": {"timeout_s": 30},
}


@pytest.fixture(scope="session")
def small_world(tmp_path_factory):
    """A few seed projects, a few validated tasks each, and 4 sessions of traffic from the base policy."""
    from evals.factory.build import ensure_built
    from models.traffic import simulate_traffic

    cfg = make_config(tmp_path_factory.mktemp("inprocess-home"), **SMALL_WORLD)
    ensure_built(cfg)
    traffic = simulate_traffic(cfg, sessions=4)
    assert traffic.sessions == 4
    return cfg


@pytest.fixture(scope="session")
def first_cycle(small_world):
    """The world's first cycle (it registers v1, the first champion): (config, its CycleReport)."""
    from flows.cycle import run_cycle

    return small_world, run_cycle(str(small_world.home / "postgame.yaml"))
