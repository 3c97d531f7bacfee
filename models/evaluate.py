"""Evaluate: the candidate and the champion answer the same instances; the harness grades their patches.

    evaluate_candidate(cfg, candidate)      # the cycle's evaluate stage (`postgame promote --run-id RUN`)
    evaluate_version(cfg, version)          # a registered version again (`postgame promote --version V`)

What is graded (`promote:` settings): the deciding split (`decide_split`, default `indomain` — new bugs in the
projects the model serves; `eval` when the catalog has none, said in a log line), `eval_instances` of them, and each
guard split (`guard_splits`, default the unseen-project `eval` split and `holdout`), `guard_instances` each. Every set
is stratified per project (round-robin over projects, each project's instances in a seeded order), so one project
cannot fill it. Both models answer greedily with the same decoding and harness settings.

A policy's scores on a set are stored as `scores/<cache key>.json` in the MLflow run of its version, with one outcome
per instance. The key covers everything that can change a grade: the split, every instance id with its base commit
and environment hash, the decoding settings and prompt template, and the harness settings that affect grading. A
champion is re-graded only when no stored score has the key. The per-instance outcomes of both models are kept in the
candidate's run as `eval/per_instance.json`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from models.scores import Evaluation, InstanceOutcome, SplitScores
from postgame.config import Config
from postgame.runners import Mapper

log = logging.getLogger("postgame.evaluate")


# --- what is graded ------------------------------------------------------------------------------------------------


def stratified(records: list[dict], n: int, *, seed: int, split: str) -> list[dict]:
    """Up to n records, one project at a time in turn (projects sorted, each project's records in a seeded order that
    depends on neither the input order nor the other projects); returned sorted by instance id."""
    by_project: dict[str, list[dict]] = {}
    for rec in sorted(records, key=lambda r: r["instance_id"]):
        by_project.setdefault(rec["repo"], []).append(rec)
    queues = []
    for project in sorted(by_project):
        recs = by_project[project]
        random.Random(f"promote:{seed}:{split}:{project}").shuffle(recs)
        queues.append(recs)
    chosen: list[dict] = []
    while len(chosen) < n and any(queues):
        for queue in queues:
            if queue and len(chosen) < n:
                chosen.append(queue.pop(0))
    return sorted(chosen, key=lambda r: r["instance_id"])


def deciding_split(wanted: str, fallback: str, available: set[str]) -> tuple[str, str | None]:
    """The split that decides, and a note when it is the fallback."""
    if wanted in available:
        return wanted, None
    return fallback, (
        f"promote.decide_split {wanted!r} is not in this task catalog (splits: {sorted(available)}); "
        f"deciding on {fallback!r} instead"
    )


def graded_sets(cfg: Config) -> tuple[str, dict[str, list[dict]], list[str]]:
    """(deciding split, {split: records to grade}, notes) from the current task catalog."""
    from evals.factory.instances import load_records

    records = load_records(cfg)
    available = {r["split"] for r in records}
    decide, note = deciding_split(cfg.promote.decide_split, cfg.promote.eval_split, available)
    notes = [note] if note else []
    if note:
        log.warning(note)
    p = cfg.promote
    sets = {
        decide: stratified([r for r in records if r["split"] == decide], p.eval_instances, seed=p.seed, split=decide)
    }
    for split in p.guard_splits:
        if split == decide:
            continue
        if split not in available:
            notes.append(f"guard split {split!r} is not in this task catalog: not graded")
            log.warning(notes[-1])
            continue
        sets[split] = stratified(
            [r for r in records if r["split"] == split], p.guard_instances, seed=p.seed, split=split
        )
    return decide, sets, notes


def prompt_texts() -> list[str]:
    """Every text a prompt is made of: the system message, both templates (a file's prompt and the oracle window's)
    with their answer formats, and the window's size."""
    from evals import prompts

    return [
        prompts.SYSTEM_PROMPT,
        prompts.PROMPT_TEMPLATE,
        prompts.ANSWER_FORMAT,
        prompts.ORACLE_TEMPLATE,
        prompts.ORACLE_ANSWER_FORMAT,
        str(prompts.MAX_WINDOW_LINES),
    ]


