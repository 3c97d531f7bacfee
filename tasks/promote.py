"""Promote: register the candidate as a new model version, decide, and move the `champion` alias if it won.

Every candidate is registered (alias `challenger`) with its evaluation and lineage as version tags, so a person can
review what was rejected as well as what shipped. The decision itself is `models.promotion.decide`, a pure function.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefect import task

from models.promotion import Decision, apply, decide
from postgame.config import Config
from tasks.evaluate import Evaluation
from tasks.train import Candidate


@dataclass(frozen=True)
class Promotion:
    version: str
    model_uri: str
    decision: Decision
    champion_version: str | None


def promote_candidate(cfg: Config, candidate: Candidate, evaluation: Evaluation) -> Promotion:
    from models import registry
    from postgame import ledger

    decision = decide(evaluation.candidate, evaluation.champion, cfg.promote)
    tags = {
        "lineage.snapshot_ids": ",".join(candidate.snapshot_ids),
        "lineage.dataset_sha256": candidate.dataset_sha256,
        "lineage.parent_version": candidate.parent_version,
        "lineage.run_id": candidate.run_id,
        "train.method": candidate.method,
        "eval.split": evaluation.split,
        "eval.set_sha256": evaluation.eval_set_sha256,
        f"eval.{cfg.promote.metric}": f"{evaluation.candidate.metric:.6f}",
        "eval.instances": str(evaluation.candidate.instances),
        "eval.errors": str(evaluation.candidate.errors),
    }
    version = registry.register(cfg, candidate.model_uri, tags=tags,
                                description=f"{candidate.method} from v{candidate.parent_version} on snapshots "
                                            f"{', '.join(s[:12] for s in candidate.snapshot_ids)}: {decision.reason}")
    apply(cfg, version.version, decision)
    ledger.record(cfg, list(candidate.snapshot_ids), "trained", f"version {version.version}")
    champion = registry.champion_version(cfg)
    return Promotion(version=version.version, model_uri=version.uri, decision=decision,
                     champion_version=champion.version if champion else None)


@task(name="promote")  # no retries: registering twice would make two versions
def promote(cfg: Config, candidate: Candidate, evaluation: Evaluation) -> Promotion:
    return promote_candidate(cfg, candidate, evaluation)
