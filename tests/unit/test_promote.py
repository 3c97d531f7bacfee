"""Promotion is a pure decision: every branch of `decide`, with the reason it gives."""

from __future__ import annotations

import pytest

from models.evaluate import Scores
from models.promote import decide
from postgame.config import PromoteSettings

POLICY = PromoteSettings(min_improvement=0.05, max_error_rate=0.2)


@pytest.mark.parametrize(
    ("candidate", "champion", "promote", "reason"),
    [
        (Scores(0.0, 10), None, True, "no champion yet"),
        (Scores(0.5, 10), Scores(0.4, 10), True, "beats champion"),
        (Scores(0.44, 10), Scores(0.4, 10), False, "does not beat"),  # within the margin
        (Scores(0.45, 10), Scores(0.4, 10), False, "does not beat"),  # exactly the margin is not more
        (Scores(0.3, 10), Scores(0.4, 10), False, "does not beat"),
        (Scores(0.9, 10, errors=3), Scores(0.1, 10), False, "error rate 0.30"),
        (Scores(0.9, 10, errors=3), None, False, "error rate 0.30"),  # even the first model must be measurable
        (Scores(0.9, 10, errors=2), Scores(0.1, 10), True, "beats champion"),  # 0.2 is allowed
        (Scores(0.0, 0), None, False, "no instance"),
    ],
)
def test_decide(candidate, champion, promote, reason):
    decision = decide(candidate, champion, POLICY)
    assert decision.promote is promote
    assert reason in decision.reason
    assert decision.candidate == candidate.metric
    assert decision.as_tags()["promotion.decision"] == ("promoted" if promote else "rejected")


def test_zero_margin_policy_promotes_any_strict_improvement():
    policy = PromoteSettings(min_improvement=0.0)
    assert decide(Scores(0.11, 10), Scores(0.1, 10), policy).promote
    assert not decide(Scores(0.1, 10), Scores(0.1, 10), policy).promote
