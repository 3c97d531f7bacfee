"""Promote: register the candidate, decide with paired statistics and guards, move `champion` if it won.

    decide(candidate, champion, policy, split=S, cost_usd=C) -> Decision   # pure, tested exhaustively
    promote_candidate(cfg, candidate, evaluation)     # register + decide + apply (the cycle; `postgame promote`)
    promote_version(cfg, version, evaluation)         # decide again on a registered version (`--version V`)
    record_review(cfg, version, review)               # a reviewer's approve / reject (`postgame review`)

The gate, in order: the comparison must be trustworthy (instances graded, infrastructure-error rate within
`max_error_rate` on every split for both models, the same instances for both); then on the deciding split the
candidate must beat the champion by more than `min_improvement` *and* an exact McNemar test on the paired
per-instance outcomes must reject "no better" at `alpha`; no guard split may drop by more than its tolerance; the
share of instances whose patch broke a PASS_TO_PASS test may not grow by more than `max_p2p_increase`; the cycle's
compute must stay under `max_cost_usd`. Without a champion, an absolute `floor` replaces the comparison.

A rejection is the cycle's reported outcome (`Promotion.outcome == "rejected"`, with the decision on the version),
not an exception; `promote.fail_on_reject: true` makes the promote step raise `PromotionRejected` instead.
Every version carries the decision as tags (MLflow search can filter on them) and a review page as its description.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum

from models.scores import Evaluation, SplitScores
from models.stats import detectable_effect, detectable_gain, mcnemar_exact, sign_flip_exact
from postgame.config import Config
from postgame.errors import StaleChampion
from postgame.settings.promote import PromoteSettings

EPS = 1e-12


class Outcome(str, Enum):
    PROMOTED = "promoted"
    REJECTED = "rejected"
    AWAITING_APPROVAL = "awaiting_approval"


@dataclass(frozen=True)
class Check:
    name: str  # measured | errors:<split> | comparable | floor | margin | significance | guard:<split> | p2p | cost
    passed: bool
    detail: str
    value: float | None = None
    limit: float | None = None


@dataclass(frozen=True)
class Decision:
    promote: bool
    reason: str
    candidate: float  # resolve rate on the deciding split
    champion: float | None
    split: str = ""
    n: int = 0
    wins: int = 0  # instances the candidate resolves and the champion does not
    losses: int = 0  # the reverse
    delta: float | None = None  # (wins - losses) / paired instances
    p_value: float | None = None
    cost_usd: float = 0.0
    checks: tuple[Check, ...] = ()
    detectable: float | None = None  # the gain this test detects with 80% power at the churn measured (losses / n)

    @property
    def failed(self) -> list[str]:
        return [c.name for c in self.checks if not c.passed]

    def as_tags(self) -> dict[str, str]:
        tags = {
            "promotion.decision": (Outcome.PROMOTED if self.promote else Outcome.REJECTED).value,
            "promotion.reason": self.reason[:4000],
            "promotion.split": self.split,
            "promotion.n": str(self.n),
            "promotion.wins": str(self.wins),
            "promotion.losses": str(self.losses),
            "promotion.failed_checks": ",".join(self.failed) or "none",
            "promotion.cost_usd": f"{self.cost_usd:.6f}",
        }
        if self.delta is not None:
            tags["promotion.delta"] = f"{self.delta:+.6f}"
        if self.p_value is not None:
            tags["promotion.p_value"] = f"{self.p_value:.6g}"
        if self.detectable is not None:
            tags["promotion.detectable"] = f"{self.detectable:.6f}"
        return tags

    def to_dict(self) -> dict:
        return {
            "promote": self.promote,
            "reason": self.reason,
            "candidate": self.candidate,
            "champion": self.champion,
            "split": self.split,
            "n": self.n,
            "wins": self.wins,
            "losses": self.losses,
            "delta": self.delta,
            "p_value": self.p_value,
            "detectable": self.detectable,
            "cost_usd": self.cost_usd,
            "checks": [
                {"name": c.name, "passed": c.passed, "detail": c.detail, "value": c.value, "limit": c.limit}
                for c in self.checks
            ],
        }


def decide(
    candidate: Mapping[str, SplitScores],
    champion: Mapping[str, SplitScores] | None,
    policy: PromoteSettings,
    *,
    split: str,
    cost_usd: float = 0.0,
) -> Decision:
    """The gate (see the module docstring). `candidate`/`champion`: scores per graded split; `split` decides."""
    mine = candidate.get(split)
    if mine is None or mine.n == 0:
        return Decision(
            False,
            f"candidate was evaluated on no instance of {split!r}",
            0.0,
            None,
            split=split,
            cost_usd=cost_usd,
            checks=(Check("measured", False, f"no instance of {split!r} graded"),),
        )
    checks: list[Check] = []
    for who, scores in (("candidate", candidate), ("champion", champion or {})):
        for name, s in scores.items():
            ok = s.error_rate <= policy.max_error_rate + EPS
            if not ok or who == "candidate":
                checks.append(
                    Check(
                        f"errors:{name}" + ("" if who == "candidate" else ":champion"),
                        ok,
                        f"{who} infrastructure-error rate on {name} {s.error_rate:.3f}"
                        + (" > " if not ok else " <= ")
                        + f"promote.max_error_rate {policy.max_error_rate:.3f}",
                        s.error_rate,
                        policy.max_error_rate,
                    )
                )
    theirs = (champion or {}).get(split)
    wins = losses = 0
    delta = p_value = detectable = None
    if theirs is None:
        ok = mine.rate > policy.floor + EPS
        checks.append(
            Check(
                "floor",
                ok,
                f"no champion: resolve rate on {split} {mine.rate:.3f} "
                + ("> " if ok else "<= ")
                + f"promote.floor {policy.floor:.3f}",
                mine.rate,
                policy.floor,
            )
        )
    else:
        same = all(
            set(s.by_id()) == set((champion or {})[name].by_id()) and s.attempts == (champion or {})[name].attempts
            for name, s in candidate.items()
            if name in (champion or {})
        )
        checks.append(
            Check(
                "comparable",
                same,
                "both models graded on the same instances"
                if same
                else "candidate and champion were graded on different instances (or attempts): not comparable",
            )
        )
        cand_by, champ_by = mine.by_id(), theirs.by_id()
        pairs = [
            (cand_by[i], champ_by[i])
            for i in sorted(cand_by)
            if i in champ_by and not cand_by[i].error and not champ_by[i].error
        ]
        k = mine.attempts
        diffs = [a.resolved_attempts - b.resolved_attempts for a, b in pairs]
        wins = sum(d > 0 for d in diffs)  # instances the candidate resolves more often than the champion
        losses = sum(d < 0 for d in diffs)
        delta = sum(diffs) / (k * len(pairs)) if pairs else 0.0
        ok = delta > policy.min_improvement + EPS
        checks.append(
            Check(
                "margin",
                ok,
                f"resolve rate on {split} {delta:+.3f} vs champion "
                + ("> " if ok else "<= ")
                + f"promote.min_improvement "
                f"{policy.min_improvement:.3f}",
                delta,
                policy.min_improvement,
            )
        )
        if k == 1:
            p_value = mcnemar_exact(wins, losses, sided=policy.sided)
            detectable = (
                detectable_effect(len(pairs), alpha=policy.alpha, sided=policy.sided, loss_rate=losses / len(pairs))
                if pairs
                else None
            )
            test = f"exact McNemar ({policy.sided}-sided) on {len(pairs)} paired instances"
        else:  # K attempts each: the exact sign-flip test on the per-instance differences (McNemar's at K = 1)
            p_value = sign_flip_exact(diffs, sided=policy.sided)
            detectable = detectable_gain(diffs, k=k, alpha=policy.alpha, sided=policy.sided)
            test = f"exact sign-flip test ({policy.sided}-sided) on {len(pairs)} paired instances x {k} attempts"
        ok = p_value <= policy.alpha
        checks.append(
            Check(
                "significance",
                ok,
                f"{test}: {_n(wins, 'win')}, {_n(losses, 'loss')}, p = {p_value:.4f} "
                + ("<= " if ok else "> ")
                + f"promote.alpha {policy.alpha}",
                p_value,
                policy.alpha,
            )
        )
        for name, tolerance in policy.guard_splits.items():
            if name == split or name not in candidate or name not in (champion or {}):
                continue
            drop = (champion or {})[name].rate - candidate[name].rate
            ok = drop <= tolerance + EPS
            floor = (champion or {})[name].rate <= tolerance + EPS  # no drop past the tolerance is possible
            checks.append(
                Check(
                    f"guard:{name}",
                    ok,
                    f"guard {name}: resolve rate {candidate[name].rate:.3f} vs "
                    f"champion {(champion or {})[name].rate:.3f} (drop {drop:+.3f} "
                    + ("<= " if ok else "> ")
                    + f"tolerance {tolerance:.3f})"
                    + (
                        f"; uninformative: the champion resolves {(champion or {})[name].rate:.1%} here, so no "
                        "candidate can drop past the tolerance"
                        if floor
                        else ""
                    ),
                    -drop,
                    -tolerance,
                )
            )
        mine_p2p, theirs_p2p = _pooled_p2p(candidate), _pooled_p2p(champion or {})
        ok = mine_p2p - theirs_p2p <= policy.max_p2p_increase + EPS
        checks.append(
            Check(
                "p2p",
                ok,
                f"PASS_TO_PASS breakage {mine_p2p:.3f} vs champion {theirs_p2p:.3f} "
                f"(increase {mine_p2p - theirs_p2p:+.3f} "
                + ("<= " if ok else "> ")
                + f"promote.max_p2p_increase {policy.max_p2p_increase:.3f})",
                mine_p2p - theirs_p2p,
                policy.max_p2p_increase,
            )
        )
    if policy.max_cost_usd > 0:
        ok = cost_usd <= policy.max_cost_usd + EPS
        checks.append(
            Check(
                "cost",
                ok,
                f"cycle compute ${cost_usd:.4f} "
                + ("<= " if ok else "> ")
                + f"promote.max_cost_usd ${policy.max_cost_usd:.4f}",
                cost_usd,
                policy.max_cost_usd,
            )
        )
    promote = all(c.passed for c in checks)
    if promote and theirs is not None:
        reason = (
            f"resolves {mine.rate:.3f} vs champion {theirs.rate:.3f} on {split} ({delta:+.3f}; "
            f"{_n(wins, 'win')}, {_n(losses, 'loss')}, p = {p_value:.4f} <= {policy.alpha}); guards hold"
        )
    elif promote:
        reason = f"no champion; resolves {mine.rate:.3f} on {split} (> floor {policy.floor:.3f}); guards hold"
    else:
        reason = "; ".join(c.detail for c in checks if not c.passed)
    return Decision(
        promote,
        reason,
        mine.rate,
        theirs.rate if theirs is not None else None,
        split=split,
        n=mine.n,
        wins=wins,
        losses=losses,
        delta=delta,
        p_value=p_value,
        cost_usd=cost_usd,
        checks=tuple(checks),
        detectable=detectable,
    )


def _n(count: int, word: str) -> str:
    return f"{count} {word if count == 1 else word + ('es' if word.endswith('s') else 's')}"


def _pooled_p2p(scores: Mapping[str, SplitScores]) -> float:
    graded = sum(s.n - s.errors for s in scores.values())
    return sum(s.p2p_share for s in scores.values()) / graded if graded else 0.0


# --- applying a decision to the registry ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Promotion:
    version: str
    model_uri: str
    decision: Decision
    champion_version: str | None  # serving after this step
    outcome: str = Outcome.REJECTED.value
    champion_from: str | None = None  # the champion the candidate was compared with (compare-and-set base)


@dataclass(frozen=True)
class Review:
    approve: bool
    comment: str = ""
    by: str = ""
    via: str = ""  # prefect-ui | mlflow-tag | cli | timeout


def cycle_cost_usd(cfg: Config, train_seconds: float, evaluation: Evaluation) -> float:
    """Training (wall seconds of one process) plus evaluation (CPU seconds) priced at cost.usd_per_cpu_hour."""
    return (train_seconds + evaluation.cpu_seconds) / 3600 * cfg.cost.usd_per_cpu_hour


def apply(cfg: Config, version: str, decision: Decision, *, expected_champion: str | None) -> Promotion:
    """Record the decision on the version; move `champion` (compare-and-set) or wait for a reviewer."""
    from models import registry

    info = registry.get_version(cfg, version)
    registry.tag_version(cfg, version, {**decision.as_tags(), "promotion.champion_from": expected_champion or "none"})
    if decision.promote and cfg.promote.require_approval:
        registry.tag_version(
            cfg, version, {"promotion.decision": Outcome.AWAITING_APPROVAL.value, "approval": "pending"}
        )
        return Promotion(
            version, info.uri, decision, expected_champion, Outcome.AWAITING_APPROVAL.value, expected_champion
        )
    if decision.promote:
        try:
            registry.move_champion(cfg, version, expected=expected_champion, why=decision.reason, by="gate")
        except StaleChampion:
            registry.tag_version(cfg, version, {"promotion.decision": "stale"})
            raise
    registry.clear_challenger(cfg, version)
    champion = registry.champion_version(cfg)
    outcome = Outcome.PROMOTED if decision.promote else Outcome.REJECTED
    return Promotion(
        version, info.uri, decision, champion.version if champion else None, outcome.value, expected_champion
    )


def record_review(cfg: Config, version: str, review: Review) -> Promotion:
    """A reviewer's verdict on a version awaiting approval: recorded on it; on approval `champion` moves
    (compare-and-set against the champion it was compared with)."""
    from models import registry
    from models.review import VERDICT, review_section

    info = registry.get_version(cfg, version)
    if "approval.at" in info.tags:  # already recorded (a second answer, e.g. the tag after the form): keep the first
        champion = registry.champion_version(cfg)
        first = info.tags.get("approval") == "approved"
        return Promotion(
            version,
            info.uri,
            replace(_decision_from_tags(info.tags), promote=first),
            champion.version if champion else None,
            (Outcome.PROMOTED if first else Outcome.REJECTED).value,
            None,
        )
    base = info.tags.get("promotion.champion_from", "none")
    expected = None if base == "none" else base
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    verdict = "approved" if review.approve else "rejected"
    registry.tag_version(
        cfg,
        version,
        {
            "approval": verdict,
            "approval.by": review.by or "unknown",
            "approval.via": review.via,
            "approval.comment": review.comment[:4000],
            "approval.at": stamp,
        },
    )
    description = registry.client(cfg).get_model_version(info.name, version).description or ""
    description = description.replace(
        VERDICT[Outcome.AWAITING_APPROVAL.value],
        VERDICT[(Outcome.PROMOTED if review.approve else Outcome.REJECTED).value] + " (reviewed)",
        1,
    )
    registry.set_description(cfg, version, description + review_section(review, stamp))
    decision = _decision_from_tags(info.tags)
    if review.approve:
        why = f"approved by {review.by or 'unknown'} via {review.via}" + (
            f": {review.comment}" if review.comment else ""
        )
        registry.move_champion(cfg, version, expected=expected, why=f"{decision.reason} — {why}", by=review.by)
        decision = replace(decision, promote=True)
    else:
        decision = replace(
            decision,
            promote=False,
            reason=f"{verdict} by {review.by or 'unknown'} via {review.via}"
            + (f": {review.comment}" if review.comment else ""),
        )
    registry.tag_version(cfg, version, {"promotion.decision": verdict if not review.approve else "promoted"})
    registry.clear_challenger(cfg, version)
    champion = registry.champion_version(cfg)
    return Promotion(
        version,
        info.uri,
        decision,
        champion.version if champion else None,
        (Outcome.PROMOTED if review.approve else Outcome.REJECTED).value,
        expected,
    )


def _decision_from_tags(tags: dict[str, str]) -> Decision:
    """The gate's decision as recorded on a version (for a review that arrives in another process)."""

    def num(key: str) -> float | None:
        return float(tags[key]) if key in tags else None

    return Decision(
        promote=True,
        reason=tags.get("promotion.reason", ""),
        candidate=num(f"eval.{tags.get('promotion.split', '')}.resolved_rate") or 0.0,
        champion=None,
        split=tags.get("promotion.split", ""),
        n=int(tags.get("promotion.n", 0)),
        wins=int(tags.get("promotion.wins", 0)),
        losses=int(tags.get("promotion.losses", 0)),
        delta=num("promotion.delta"),
        p_value=num("promotion.p_value"),
        cost_usd=num("promotion.cost_usd") or 0.0,
    )


