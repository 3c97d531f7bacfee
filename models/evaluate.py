"""Evaluate: the candidate and the champion answer the same held-out tasks; the harness grades their patches.

Both are scored on the first `promote.eval_instances` tasks of `promote.eval_split` (a split no training prompt comes
from) with greedy decoding, so the comparison is deterministic. The champion's score is reused from its version tags
when it was measured on the same task set (same sha256); otherwise it is measured again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from models.train import Candidate
from postgame.config import Config


@dataclass(frozen=True)
class Scores:
    """What the gate compares: the metric on the same evaluation split, and how many instances it covers."""

    metric: float
    instances: int
    errors: int = 0


@dataclass(frozen=True)
class Evaluation:
    eval_set_sha256: str
    split: str
    candidate: Scores
    champion: Scores | None
    champion_version: str | None
    report_path: str
    resolved_ids: tuple[str, ...]


def eval_set(cfg: Config):
    from evals.factory.instances import load_split

    instances = sorted(load_split(cfg, cfg.promote.eval_split), key=lambda i: i.instance_id)
    instances = instances[:cfg.promote.eval_instances]
    sha = hashlib.sha256("\n".join(i.instance_id + ":" + i.base_commit for i in instances).encode()).hexdigest()
    return instances, sha


def score_policy(cfg: Config, policy, instances, out_dir: Path) -> tuple[Scores, dict]:
    """Generate one greedy answer per task, grade them all with the harness, return the scores and the report."""
    from evals.factory.instances import prompt_for
    from evals.harness import Prediction, run_evaluation
    from evals.prompts import extract_patch

    generations = policy.generate([prompt_for(cfg, inst) for inst in instances], greedy=True)
    predictions = [Prediction(instance_id=inst.instance_id, model_name_or_path=f"{policy.name}@{policy.version}",
                              model_patch=extract_patch(gen.text)) for inst, gen in zip(instances, generations)]
    report = run_evaluation(instances, predictions, repos_dir=None, out_dir=out_dir, settings=cfg.eval,
                            progress=False)
    total = len(instances)
    rewards = [result.reward or 0.0 for result in report.results.values()]
    metric = {"resolved_rate": len(report.resolved_ids) / total if total else 0.0,
              "mean_reward": sum(rewards) / total if total else 0.0}[cfg.promote.metric]
    data = report.to_dict()
    errors = len(report.error_ids)
    return Scores(metric=metric, instances=total, errors=errors), data


def evaluate_candidate(cfg: Config, candidate: Candidate) -> Evaluation:
    import mlflow

    from models import registry
    from models.policy import Policy
    from postgame.lineage import EVAL_REPORT_TAG, file_sha256
    from postgame.runtime import resolve

    instances, sha = eval_set(cfg)
    run_dir = cfg.home / "runs" / candidate.run_id / "eval"
    policy = Policy(Path(candidate.model_dir), name=cfg.tracking.registered_model, version=f"run-{candidate.run_id}",
                    settings=cfg.policy)
    cand_scores, report = score_policy(cfg, policy, instances, run_dir / "candidate")
    champion = registry.champion_version(cfg)
    champ_scores = None
    if champion is not None:
        if champion.tags.get("eval.set_sha256") == sha and champion.metric(cfg.promote.metric) is not None:
            champ_scores = Scores(metric=champion.metric(cfg.promote.metric), instances=len(instances),
                                  errors=int(champion.tags.get("eval.errors", 0)))
        else:
            champ_policy = Policy(registry.download_version(cfg, champion.version), name=champion.name,
                                  version=champion.version, settings=cfg.policy)
            champ_scores, _ = score_policy(cfg, champ_policy, instances, run_dir / "champion")
    resolve(cfg)  # points MLflow at the stack
    with mlflow.start_run(run_id=candidate.run_id):
        mlflow.log_metrics({f"eval.{cfg.promote.metric}": cand_scores.metric, "eval.errors": cand_scores.errors,
                            "eval.instances": cand_scores.instances})
        if champ_scores is not None:
            mlflow.log_metric(f"eval.champion_{cfg.promote.metric}", champ_scores.metric)
        mlflow.log_artifact(str(run_dir / "candidate" / "report.json"), artifact_path="eval")
        mlflow.set_tag(EVAL_REPORT_TAG, file_sha256(run_dir / "candidate" / "report.json"))  # pins it (lineage)
    return Evaluation(eval_set_sha256=sha, split=cfg.promote.eval_split, candidate=cand_scores,
                      champion=champ_scores, champion_version=champion.version if champion else None,
                      report_path=str(run_dir / "candidate" / "report.json"),
                      resolved_ids=tuple(report["resolved_ids"]))