def cache_key(cfg: Config, split: str, records: list[dict]) -> str:
    """Everything that can change a grade: the instances (id, base commit, environment), greedy decoding with the
    policy settings and every prompt text (`prompt_texts`), and the harness settings that the harness itself keys its
    grades on."""
    import inspect

    from evals import prompts
    from evals.agent import visible
    from evals.harness.evaluator import _KEY_EXCLUDE

    payload: dict[str, Any] = {
        "split": split,
        "instances": [[r["instance_id"], r.get("base_commit", ""), r.get("environment_sha256", "")] for r in records],
        "decoding": {
            "greedy": True,
            **cfg.policy.model_dump(mode="json", exclude={"base_model"}),
            "scaffold": cfg.scaffold.model_dump(mode="json"),
        },
        "prompt": hashlib.sha256("".join(prompt_texts()).encode()).hexdigest(),
        "repoint": hashlib.sha256(inspect.getsource(prompts.repoint).encode()).hexdigest(),
        "tokenizer": "as-saved",  # models.policy.load_tokenizer: grades made with transformers' Qwen2 rewrite differ
        "harness": cfg.eval.model_dump(mode="json", exclude=_KEY_EXCLUDE),
    }
    if cfg.agent.enabled:  # episodes: the tools, the limits, the observation format and the turn check
        from evals.agent import env, repro, verify
        from models import agent

        checks = (
            agent.choose_turn,
            agent.fixing_turn,
            agent.ChatPolicy.act,
            agent.usable_turn,
            agent.repoint_turn,
            agent._names,
            agent._calls,
            env.AgentEnvironment.try_edits,
            verify.VisibleTests.reproduces,
            repro,
        )
        check = "".join(inspect.getsource(f) for f in checks)
        shown = inspect.getsource(env.first_observation) + inspect.getsource(env.tests_observation)
        payload["agent"] = cfg.agent.model_dump(mode="json") | {
            "turn_check": hashlib.sha256(check.encode()).hexdigest(),
            "observations": hashlib.sha256(shown.encode()).hexdigest(),
        }
    if cfg.agent.enabled or cfg.scaffold.visible_tests:  # what the visible tests show (evals/agent/visible.py)
        payload["visible_cut"] = visible.cut_digest()
    if cfg.promote.samples > 1:  # K sampled answers per instance instead of the one deterministic answer
        payload["samples"] = {"k": cfg.promote.samples, "seed": cfg.promote.seed}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _instances(cfg: Config, records: list[dict]):
    from evals.factory.instances import environment_path
    from evals.harness.instance import Instance

    return [
        Instance.model_validate(
            {
                **r,
                "environment_uri": r["environment"],
                "environment": str(environment_path(cfg, r["environment_sha256"])),
            }
        )
        for r in records
    ]


# --- grading -------------------------------------------------------------------------------------------------------


def outcome_of(result, project: str) -> InstanceOutcome:
    """A harness GradeResult as the gate sees it."""
    error = result.status == "error"
    p2p = (result.tests_status or {}).get("PASS_TO_PASS", {})
    broken = bool(result.patch_applied and not error and p2p.get("failure"))
    return InstanceOutcome(
        instance_id=result.instance_id,
        project=project,
        resolved=bool(result.resolved),
        error=error,
        p2p_broken=broken,
        reward=result.reward,
    )


def grade_predictions(
    settings,
    instances: list,
    predictions: list,
    out_dir: Path,
    *,
    repos_dir: Path | None = None,
    mapper: Mapper | None = None,
):
    """The harness's `RunReport` on `predictions`: one unit of work per instance through `mapper` (the `runner:`
    engine: serial, threads, local processes or a Dask cluster; `evals.harness.fanout`), or without one the
    harness's own thread pool (`eval.workers`). Both write the same reports and grade alike."""
    if mapper is None:
        from evals.harness import run_evaluation

        return run_evaluation(
            instances, predictions, repos_dir=repos_dir, out_dir=out_dir, settings=settings, progress=False
        )
    from evals.harness.fanout import evaluate_instances

    return evaluate_instances(
        instances, predictions, repos_dir=repos_dir, out_dir=out_dir, settings=settings, mapper=mapper
    )


