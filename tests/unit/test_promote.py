"""Promotion is a pure decision: every check of `decide`, with literal figures, and the statistics it rests on."""

from __future__ import annotations

from dataclasses import replace

import pytest

from models.evaluate import InstanceOutcome, SplitScores, stratified
from models.promote import decide
from models.stats import (
    churn_spread,
    detectable_effect,
    detectable_gain,
    mcnemar_exact,
    paired_power,
    power,
    sign_flip_exact,
    simulated_power,
    wilson,
)
from postgame.settings.promote import PromoteSettings

POLICY = PromoteSettings()  # alpha 0.05 one-sided, margin 0, guards eval/holdout 0.05, p2p +0.02, errors 0.2


def paired(
    split: str,
    *,
    wins: int = 0,
    losses: int = 0,
    both: int = 0,
    neither: int = 0,
    cand_p2p: int = 0,
    champ_p2p: int = 0,
    cand_errors: int = 0,
) -> tuple[SplitScores, SplitScores]:
    """Candidate and champion on the same instances with fixed per-instance outcomes, in this order:
    wins (only the candidate resolves), losses (only the champion), both, neither; the first `cand_errors` of the
    `neither` instances are the candidate's infrastructure errors; p2p breakage on the last instances."""
    pattern = [(True, False)] * wins + [(False, True)] * losses + [(True, True)] * both + [(False, False)] * neither
    n = len(pattern)
    first_neither = wins + losses + both
    cand, champ = [], []
    for i, (a, b) in enumerate(pattern):
        iid = f"{split}-{i:03d}"
        error = first_neither <= i < first_neither + cand_errors
        cand.append(InstanceOutcome(iid, f"p{i % 3}", a, error=error, p2p_broken=i >= n - cand_p2p))
        champ.append(InstanceOutcome(iid, f"p{i % 3}", b, p2p_broken=i >= n - champ_p2p))
    return SplitScores(split, "k", tuple(cand)), SplitScores(split, "k", tuple(champ))


def world(decide_pair, **guards):
    cand = {"indomain": decide_pair[0], **{k: v[0] for k, v in guards.items()}}
    champ = {"indomain": decide_pair[1], **{k: v[1] for k, v in guards.items()}}
    return cand, champ


FLAT_GUARDS = {"eval": paired("eval", both=5, neither=25), "holdout": paired("holdout", both=3, neither=27)}

# (case, decision inputs, policy overrides, promote, failed checks, delta, p-value)
CASES = [
    ("significant gain", dict(wins=8, both=10, neither=42), {}, True, [], 8 / 60, 1 / 256),
    ("worse", dict(losses=6, both=10, neither=44), {}, False, ["margin", "significance"], -6 / 60, 1.0),
    (
        "better but too few to tell",
        dict(wins=4, losses=1, both=10, neither=45),
        {},
        False,
        ["significance"],
        3 / 60,
        6 / 32,
    ),
    (
        "significant, margin not met",
        dict(wins=8, both=10, neither=42),
        {"min_improvement": 0.15},
        False,
        ["margin"],
        8 / 60,
        1 / 256,
    ),
    (
        "exactly the margin is not more",
        dict(wins=6, both=10, neither=44),
        {"min_improvement": 0.1},
        False,
        ["margin"],
        0.1,
        1 / 64,
    ),
    ("one-sided 5-0 passes", dict(wins=5, neither=55), {}, True, [], 5 / 60, 1 / 32),
    ("two-sided 5-0 does not", dict(wins=5, neither=55), {"sided": "two"}, False, ["significance"], 5 / 60, 1 / 16),
    ("10 wins 2 losses", dict(wins=10, losses=2, neither=48), {"sided": "two"}, True, [], 8 / 60, 0.03857421875),
    ("p2p breakage grows", dict(wins=8, both=10, neither=42, cand_p2p=3), {}, False, ["p2p"], 8 / 60, 1 / 256),
    ("p2p within tolerance", dict(wins=8, both=10, neither=42, cand_p2p=2), {}, True, [], 8 / 60, 1 / 256),
    (
        "infra errors above the cap",
        dict(wins=8, both=10, neither=42, cand_errors=13),
        {},
        False,
        ["errors:indomain"],
        8 / 47,
        1 / 256,
    ),
    ("infra errors at the cap", dict(wins=8, both=10, neither=42, cand_errors=12), {}, True, [], 8 / 48, 1 / 256),
]


