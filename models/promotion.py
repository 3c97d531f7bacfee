"""Promotion: a pure decision, then a small function that applies it to the MLflow registry.

    decide(candidate, champion, policy) -> Decision     # pure, tested exhaustively
    apply(cfg, candidate_version, decision)              # moves the `champion` alias, tags the version
"""

from __future__ import annotations

from dataclasses import dataclass

from postgame.config import Config, PromoteSettings


@dataclass(frozen=True)
class Scores:
    """What the gate compares: the metric on the same evaluation split, and how many instances it covers."""

    metric: float
    instances: int
    errors: int = 0


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
