"""Production traffic from the serving model: the MLflow `champion` attempts train-split tasks, each attempt graded
by the harness and written to the store as a log record (`evals.factory.simulate` does the writing): schema v1 for
one answer, schema v2 (the whole trajectory) when the policy acts as an agent (`agent.enabled`).

    postgame simulate --sessions N [--json]
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime

from evals.factory.simulate import SimulationSummary, simulate
from postgame.config import Config
from postgame.settings.factory import SimulatorSettings


def simulate_traffic(
    cfg: Config,
    *,
    sessions: int,
    seed: int | None = None,
    settings: SimulatorSettings | None = None,
    now: datetime | None = None,
    progress: Callable[[str, int], None] | None = None,
    announce: bool = True,
) -> SimulationSummary:
    """The champion's traffic, logged under `factory.simulate.log_prefix` of the store; `progress(text, n)` as in
    `evals.factory.simulate.simulate` (n more sessions answered, `sessions` in all). `announce`: emit
    `postgame.logs.landed` afterwards (the deployment's event trigger starts a cycle); the demo starts its cycles
    itself."""
    from evals.factory.instances import load_split
    from evals.harness import GradeCache, evaluate
    from models.answer import submit
    from models.policy import load_champion
    from postgame.events import emit_logs_landed
    from postgame.runtime import log_source, store

    instances = load_split(cfg, "train")
    policy = load_champion(cfg)
    cache = GradeCache(cfg.home / "cache" / "grades")

    def attempt(prompts, tasks):  # the scaffold runs each task's visible tests (scaffold.visible_tests)
        return submit(policy, prompts, cfg.scaffold, instances=tasks, harness=cfg.eval)

    def grade(instance, patch):
        return evaluate(instance, patch, repos_dir=None, settings=cfg.eval, cache=cache)

    play = _agent_play(cfg, policy, seed=cfg.factory.seed if seed is None else seed) if cfg.agent.enabled else None
    summary = simulate(
        instances,
        attempt,
        grade,
        sessions=sessions,
        store=store(cfg),
        play=play,
        settings=settings or cfg.factory.simulate,
        seed=cfg.factory.seed if seed is None else seed,
        model_name=policy.name,
        model_version=str(policy.version),
        now=now,
        usd_per_cpu_hour=cfg.cost.usd_per_cpu_hour,
        grade_workers=cfg.eval.workers or os.cpu_count() or 1,
        prompt_context=cfg.policy.prompt_context,
        progress=progress,
    )  # the prompt training and evaluation show
    if announce:
        emit_logs_landed(cfg, source=log_source(cfg), objects=len(summary.objects))  # the deployment's event trigger
    return summary


def _agent_play(cfg: Config, policy, *, seed: int):
    """Episodes of the champion in the environment (sampled turns), its first observation the prompt a single
    answer gets: the traffic of an agent."""
    from evals.agent.batch import play_episodes
    from models.agent import policy_factory

    factory = policy_factory(cfg, policy.path, f"{policy.name}@{policy.version}", greedy=False, seed=seed)

    def play(instances, prompts, progress=None):
        return play_episodes(
            instances,
            factory,
            agent=cfg.agent,
            harness=cfg.eval,
            repos_dir=None,
            runner=cfg.runner,
            contexts={i.instance_id: p for i, p in zip(instances, prompts)},
            progress=progress,
        )

    return play