@pytest.mark.parametrize(
    ("case", "counts", "overrides", "promote", "failed", "delta", "p_value"), CASES, ids=[c[0] for c in CASES]
)
def test_decide_table(case, counts, overrides, promote, failed, delta, p_value):
    cand, champ = world(paired("indomain", **counts), **FLAT_GUARDS)
    decision = decide(cand, champ, POLICY.model_copy(update=overrides), split="indomain")
    assert decision.promote is promote, decision.reason
    assert decision.failed == failed
    assert decision.delta == pytest.approx(delta)
    assert decision.p_value == pytest.approx(p_value)
    assert decision.n == 60 and decision.split == "indomain"
    assert decision.as_tags()["promotion.decision"] == ("promoted" if promote else "rejected")
    assert decision.as_tags()["promotion.failed_checks"] == (",".join(failed) or "none")
    if not promote:
        assert all(c.detail in decision.reason for c in decision.checks if not c.passed)


def test_guard_regression_beyond_tolerance_rejects_a_significant_gain():
    eval_drop = paired("eval", losses=4, both=5, neither=21)  # 9/30 -> 5/30: a drop of 0.133 > 0.05
    cand, champ = world(paired("indomain", wins=8, both=10, neither=42), eval=eval_drop, holdout=FLAT_GUARDS["holdout"])
    decision = decide(cand, champ, POLICY, split="indomain")
    assert not decision.promote and decision.failed == ["guard:eval"]
    assert "guard eval: resolve rate 0.167 vs champion 0.300" in decision.reason
    within = paired("eval", wins=1, losses=2, both=5, neither=22)  # drop of 1/30 = 0.033 <= 0.05
    cand, champ = world(paired("indomain", wins=8, both=10, neither=42), eval=within, holdout=FLAT_GUARDS["holdout"])
    assert decide(cand, champ, POLICY, split="indomain").promote


def test_a_guard_the_champion_scores_nothing_on_says_it_is_uninformative():
    blank = paired("eval", neither=30)  # both 0/30: no drop is possible, so the guard can never fire
    cand, champ = world(paired("indomain", wins=8, both=10, neither=42), eval=blank, holdout=FLAT_GUARDS["holdout"])
    checks = {c.name: c for c in decide(cand, champ, POLICY, split="indomain").checks}
    assert (
        checks["guard:eval"].passed and "uninformative: the champion resolves 0.0% here" in checks["guard:eval"].detail
    )
    assert "uninformative" not in checks["guard:holdout"].detail  # 3/30 = 10% > the 5% tolerance: it can fire


def test_champion_errors_make_the_comparison_untrusted():
    cand, champ = world(paired("indomain", wins=8, both=10, neither=42))
    broken = SplitScores(
        "indomain",
        "k",
        tuple(
            InstanceOutcome(o.instance_id, o.project, False, error=i < 20)
            for i, o in enumerate(champ["indomain"].outcomes)
        ),
    )
    decision = decide(cand, {"indomain": broken}, POLICY, split="indomain")
    assert not decision.promote and decision.failed[0] == "errors:indomain:champion"


def test_different_instances_are_not_comparable():
    cand, _ = world(paired("indomain", wins=8, both=10, neither=42))
    _, other = world(paired("indomain", wins=8, both=10, neither=43))
    decision = decide(cand, other, POLICY, split="indomain")
    assert not decision.promote and "comparable" in decision.failed