# --- the stage ----------------------------------------------------------------------------------------------------


def promote_candidate(cfg: Config, candidate, evaluation: Evaluation, *, flow_run_id: str | None = None) -> Promotion:
    """Register the trained candidate (`models.train.Candidate`) with its review page, decide, apply."""
    from models import registry
    from models.review import ReviewContext, review_markdown, review_tags
    from postgame import ledger

    cost = cycle_cost_usd(cfg, candidate.seconds, evaluation)
    decision = decide(
        evaluation.candidate_splits,
        evaluation.champion_splits,
        cfg.promote,
        split=evaluation.decide_split,
        cost_usd=cost,
    )
    context = ReviewContext.for_run(
        cfg,
        candidate.run_id,
        method=candidate.method,
        steps=candidate.steps,
        parent=candidate.parent_version,
        snapshot_ids=candidate.snapshot_ids,
        dataset_sha256=candidate.dataset_sha256,
        train_seconds=candidate.seconds,
        flow_run_id=flow_run_id,
    )
    tags = {
        **review_tags(cfg, evaluation),
        **decision.as_tags(),
        "lineage.snapshot_ids": ",".join(candidate.snapshot_ids),
        "lineage.dataset_sha256": candidate.dataset_sha256,
        "lineage.parent_version": candidate.parent_version,
        "lineage.run_id": candidate.run_id,
        "train.method": candidate.method,
    }
    if flow_run_id:
        tags["prefect.flow_run_id"] = flow_run_id
    version = registry.register(cfg, candidate.model_uri, tags=tags)
    registry.set_description(cfg, version.version, review_markdown(cfg, version.version, decision, evaluation, context))
    promotion = apply(cfg, version.version, decision, expected_champion=evaluation.champion_version)
    ledger.record(cfg, list(candidate.snapshot_ids), "trained", f"version {version.version}")
    return promotion