def score_policy(
    cfg: Config, policy, records: list[dict], out_dir: Path, *, split: str, key: str, mapper: Mapper | None = None
) -> SplitScores:
    """One greedy answer (an agent: episode) per instance, or `promote.samples` sampled ones with the seeds both
    models get (`sample_seed`), graded by the harness (through `mapper` when given, see `grade_predictions`); the
    reports are written under out_dir."""
    from evals.factory.instances import prompt_for
    from evals.harness import Prediction
    from evals.prompts import extract_patch
    from models.answer import submit
    from postgame.report import cpu_seconds

    started = cpu_seconds()
    instances = _instances(cfg, records)
    if cfg.agent.enabled:
        outcomes = _episode_outcomes(cfg, policy, instances, records, out_dir, mapper)
        return SplitScores(split=split, cache_key=key, outcomes=outcomes, cpu_seconds=cpu_seconds() - started)
    prompts = [prompt_for(cfg, inst) for inst in instances]
    projects = {r["instance_id"]: r["repo"] for r in records}

    def answer(seed: int | None, where: Path) -> dict[str, InstanceOutcome]:
        sampling = {"greedy": True} if seed is None else {"seed": seed}
        generations = submit(policy, prompts, cfg.scaffold, instances=instances, harness=cfg.eval, **sampling)
        predictions = [
            Prediction(
                instance_id=inst.instance_id,
                model_name_or_path=f"{policy.name}@{policy.version}",
                model_patch=extract_patch(gen.text),
            )
            for inst, gen in zip(instances, generations)
        ]
        report = grade_predictions(cfg.eval, instances, predictions, where, mapper=mapper)
        return {
            i.instance_id: outcome_of(report.results[i.instance_id], projects[i.instance_id])
            for i in instances
            if i.instance_id in report.results
        }

    outcomes = _rounds(cfg, out_dir, answer)
    return SplitScores(split=split, cache_key=key, outcomes=outcomes, cpu_seconds=cpu_seconds() - started)


def _rounds(
    cfg: Config, out_dir: Path, play: Callable[[int | None, Path], dict[str, InstanceOutcome]]
) -> tuple[InstanceOutcome, ...]:
    """`play(seed, folder)` once deterministic (seed None, in out_dir), or `promote.samples` times sampled with the
    seeds both models get (`sample_seed`, in `out_dir/sample-<n>/`), the rounds folded by `attempts_of`."""
    k = cfg.promote.samples
    if k == 1:
        return tuple(play(None, out_dir).values())
    return attempts_of([play(sample_seed(cfg, n), out_dir / f"sample-{n + 1}") for n in range(k)])


def sample_seed(cfg: Config, n: int) -> int:
    """The seed of the n-th (0-based) of `promote.samples` sampled rounds: the same for every model graded, so both
    sides of the paired test draw alike."""
    return cfg.promote.seed * 1000 + n + 1


def attempts_of(rounds: list[dict[str, InstanceOutcome]]) -> tuple[InstanceOutcome, ...]:
    """One outcome per instance from K rounds of answers: how many resolved and how many broke a PASS_TO_PASS test
    (`resolved` when at least half did); an infrastructure error in any round makes the instance an error (it is
    left out of the paired test, never counted as a failure). An agent's outcome keeps the first round's ending and
    the mean of the rounds' turns."""
    out = []
    for iid, first in rounds[0].items():
        mine = [r[iid] for r in rounds if iid in r]
        error = len(mine) < len(rounds) or any(o.error for o in mine)
        solved = sum(o.resolved for o in mine)
        out.append(
            replace(
                first,
                resolved=2 * solved >= len(rounds) and not error,
                error=error,
                p2p_broken=any(o.p2p_broken for o in mine),
                reward=sum(o.reward or 0.0 for o in mine) / len(rounds),
                attempts=len(rounds),
                solved=solved,
                broke=sum(o.p2p_broken for o in mine),
                turns=round(sum(o.turns for o in mine) / len(mine)),
            )
        )
    return tuple(out)


def agent_episodes(
    cfg: Config,
    path,
    name: str,
    instances: list,
    out_dir: Path,
    mapper: Mapper | None = None,
    *,
    seed: int | None = None,
):
    """One episode per instance of the checkpoint at `path` in the agent environment, its first observation the
    oracle prompt a single answer gets (`prompt_for`): greedy, or with `seed` sampled at `policy.temperature` (each
    episode's draw seeded by `seed` and the instance id, so two models given one seed draw alike); the
    `AgentReport`, trajectories under out_dir."""
    from evals.agent.batch import run_episodes
    from evals.factory.instances import prompt_for
    from models.agent import policy_factory

    return run_episodes(
        instances,
        policy_factory(cfg, path, name, greedy=seed is None, seed=seed),
        agent=cfg.agent,
        harness=cfg.eval,
        repos_dir=None,
        out_dir=out_dir,
        runner=cfg.runner,
        contexts={i.instance_id: prompt_for(cfg, i) for i in instances},
        mapper=mapper,
    )


