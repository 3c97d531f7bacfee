"""Settings of the promotion gate (section `promote:` of postgame.yaml): what decides, what guards, who approves.

The deciding set is `decide_split` (default `indomain`: new bugs in the projects the model serves, never trained on),
`eval_instances` instances stratified per project and drawn by `seed`. With the defaults (n = 60, one-sided exact
McNemar at alpha = 0.05) the gate detects, with 80% power, a gain of +11 resolve-rate points when the candidate breaks
nothing the champion solved, and +14.5 points when it breaks 2% of them; the least it can ever call significant is
5 more wins than losses with no loss (+8.3 points). `models.stats.detectable_effect` computes it for any n.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from postgame.settings.factory import DEV


class PromoteSettings(BaseModel):
    """The promotion gate: a paired test on the deciding split, guards on others, an optional reviewer. With the
    defaults (140 instances, one-sided exact McNemar at 0.05) it detects +5 resolve-rate points with 80% power when
    the candidate loses nothing, +9 to +10 when it loses 4-5% of the champion's (`models.stats.detectable_effect`
    computes it for any n and churn)."""

    model_config = ConfigDict(extra="forbid")

    metric: Literal["resolved_rate", "mean_reward"] = Field(
        "resolved_rate",
        description="Headline metric written to the version tags and the cycle report; the gate "
        "itself decides on per-instance resolved outcomes.",
    )
    decide_split: str = Field(
        "indomain",
        description="Split the gate decides on (paired test). Falls back to `eval_split`, with a log "
        "line, when the task catalog has no such split.",
    )
    eval_split: str = Field("eval", description="The unseen-project split: a guard, and the fallback deciding split.")
    eval_instances: int = Field(
        140,
        gt=0,
        description="Instances of the deciding split graded per policy, stratified "
        "per project (round-robin over projects, seeded).",
    )
    guard_splits: dict[str, float] = Field(
        default_factory=lambda: {"eval": 0.05, "holdout": 0.05},
        description="Splits graded as guards, each with the resolve-rate drop it tolerates (absolute, 0.05 = 5 "
        "points below the champion); {} = no split guard.",
    )
    guard_instances: int = Field(30, gt=0, description="Instances of each guard split graded per policy (stratified).")
    samples: int = Field(
        1,
        ge=1,
        le=64,
        description="Answers (an agent: episodes) graded per instance and model: 1 = the one deterministic answer "
        "(beams; an agent's greedy episode), decided by exact McNemar; K > 1 = K sampled ones at policy.temperature "
        "(the same seeds for both models), decided by the exact sign-flip test on the per-instance counts: more "
        "power per instance, K times the answering and grading (cheap on a GPU with vLLM, slow on a CPU).",
    )
    seed: int = Field(0, description="Seed of the stratified draw of every graded set.")
    min_improvement: float = Field(
        0.0,
        ge=0,
        lt=1,
        description="Margin: the candidate's resolve rate on the deciding split must beat the "
        "champion's by more than this (absolute).",
    )
    alpha: float = Field(
        0.05, gt=0, lt=1, description="Level of the exact McNemar test on paired per-instance outcomes."
    )
    sided: Literal["one", "two"] = Field(
        "one", description="one = H1: the candidate is better (a superiority gate); two = H1: they differ."
    )
    max_p2p_increase: float = Field(
        0.02,
        ge=0,
        le=1,
        description="Guard: the share of instances whose applied patch broke a PASS_TO_PASS test "
        "may exceed the champion's by at most this.",
    )
    max_error_rate: float = Field(
        0.2,
        ge=0,
        le=1,
        description="Guard: more infrastructure errors than this share on any graded split, for "
        "either model, and the comparison is not trusted.",
    )
    max_cost_usd: float = Field(
        0.0,
        ge=0,
        description="Cost ceiling of a cycle's training + evaluation compute (cost.usd_per_cpu_hour); 0 = no ceiling.",
    )
    floor: float = Field(
        0.0,
        ge=-1,
        lt=1,
        description="Without a champion, the candidate's resolve rate on the deciding split must "
        "exceed this (0 = it must resolve something; -1 = any first candidate, for a "
        "world with no base to beat, such as the tests' tiny ones).",
    )
    require_approval: bool = Field(
        False,
        description="After the gate passes, wait for a reviewer (Prefect UI form, MLflow tag "
        "`approval=approved|rejected`, or `postgame review`) before moving `champion`.",
    )
    approval_timeout_s: float = Field(86400.0, gt=0, description="No review within this many seconds rejects.")
    approval_poll_s: float = Field(10.0, gt=0, description="How often a waiting cycle checks the MLflow approval tag.")
    fail_on_reject: bool = Field(
        False,
        description="A rejected candidate fails the flow run (PromotionRejected) instead of being reported "
        "as the cycle's outcome.",
    )

    @model_validator(mode="after")
    def _check(self) -> PromoteSettings:
        """Each guard_splits tolerance is in 0..1; decide_split is not also a guard split; `dev` (the tuning split)
        neither decides nor guards."""
        bad = {k: v for k, v in self.guard_splits.items() if not 0 <= v <= 1}
        if bad:
            raise ValueError(f"promote.guard_splits = {bad}: each tolerance must be between 0 and 1")
        if self.decide_split == DEV or DEV in self.guard_splits:
            raise ValueError(
                f"promote.decide_split = {self.decide_split!r}, guard_splits = {sorted(self.guard_splits)}: the `dev` "
                "split is where settings are tuned; the gate decides and guards on splits no setting was chosen on"
            )
        if self.decide_split in self.guard_splits:
            raise ValueError(
                f"promote.decide_split = {self.decide_split!r} is also in promote.guard_splits: a split "
                f"either decides or guards"
            )
        return self