def promote_version(cfg: Config, version: str, evaluation: Evaluation) -> Promotion:
    """Decide again on a registered version from a fresh evaluation; its review page is rewritten."""
    from models import registry
    from models.review import ReviewContext, review_markdown, review_tags

    info = registry.get_version(cfg, version)
    cost = cycle_cost_usd(cfg, 0.0, evaluation)
    decision = decide(
        evaluation.candidate_splits,
        evaluation.champion_splits,
        cfg.promote,
        split=evaluation.decide_split,
        cost_usd=cost,
    )
    context = ReviewContext.for_run(
        cfg,
        info.run_id,
        method=info.tags.get("train.method", "?"),
        steps=None,
        parent=info.tags.get("lineage.parent_version", "?"),
        snapshot_ids=tuple(s for s in info.tags.get("lineage.snapshot_ids", "").split(",") if s),
        dataset_sha256=info.tags.get("lineage.dataset_sha256", ""),
        train_seconds=0.0,
        flow_run_id=None,
    )
    registry.tag_version(cfg, version, review_tags(cfg, evaluation))
    client = registry.client(cfg)
    client.set_registered_model_alias(info.name, registry.CHALLENGER, version)
    registry.set_description(cfg, version, review_markdown(cfg, version, decision, evaluation, context))
    return apply(cfg, version, decision, expected_champion=evaluation.champion_version)
