"""What an evaluation found, as typed results: an outcome per graded instance (`InstanceOutcome`), one policy's scores
on one graded set (`SplitScores`), and the candidate against the champion (`Evaluation`).

Apart from `models.evaluate`, which produces them, because the registry stores and reads them
(`models.registry.store_scores`, `load_scores`, `log_evaluation`) while evaluation needs the registry: both import
these, and neither the other's way back (import-linter keeps `models/` acyclic).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class InstanceOutcome:
    instance_id: str
    project: str
    resolved: bool
    error: bool = False  # an infrastructure error: not the model's doing, never counted as a failure of it
    p2p_broken: bool = False  # the applied patch broke a PASS_TO_PASS test
    reward: float | None = None
    outcome: str = ""  # an agent episode's ending (submitted, budget_exhausted, ...); "" for a single answer
    turns: int = 0  # the policy's turns in that episode
    attempts: int = 1  # answers graded on this instance (`promote.samples`); `resolved`: at least half resolved
    solved: int | None = None  # how many of them resolved (None: one answer, `resolved`)
    broke: int | None = None  # how many broke a PASS_TO_PASS test (None: one answer, `p2p_broken`)

    @property
    def resolved_attempts(self) -> int:
        return int(self.resolved) if self.solved is None else self.solved

    @property
    def broken_attempts(self) -> int:
        return int(self.p2p_broken) if self.broke is None else self.broke

    @property
    def score(self) -> float:
        """The share of its attempts that resolved (0 or 1 for one answer)."""
        return self.resolved_attempts / self.attempts


@dataclass(frozen=True)
class SplitScores:
    """One policy on one graded set: an outcome per instance, and what grading it cost."""

    split: str
    cache_key: str
    outcomes: tuple[InstanceOutcome, ...]
    cpu_seconds: float = 0.0

    @property
    def n(self) -> int:
        return len(self.outcomes)

    @property
    def resolved(self) -> int:
        return sum(o.resolved for o in self.outcomes)

    @property
    def rate(self) -> float:
        """The resolve rate: the mean over instances of the share of attempts that resolved (with one answer per
        instance, resolved instances / instances)."""
        return sum(o.score for o in self.outcomes) / self.n if self.n else 0.0

    @property
    def attempts(self) -> int:
        """Answers graded per instance (1, or `promote.samples`)."""
        return max((o.attempts for o in self.outcomes), default=1)

    @property
    def errors(self) -> int:
        return sum(o.error for o in self.outcomes)

    @property
    def error_rate(self) -> float:
        return self.errors / self.n if self.n else 0.0

    @property
    def p2p_broken(self) -> int:
        return sum(o.p2p_broken for o in self.outcomes)

    @property
    def p2p_share(self) -> float:
        """Instances whose patch broke a PASS_TO_PASS test, each counted by the share of its attempts that did."""
        return sum(o.broken_attempts / o.attempts for o in self.outcomes if not o.error)

    @property
    def p2p_rate(self) -> float:
        graded = self.n - self.errors
        return self.p2p_share / graded if graded else 0.0

    @property
    def mean_reward(self) -> float:
        return sum(o.reward or 0.0 for o in self.outcomes) / self.n if self.n else 0.0

    def outcome_mix(self) -> dict[str, int]:
        """How the agent's episodes ended ({} for single answers)."""
        mix: dict[str, int] = {}
        for o in self.outcomes:
            if o.outcome:
                mix[o.outcome] = mix.get(o.outcome, 0) + 1
        return mix

    @property
    def mean_turns(self) -> float:
        episodes = [o.turns for o in self.outcomes if o.outcome]
        return sum(episodes) / len(episodes) if episodes else 0.0

    def by_id(self) -> dict[str, InstanceOutcome]:
        return {o.instance_id: o for o in self.outcomes}

    def to_dict(self) -> dict:
        return {
            "split": self.split,
            "cache_key": self.cache_key,
            "cpu_seconds": self.cpu_seconds,
            "outcomes": [asdict(o) for o in self.outcomes],
        }

    @classmethod
    def from_dict(cls, data: dict) -> SplitScores:
        return cls(
            split=data["split"],
            cache_key=data["cache_key"],
            cpu_seconds=float(data.get("cpu_seconds", 0)),
            outcomes=tuple(InstanceOutcome(**o) for o in data["outcomes"]),
        )


@dataclass(frozen=True)
class Scores:
    """The headline: the metric on the deciding split, and how many instances it covers."""

    metric: float
    instances: int
    errors: int = 0


@dataclass(frozen=True)
class Evaluation:
    decide_split: str
    candidate_splits: dict[str, SplitScores]
    champion_splits: dict[str, SplitScores] | None
    champion_version: str | None
    cpu_seconds: float  # grading both models, this evaluation
    report_path: str = ""
    metric_name: str = "resolved_rate"
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def split(self) -> str:
        return self.decide_split

    @property
    def eval_set_sha256(self) -> str:
        return self.candidate_splits[self.decide_split].cache_key

    @property
    def candidate(self) -> Scores:
        return _headline(self.candidate_splits[self.decide_split], self.metric_name)

    @property
    def champion(self) -> Scores | None:
        if not self.champion_splits:
            return None
        return _headline(self.champion_splits[self.decide_split], self.metric_name)

    @property
    def resolved_ids(self) -> tuple[str, ...]:
        return tuple(o.instance_id for o in self.candidate_splits[self.decide_split].outcomes if o.resolved)


def _headline(scores: SplitScores, metric: str) -> Scores:
    value = scores.mean_reward if metric == "mean_reward" else scores.rate
    return Scores(metric=value, instances=scores.n, errors=scores.errors)
