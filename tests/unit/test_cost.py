"""Cost, gain and intelligence per dollar (`postgame.report`): pure arithmetic on what a cycle recorded."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from models.evaluate import Evaluation, InstanceOutcome, SplitScores
from postgame.report import CycleStart, Usage, build_report, gain_points, per_dollar, price, wilson
from postgame.settings.demo import CostSettings

PRICES = CostSettings(usd_per_cpu_hour=0.36, usd_per_gpu_hour=7.2, usd_per_1m_generated_tokens=2.0)
USAGE = Usage(sessions=3, prompt_tokens=900, completion_tokens=250_000, cost_usd=0.125)


@pytest.mark.parametrize("serving, expected", [("logged", 0.125), ("tokens", 0.5), ("none", 0.0)])
def test_cost_is_exactly_the_sum_of_compute_and_serving(serving, expected):
    cost = price(100.0, 50.0, USAGE, PRICES.model_copy(update={"serving": serving}))
    assert cost.cpu_usd == 100.0 / 3600 * 0.36 and cost.gpu_usd == 50.0 / 3600 * 7.2
    assert cost.serving_usd == expected
    assert cost.total_usd == cost.cpu_usd + cost.gpu_usd + cost.serving_usd


def test_gain_is_zero_when_rejected_and_unmeasured_without_a_baseline():
    assert gain_points(0.5, 0.25, promoted=True) == 25.0  # resolve-rate points
    assert gain_points(0.5, 0.25, promoted=False) == 0.0
    assert gain_points(0.5, None, promoted=True) is None  # never against an empty baseline
    assert per_dollar(None, 1.0) is None and per_dollar(3.0, 0.0) is None and per_dollar(3.0, 2.0) == 1.5


def test_wilson_interval_brackets_the_rate():
    lo, hi = wilson(0.5, 12)
    assert 0.2 < lo < 0.5 < hi < 0.8
    assert wilson(0.0, 12)[0] == 0.0 and wilson(1.0, 12)[1] == 1.0


def _graded(split: str, rate: float, n: int = 12, key: str = "abc") -> SplitScores:
    solved = round(rate * n)
    return SplitScores(split, key, tuple(InstanceOutcome(f"{split}-{i}", "p", i < solved) for i in range(n)))


def _stages(
    candidate: float,
    champion: float | None,
    promote: bool,
    sha: str = "abc",
    guard: float = 0.1,
    champion_guard: float = 0.2,
):
    champion_splits = (
        None
        if champion is None
        else {"indomain": _graded("indomain", champion, key=sha), "holdout": _graded("holdout", champion_guard, n=10)}
    )
    return dict(
        data=SimpleNamespace(snapshot_ids=["s" * 64], records_ingested=10, quarantined={"parse": 1}),
        warnings=[],
        dataset=SimpleNamespace(uri="file:///d", sha256="d" * 64, prompts=5, sft_examples=2),
        candidate=SimpleNamespace(method="grpo", steps=2, train_loss=0.1, seconds=3.0),
        evaluation=Evaluation(
            decide_split="indomain",
            candidate_splits={
                "holdout": _graded("holdout", guard, n=10),
                "indomain": _graded("indomain", candidate, key=sha),
            },
            champion_splits=champion_splits,
            champion_version="1" if champion is not None else None,
            cpu_seconds=1.0,
        ),
        promotion=SimpleNamespace(
            version="2",
            model_uri="models:/p/2",
            champion_version="2" if promote else "1",
            decision=SimpleNamespace(promote=promote, reason="r"),
        ),
    )


def _report(cfg, previous, candidate, champion, promote, cost_usd):
    start = CycleStart(run_id=f"run{len(previous)}", experiment_id="0", started_at=0.0, cpu_seconds_at_start=0.0)
    cost = price(cost_usd / 0.36 * 3600, 0.0, Usage(), PRICES)
    baseline = "v1" if champion is not None else "base"
    return build_report(
        cfg,
        start,
        urls={},
        cost=cost,
        usage=Usage(completion_tokens=1000),
        previous=previous,
        baseline=baseline,
        baseline_metric=champion if champion is not None else 0.25,
        **_stages(candidate, champion, promote),
    )


def test_intelligence_per_dollar_is_gain_on_the_same_instances_over_cost_and_cumulates(cfg):
    first = _report(cfg, [], candidate=0.5, champion=None, promote=True, cost_usd=2.0)
    assert first.gain == pytest.approx(25.0) and first.baseline == "base"  # over the base, not over 0
    assert first.intelligence_per_dollar == first.gain / first.cost_usd
    assert first.scores[0].baselines == {"base": 0.25} and first.scores[0].champion_after == 0.5
    second = _report(cfg, [first], candidate=0.4, champion=0.5, promote=False, cost_usd=1.0)
    assert second.gain == 0.0 and second.scores[0].champion_after == 0.5 and second.cycle == 2
    assert second.scores[0].baselines == {"base": 0.25}  # carried: same instances (same eval set sha256)
    assert second.cumulative_cost_usd == first.cost_usd + second.cost_usd
    assert second.cumulative_intelligence_per_dollar == pytest.approx(25.0 / 3.0)


def test_every_evaluated_split_gets_its_own_score_the_deciding_one_first(cfg):
    first = _report(cfg, [], candidate=0.5, champion=None, promote=True, cost_usd=2.0)
    assert [(s.split, s.role, s.instances) for s in first.scores] == [
        ("indomain", "in-domain held-out bugs", 12),
        ("holdout", "unseen-project guard", 10),
    ]
    assert (first.scores[1].candidate, first.scores[1].champion, first.scores[1].champion_after) == (0.1, None, 0.1)
    second = _report(cfg, [first], candidate=0.25, champion=0.5, promote=False, cost_usd=1.0)
    guard = second.scores[1]
    assert (guard.candidate, guard.champion, guard.champion_after) == (0.1, 0.2, 0.2)  # rejected: the champion stays
    assert guard.interval == wilson(0.2, 10) and guard.baselines == {}
