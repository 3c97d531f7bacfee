"""The review page says what the paired test could detect at the churn it measured, and names the test it ran."""

from __future__ import annotations

from models.promote import decide
from models.review import ReviewContext, review_markdown
from models.scores import Evaluation, InstanceOutcome, SplitScores
from postgame.config import Config

CONTEXT = ReviewContext("run", "sft", 32, "1", ("snap",), "d" * 64, 30.0, {}, None, None)


def _evaluation(cand: SplitScores, champ: SplitScores) -> Evaluation:
    return Evaluation("indomain", {"indomain": cand}, {"indomain": champ}, "1", 1.0)


def _pair(counts: list[tuple[int, int]], k: int) -> tuple[SplitScores, SplitScores]:
    def side(j: int) -> SplitScores:
        outcomes = tuple(
            InstanceOutcome(f"i{n}", "p", 2 * c[j] >= k, attempts=k, solved=c[j] if k > 1 else None)
            for n, c in enumerate(counts)
        )
        return SplitScores("indomain", "key", outcomes)

    return side(0), side(1)


def test_one_answer_each_states_the_detectable_gain_with_and_without_churn():
    cfg = Config()
    cand, champ = _pair([(1, 0)] * 8 + [(0, 1)] * 3 + [(1, 1)] * 6 + [(0, 0)] * 39, 1)
    decision = decide({"indomain": cand}, {"indomain": champ}, cfg.promote, split="indomain")
    page = review_markdown(cfg, "2", decision, _evaluation(cand, champ), CONTEXT)
    assert "exact McNemar (one-sided, α = 0.05): 8 instances only the candidate resolves, 3 only the champion" in page
    assert "detects a gain of 12.0 points with 80% power when nothing regresses" in page
    assert "and 19.0 points at the churn measured here (the candidate loses 3 of the 56 instances" in page


def test_k_answers_each_name_the_sign_flip_test_and_count_answers():
    cfg = Config.model_validate({"promote": {"samples": 4}})
    cand, champ = _pair([(4, 1)] * 5 + [(1, 2)] * 3 + [(0, 0)] * 48, 4)
    decision = decide({"indomain": cand}, {"indomain": champ}, cfg.promote, split="indomain")
    page = review_markdown(cfg, "2", decision, _evaluation(cand, champ), CONTEXT)
    assert "exact sign-flip test on 4 answers per instance (one-sided, α = 0.05): 5 instances the candidate" in page
    assert "(23/224 answers)" in page and f"{decision.detectable * 100:.1f} points at the churn measured" in page
