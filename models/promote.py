"""Promote: register the candidate as a new model version, decide, and move the `champion` alias if it won.

    decide(candidate, champion, policy) -> Decision     # pure, tested exhaustively
    apply(cfg, candidate_version, decision)              # moves the `champion` alias, tags the version
    promote_candidate(cfg, candidate, evaluation)        # register + decide + apply (`postgame promote`)

Every candidate is registered (alias `challenger`) with its evaluation and lineage as version tags, so a person can
review what was rejected as well as what shipped.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.evaluate import Evaluation, Scores
from models.train import Candidate
from postgame.config import Config, PromoteSettings


@dataclass(frozen=True)
class Decision:
    promote: bool
    reason: str
    candidate: float
    champion: float | None

    def as_tags(self) -> dict[str, str]:
        return {"promotion.decision": "promoted" if self.promote else "rejected", "promotion.reason": self.reason}


def decide(candidate: Scores, champion: Scores | None, policy: PromoteSettings) -> Decision:
    """Promote when there is no champion, or the candidate beats it by more than `min_improvement`.

    A candidate whose evaluation had infrastructure errors on more than `max_error_rate` of the instances is never
    promoted: its score is not comparable.
    """
    if candidate.instances == 0:
        return Decision(False, "candidate was evaluated on no instance", candidate.metric, None)
    error_rate = candidate.errors / candidate.instances
    if error_rate > policy.max_error_rate:
        return Decision(False, f"evaluation error rate {error_rate:.2f} > promote.max_error_rate "
                               f"{policy.max_error_rate:.2f}", candidate.metric,
                        champion.metric if champion else None)
    if champion is None:
        return Decision(True, "no champion yet", candidate.metric, None)
    margin = candidate.metric - champion.metric
    if margin > policy.min_improvement:
        return Decision(True, f"{policy.metric} {candidate.metric:.3f} beats champion {champion.metric:.3f} by "
                              f"{margin:+.3f}", candidate.metric, champion.metric)
    return Decision(False, f"{policy.metric} {candidate.metric:.3f} does not beat champion {champion.metric:.3f} by "
                           f"more than {policy.min_improvement:.3f}", candidate.metric, champion.metric)


def apply(cfg: Config, candidate_version: str, decision: Decision) -> None:
    from models import registry

    registry.tag_version(cfg, candidate_version, decision.as_tags())
    if decision.promote:
        registry.set_champion(cfg, candidate_version)


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