def test_cost_ceiling():
    cand, champ = world(paired("indomain", wins=8, both=10, neither=42))
    policy = POLICY.model_copy(update={"max_cost_usd": 1.0})
    assert decide(cand, champ, policy, split="indomain", cost_usd=1.0).promote
    over = decide(cand, champ, policy, split="indomain", cost_usd=1.5)
    assert not over.promote and over.failed == ["cost"] and "$1.5000 > promote.max_cost_usd $1.0000" in over.reason


@pytest.mark.parametrize(
    ("resolved", "floor", "promote"), [(0, 0.0, False), (1, 0.0, True), (6, 0.1, False), (7, 0.1, True)]
)
def test_floor_without_a_champion(resolved, floor, promote):
    cand = SplitScores("indomain", "k", tuple(InstanceOutcome(f"i{i}", "p", i < resolved) for i in range(60)))
    decision = decide({"indomain": cand}, None, POLICY.model_copy(update={"floor": floor}), split="indomain")
    assert decision.promote is promote and decision.champion is None and decision.p_value is None
    assert decision.failed == ([] if promote else ["floor"])


def test_nothing_graded_is_never_promoted():
    decision = decide({"indomain": SplitScores("indomain", "k", ())}, None, POLICY, split="indomain")
    assert not decision.promote and decision.failed == ["measured"]


@pytest.mark.parametrize(
    ("wins", "losses", "sided", "p"),
    [
        (10, 2, "two", 0.03857421875),  # 2 * (1 + 12 + 66) / 4096
        (12, 3, "two", 0.03515625),  # 2 * (1 + 15 + 105 + 455) / 32768
        (6, 0, "two", 0.03125),
        (6, 0, "one", 0.015625),
        (5, 0, "two", 0.0625),
        (4, 1, "one", 0.1875),
        (5, 5, "two", 1.0),
        (0, 0, "one", 1.0),
        (0, 6, "one", 1.0),
        (2, 10, "two", 0.03857421875),
    ],
)
def test_mcnemar_exact_known_values(wins, losses, sided, p):
    from scipy.stats import binomtest

    assert mcnemar_exact(wins, losses, sided=sided) == pytest.approx(p, abs=1e-12)
    if wins + losses:
        alternative = "greater" if sided == "one" else "two-sided"
        assert mcnemar_exact(wins, losses, sided=sided) == pytest.approx(
            binomtest(wins, wins + losses, 0.5, alternative=alternative).pvalue, abs=1e-12
        )


def test_wilson_and_power_known_values():
    assert wilson(8, 20) == pytest.approx((0.218807, 0.613418), abs=1e-6)  # statsmodels proportion_confint wilson
    assert wilson(0, 10)[0] == 0.0 and wilson(0, 0) == (0.0, 1.0)
    # What the defaults can detect (the settings docstring and docs/promotion.md quote these): n = 60, alpha 0.05 one-sided.
    assert detectable_effect(60) == pytest.approx(0.11)
    assert detectable_effect(60, loss_rate=0.02) == pytest.approx(0.145)
    # Two instances: no outcome is significant, so no gain is detectable (it raised ValueError at gain 1.005 and
    # crashed `postgame promote` on small worlds).
    assert detectable_effect(2) is None and detectable_effect(2, loss_rate=0.25) is None
    assert power(60, 0.0) == 0.0 and power(60, 0.5) > 0.999


def test_stratified_draw_takes_projects_in_turn_and_is_seeded():
    records = [{"instance_id": f"{p}-{i}", "repo": p} for p in ("a", "b", "c") for i in range(10 if p == "a" else 3)]
    chosen = stratified(records, 9, seed=0, split="indomain")
    assert sorted(r["repo"] for r in chosen) == ["a", "a", "a", "b", "b", "b", "c", "c", "c"]
    assert chosen == stratified(list(reversed(records)), 9, seed=0, split="indomain")  # order does not matter
    assert chosen != stratified(records, 9, seed=1, split="indomain")
    assert len(stratified(records, 100, seed=0, split="indomain")) == 16


