"""GRPO with the real harness as its reward, on an example instance shipped with the harness: the gold answer earns
1.0 and a wrong one 0.0, and a GRPO step graded by the harness logs a finite reward and the share of groups with no
reward variance (the untrained tiny policy writes no patch: every group is flat, which is what the share reports)."""

from __future__ import annotations

import math

from evals.harness import load_instances, make_reward_fn
from evals.harness.evaluator import GradeCache
from evals.harness.examples import INSTANCES_FILE, REPOS_DIR
from evals.harness.examples.build import build_repos
from evals.prompts import answer_for_patch, render_prompt
from models.train import TrainJob, fit
from postgame.config import PolicySettings
from postgame.settings.train import TrainSettings
from tests.harness_fixtures import quick_settings

INSTANCE_ID = "acme__textkit-1"


def test_grpo_step_graded_by_the_harness(base_policy, tmp_path):
    instance = next(i for i in load_instances(INSTANCES_FILE) if i.instance_id == INSTANCE_ID)
    repos = tmp_path / "repos"
    build_repos(repos)
    path = "textkit/slug.py"
    files = {path: (REPOS_DIR / instance.repo.replace("/", "__") / path).read_text()}
    reward = make_reward_fn(
        {instance.instance_id: instance}, repos_dir=repos, settings=quick_settings(), cache=GradeCache()
    )

    gold = answer_for_patch(instance.patch, files)
    assert reward(completions=[gold, "I am not sure."], instance_id=[INSTANCE_ID] * 2) == [1.0, 0.0]
    assert reward(completions=["x"], instance_id=["no-such-instance"]) == [None]  # ungradable: TRL skips it
    # breakage is in the objective: an edit that breaks the passing tests earns less than one that changes nothing
    breaks = answer_for_patch(instance.patch.replace(".strip(sep)", ".upper()"), files)
    penalised = make_reward_fn(
        {instance.instance_id: instance},
        repos_dir=repos,
        settings=quick_settings(),
        cache=GradeCache(),
        breakage_penalty=0.5,
    )
    assert penalised(completions=[gold, breaks, "I am not sure."], instance_id=[INSTANCE_ID] * 3) == [1.0, -0.5, 0.0]
    assert reward(completions=[breaks], instance_id=[INSTANCE_ID]) == [0.0]  # no penalty: the grade alone

    steps: list[dict] = []
    row = {
        "kind": "grpo",
        "example_id": f"grpo:{INSTANCE_ID}",
        "instance_id": INSTANCE_ID,
        "prompt": render_prompt(instance, files),
    }
    result = fit(
        TrainJob(
            method="grpo",
            policy_dir=base_policy,
            rows=[row],
            work_dir=tmp_path / "work",
            settings=TrainSettings(method="grpo", max_steps=1, batch_size=2, num_generations=2),
            policy=PolicySettings(max_new_tokens=8),
            reward_fn=reward,
            on_metrics=lambda _step, m: steps.append(m),
        )
    )
    assert result.steps == 1 and len(steps) == 1
    assert steps[0]["reward_mean"] == 0.0 and steps[0]["zero_variance_share"] == 1.0
    assert math.isfinite(steps[0]["loss"])