def _episode_outcomes(
    cfg: Config, policy, instances: list, records: list[dict], out_dir: Path, mapper: Mapper | None
) -> tuple[InstanceOutcome, ...]:
    """One greedy episode per instance in the agent environment (first observation: the same oracle prompt a
    single answer gets), or `promote.samples` sampled ones with the seeds both models get, each submitted diff
    graded by the harness; trajectories under out_dir (`sample-<n>/` for each sampled round)."""
    projects = {r["instance_id"]: r["repo"] for r in records}

    def episodes(seed: int | None, where: Path) -> dict[str, InstanceOutcome]:
        report = agent_episodes(
            cfg, policy.path, f"{policy.name}@{policy.version}", instances, where, mapper, seed=seed
        )
        outcomes = {}
        for iid, ep in report.instances.items():
            error = ep["outcome"] == "infra_error"
            outcomes[iid] = InstanceOutcome(
                instance_id=iid,
                project=projects[iid],
                resolved=bool(ep["resolved"]),
                error=error,
                p2p_broken=bool(ep["p2p_broken"]) and not error,
                reward=ep["reward"],
                outcome=ep["outcome"],
                turns=int(ep["turns"]),
            )
        return outcomes

    return _rounds(cfg, out_dir, episodes)


def _grade_all(
    cfg: Config,
    policy,
    sets: dict[str, list[dict]],
    keys: dict[str, str],
    out_dir: Path,
    run_id: str,
    stored: dict[str, SplitScores] | None = None,
    mapper: Mapper | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, SplitScores]:
    from models import registry

    scores = {}
    for split, records in sets.items():
        hit = (stored or {}).get(split)
        if hit is not None:
            scores[split] = hit
        else:
            if progress:
                progress(f"answering and grading {split}", 0)
            scores[split] = score_policy(
                cfg, policy, records, out_dir / split, split=split, key=keys[split], mapper=mapper
            )
            if run_id:
                registry.store_scores(cfg, run_id, scores[split])
        if progress:
            progress(f"graded {split}", len(records))
    return scores


def score_sets(
    cfg: Config, policy, run_id: str, out_dir: Path, progress: Callable[[str, int], None] | None = None
) -> tuple[str, dict[str, SplitScores]]:
    """The deciding split and `policy`'s scores on every set promotion grades, stored in `run_id` so that a cycle
    whose champion this policy becomes reuses them instead of grading it again (`postgame bootstrap`).
    `progress(text, graded)`: told what starts next and how many instances were just graded."""
    decide, sets, _ = graded_sets(cfg)
    keys = {split: cache_key(cfg, split, records) for split, records in sets.items()}
    return decide, _grade_all(cfg, policy, sets, keys, out_dir, run_id, progress=progress)