@pytest.mark.parametrize("wins,losses,ties", [(8, 3, 45), (0, 0, 10), (5, 0, 55), (3, 9, 20), (12, 2, 0)])
@pytest.mark.parametrize("sided", ["one", "two"])
def test_the_sign_flip_test_on_one_attempt_each_is_the_exact_mcnemar_test(wins, losses, ties, sided):
    diffs = [1] * wins + [-1] * losses + [0] * ties
    assert sign_flip_exact(diffs, sided=sided) == pytest.approx(mcnemar_exact(wins, losses, sided=sided), abs=1e-12)


def test_the_sign_flip_test_counts_every_sign_pattern():
    import itertools

    diffs = [3, -1, 2, 0, 4, -2, 1]
    nonzero = [d for d in diffs if d]
    sums = [sum(s * abs(d) for s, d in zip(signs, nonzero)) for signs in itertools.product((1, -1), repeat=6)]
    observed = sum(diffs)
    assert sign_flip_exact(diffs) == pytest.approx(sum(s >= observed for s in sums) / 64, abs=1e-12)
    lower = sum(s <= observed for s in sums) / 64
    assert sign_flip_exact(diffs, sided="two") == pytest.approx(
        min(1, 2 * min(lower, sum(s >= observed for s in sums) / 64))
    )
    assert sign_flip_exact([]) == 1.0 and sign_flip_exact([0, 0]) == 1.0
    with pytest.raises(ValueError, match="sided"):
        sign_flip_exact([1], sided="both")


@pytest.mark.parametrize("k,p_win,p_loss", [(4, 0.22, 0.04), (4, 0.25, 0.05), (8, 0.20, 0.05), (2, 0.28, 0.05)])
def test_the_power_figure_matches_a_simulation_of_the_exact_test_at_that_churn(k, p_win, p_loss):
    """The gate prints the gain `paired_power` reaches 80% at; around there the exact sign-flip test, run on simulated
    instances with the same gain and churn, rejects about as often (at low power the normal approximation runs up to
    0.08 high: few instances differ, and the exact test is discrete)."""
    simulated, gain, spread = simulated_power(56, k, p_win, p_loss, runs=800, seed=1)
    assert 0.65 < simulated < 0.95
    assert paired_power(56, gain, spread) == pytest.approx(simulated, abs=0.05)


def test_the_detectable_gain_is_where_the_power_reaches_80_percent():
    diffs = [4] * 3 + [2] * 5 + [-2] * 4 + [-1] * 3 + [0] * 41  # K = 4: a measured churn
    gain = detectable_gain(diffs, k=4)
    assert gain is not None and paired_power(56, gain, churn_spread(diffs, 4)) == pytest.approx(0.8, abs=1e-9)
    # less churn, a smaller detectable gain; one attempt each with the same outcomes spreads more
    assert detectable_gain([4] * 3 + [0] * 53, k=4) < gain
    assert detectable_gain([0] * 10, k=4) is None and detectable_gain([], k=4) is None


