"""The RL reward: a TRL-style reward function that *is* the evaluation (it calls `evaluate`).

    reward_fn = make_reward_fn({i.instance_id: i for i in instances}, repos_dir=REPOS, settings=cfg.eval,
                               cache=GradeCache())
    GRPOTrainer(..., reward_funcs=[reward_fn], train_dataset=ds)   # ds has an `instance_id` column

Each completion is turned into a patch with `evals.prompts.extract_patch` (the completion itself while that module
does not exist), graded once per distinct (instance, patch) in the batch and across batches (the cache), in
parallel. Returns 1.0 / 0.0 per completion (partial credit by settings), and None where the sample cannot be graded:
an infrastructure error or an unknown instance id. TRL skips None.

Breakage is in the objective: with `breakage_penalty` p > 0 (`train.breakage_penalty`), a patch that applies and
breaks a PASS_TO_PASS test earns its grade minus p (-p for an unresolved one: a resolved patch breaks nothing by
definition), so breaking working code is worse than changing nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from evals.harness.evaluator import GradeCache, evaluate
from evals.harness.instance import Instance
from postgame.settings.harness import HarnessSettings

RewardFn = Callable[..., list[float | None]]


def completion_text(completion: Any) -> str:
    """A completion as TRL passes it: a string, or a conversation (list of messages) whose last message counts."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion:
        last = completion[-1]
        if isinstance(last, dict):
            content = last.get("content", "")
            if isinstance(content, list):  # multimodal-style content parts
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content)
    return str(completion or "")


def make_reward_fn(
    instances_by_id: Mapping[str, Instance],
    *,
    repos_dir: str | Path | None,
    settings: HarnessSettings,
    cache: GradeCache | None = None,
    breakage_penalty: float = 0.0,
) -> RewardFn:
    cache = (
        cache if cache is not None else GradeCache(Path(settings.cache_dir) / "grades" if settings.cache_dir else None)
    )
    workers = settings.workers or os.cpu_count() or 1

    def swe_reward(
        prompts: list[Any] | None = None,
        completions: list[Any] | None = None,
        instance_id: list[str] | None = None,
        **columns: Any,
    ) -> list[float | None]:
        completions = list(completions or [])
        ids = list(instance_id or [])
        if len(ids) != len(completions):
            raise ValueError(
                f"swe_reward needs one instance_id per completion: got {len(ids)} ids for "
                f"{len(completions)} completions (is `instance_id` a dataset column?)"
            )
        from evals.prompts import extract_patch

        patches = [extract_patch(completion_text(c)) for c in completions]
        unique = list(dict.fromkeys((i, p) for i, p in zip(ids, patches) if i in instances_by_id))
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(unique) or 1))) as pool:
            graded = dict(
                zip(
                    unique,
                    pool.map(
                        lambda key: evaluate(
                            instances_by_id[key[0]], key[1], repos_dir=repos_dir, settings=settings, cache=cache
                        ),
                        unique,
                    ),
                )
            )
        return [_reward(graded[(i, p)], breakage_penalty) if (i, p) in graded else None for i, p in zip(ids, patches)]

    swe_reward.__name__ = "swe_reward"
    return swe_reward


def _reward(result: Any, breakage_penalty: float) -> float | None:
    """The grade's reward, less `breakage_penalty` when the applied patch broke a PASS_TO_PASS test."""
    if result.reward is None or not breakage_penalty:
        return result.reward
    p2p = (result.tests_status or {}).get("PASS_TO_PASS", {})
    broke = result.patch_applied and result.status != "error" and bool(p2p.get("failure"))
    return result.reward - breakage_penalty if broke else result.reward