def evaluate_policy(
    cfg: Config,
    policy,
    run_id: str,
    out_dir: Path,
    *,
    exclude_version: str | None = None,
    mapper: Mapper | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> Evaluation:
    """Grade `policy` (logged in `run_id`) and the champion on the same sets; keep both as artifacts of run_id.
    `mapper`: where each instance is graded (`grade_predictions`). `progress(text, graded)`: told what starts next
    and how many instances were just graded (scores stored earlier count as graded), `evaluation_size` in all."""
    from models import registry
    from models.policy import Policy
    from postgame.lineage import EVAL_REPORT_PATH, EVAL_REPORT_TAG, file_sha256

    decide, sets, notes = graded_sets(cfg)
    keys = {split: cache_key(cfg, split, records) for split, records in sets.items()}
    stored_own = {s: hit for s in sets if (hit := registry.load_scores(cfg, run_id, keys[s])) is not None}
    cand = _grade_all(
        cfg, policy, sets, keys, out_dir / "candidate", run_id, stored_own, mapper, _labelled(progress, "candidate")
    )
    champion = registry.champion_version(cfg)
    champ = None
    if champion is not None and champion.version != exclude_version:
        stored = {s: hit for s in sets if (hit := registry.load_scores(cfg, champion.run_id, keys[s])) is not None}
        if len(stored) < len(sets):
            champ_policy = Policy(
                registry.download_version(cfg, champion.version),
                name=champion.name,
                version=champion.version,
                settings=cfg.policy,
            )
        else:
            champ_policy = None
        champ = _grade_all(
            cfg,
            champ_policy,
            sets,
            keys,
            out_dir / "champion",
            champion.run_id,
            stored,
            mapper,
            _labelled(progress, "champion"),
        )
    spent = sum(s.cpu_seconds for s in cand.values() if s.split not in stored_own)
    evaluation = Evaluation(
        decide_split=decide,
        candidate_splits=cand,
        champion_splits=champ,
        champion_version=champion.version if champ is not None and champion else None,
        cpu_seconds=spent,
        report_path=str(out_dir / "candidate" / decide / "report.json"),
        metric_name=cfg.promote.metric,
        notes=tuple(notes),
    )
    registry.log_evaluation(cfg, run_id, evaluation)
    report = Path(evaluation.report_path)
    if run_id and report.is_file():  # the deciding split's harness report, pinned by hash (lineage)
        c = registry.client(cfg)
        c.log_artifact(run_id, str(report), artifact_path=str(Path(EVAL_REPORT_PATH).parent))
        c.set_tag(run_id, EVAL_REPORT_TAG, file_sha256(report))
    return evaluation


def evaluation_size(cfg: Config, *, exclude_version: str | None = None) -> int:
    """How many instances `evaluate_policy` grades: every promotion set, for the candidate and, unless there is none
    (or it is `exclude_version`), the champion."""
    from models import registry

    graded = sum(len(records) for records in graded_sets(cfg)[1].values())
    champion = registry.champion_version(cfg)
    return graded * (2 if champion is not None and champion.version != exclude_version else 1)


def _labelled(progress: Callable[[str, int], None] | None, who: str) -> Callable[[str, int], None] | None:
    return (lambda text, graded: progress(f"{who}: {text}", graded)) if progress else None


def evaluate_candidate(
    cfg: Config, candidate, mapper: Mapper | None = None, progress: Callable[[str, int], None] | None = None
) -> Evaluation:
    """The cycle's evaluate stage: a trained, not yet registered candidate (`models.train.Candidate`); `mapper`: the
    `runner:` engine the Prefect task opened (`tasks/evaluate.py`), None for the harness's thread pool; `progress`
    as in `evaluate_policy`."""
    from models.policy import Policy

    policy = Policy(
        Path(candidate.model_dir),
        name=cfg.tracking.registered_model,
        version=f"run-{candidate.run_id}",
        settings=cfg.policy,
    )
    return evaluate_policy(
        cfg, policy, candidate.run_id, cfg.home / "runs" / candidate.run_id / "eval", mapper=mapper, progress=progress
    )


def charged(evaluation: Evaluation, cpu_seconds: float) -> Evaluation:
    """`evaluation` charged with the CPU seconds its whole stage spent, measured around the runner's pool: a process
    pool's workers count (`RUSAGE_CHILDREN`) only once it has joined them, after `evaluate_policy` returned, and there
    the agent's episodes, every grading and a single answer's visible-tests runs are spent. Measured inside, an
    agent's evaluation of 200 episodes (~650 CPU-s) was charged 8 CPU-s on the review page (session 26)."""
    return replace(evaluation, cpu_seconds=max(evaluation.cpu_seconds, cpu_seconds))


def evaluate_version(cfg: Config, version: str, progress: Callable[[str, int], None] | None = None) -> Evaluation:
    """A registered version graded again against the champion (`postgame promote --version V`); `progress` as in
    `evaluate_policy`."""
    from models import registry
    from models.policy import Policy

    info = registry.get_version(cfg, version)
    policy = Policy(
        registry.download_version(cfg, info.version), name=info.name, version=info.version, settings=cfg.policy
    )
    return evaluate_policy(
        cfg,
        policy,
        info.run_id,
        cfg.home / "runs" / info.run_id / "eval",
        exclude_version=info.version,
        progress=progress,
    )