def test_the_gate_states_what_it_can_detect_at_the_churn_it_measured():
    """`cycle --json`, the tags and the review page carry the gain the test detects with 80% power at the measured
    churn (the candidate's losses); that figure is the exact McNemar power, which a simulation of the test matches."""
    import random

    cand, champ = world(paired("indomain", wins=8, losses=3, both=6, neither=39), **FLAT_GUARDS)
    decision = decide(cand, champ, POLICY, split="indomain")
    assert decision.detectable == detectable_effect(56, loss_rate=3 / 56)
    assert decision.to_dict()["detectable"] == decision.detectable
    assert float(decision.as_tags()["promotion.detectable"]) == pytest.approx(decision.detectable)
    gain, loss_rate = decision.detectable, 3 / 56
    rng, runs, hits = random.Random(0), 3000, 0
    for _ in range(runs):  # the paired test on simulated instances at that gain and churn
        draws = [rng.random() for _ in range(56)]
        wins = sum(u < gain + loss_rate for u in draws)
        losses = sum(gain + loss_rate <= u < gain + 2 * loss_rate for u in draws)
        hits += mcnemar_exact(wins, losses, sided="one") <= 0.05
    assert power(56, gain, loss_rate=loss_rate) >= 0.8
    assert hits / runs == pytest.approx(power(56, gain, loss_rate=loss_rate), abs=0.03)


def sampled(split: str, counts: list[tuple[int, int]], k: int) -> tuple[SplitScores, SplitScores]:
    """Candidate and champion with k attempts per instance: (candidate solved, champion solved) per instance."""
    cand = tuple(
        InstanceOutcome(f"{split}-{i:03d}", f"p{i % 3}", 2 * a >= k, attempts=k, solved=a)
        for i, (a, _) in enumerate(counts)
    )
    champ = tuple(
        InstanceOutcome(f"{split}-{i:03d}", f"p{i % 3}", 2 * b >= k, attempts=k, solved=b)
        for i, (_, b) in enumerate(counts)
    )
    return SplitScores(split, "k", cand), SplitScores(split, "k", champ)


def test_k_attempts_each_are_decided_by_the_sign_flip_test_on_the_counts():
    """Four attempts per instance: partial wins count. The same instances as one answer each would be 7 wins and 3
    losses (p = 0.17, kept); the counts show the candidate ahead on most of them, and the sign-flip test sees it."""
    counts = [(4, 1)] * 5 + [(3, 1)] * 2 + [(1, 2)] * 3 + [(4, 4)] * 6 + [(0, 0)] * 40
    cand, champ = world(sampled("indomain", counts, 4), **FLAT_GUARDS)
    decision = decide(cand, champ, POLICY, split="indomain")
    diffs = [a - b for a, b in counts]
    assert decision.promote and decision.wins == 7 and decision.losses == 3
    assert decision.p_value == sign_flip_exact(diffs) and decision.p_value < 0.05
    assert decision.delta == pytest.approx(sum(diffs) / (4 * 56))
    assert decision.detectable == detectable_gain(diffs, k=4)
    assert any("sign-flip test (one-sided) on 56 paired instances x 4 attempts" in c.detail for c in decision.checks)
    assert mcnemar_exact(7, 3) > 0.05  # what one answer each could not tell
    assert cand["indomain"].rate == pytest.approx(sum(a for a, _ in counts) / (4 * 56))
    # different attempt counts on the two sides are not comparable
    other = SplitScores("indomain", "k", tuple(replace(o, attempts=2) for o in champ["indomain"].outcomes))
    refused = decide(cand, {**champ, "indomain": other}, POLICY, split="indomain")
    assert not refused.promote and "comparable" in refused.failed


def test_rounds_of_answers_become_one_outcome_per_instance():
    from models.evaluate import attempts_of

    rounds = [
        {"a": InstanceOutcome("a", "p", True, turns=3), "b": InstanceOutcome("b", "p", False, p2p_broken=True)},
        {"a": InstanceOutcome("a", "p", False, turns=6), "b": InstanceOutcome("b", "p", False)},
        {"a": InstanceOutcome("a", "p", True, turns=6), "b": InstanceOutcome("b", "p", False, error=True)},
    ]
    a, b = attempts_of(rounds)
    assert (a.attempts, a.solved, a.resolved, a.score, a.error) == (3, 2, True, pytest.approx(2 / 3), False)
    assert a.turns == 5  # an agent's K episodes: their mean turns
    assert b.error and not b.resolved and b.broke == 1  # an infrastructure error in any round: left out of the test
