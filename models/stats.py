"""The statistics of the promotion gate, pure: Wilson intervals, the exact McNemar test, and its power.

    wilson(8, 20)                          # (0.219, 0.613): 95% interval of a resolve rate
    mcnemar_exact(wins=10, losses=2)       # 0.0386 two-sided; sided="one" -> 0.0193
    detectable_effect(60, alpha=0.05)      # 0.11: gain detected with 80% power when nothing breaks

McNemar compares two models on the same instances: only the discordant pairs count (`wins`: the candidate resolves an
instance the champion does not; `losses`: the reverse). Under H0 a discordant pair is a fair coin, so the exact test is
a binomial test on wins out of wins + losses.
"""

from __future__ import annotations

import math
from functools import lru_cache


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _upper_tail(k: int, m: int) -> float:
    """P(X >= k) for X ~ Binomial(m, 1/2), exactly."""
    return sum(math.comb(m, i) for i in range(k, m + 1)) / 2**m


def mcnemar_exact(wins: int, losses: int, *, sided: str = "two") -> float:
    """The exact McNemar p-value. sided="one": H1 is that the candidate is better (wins > losses); "two": they differ.

    The two-sided value is twice the smaller tail, capped at 1 (as in statsmodels' `mcnemar(exact=True)`)."""
    if wins < 0 or losses < 0:
        raise ValueError(f"wins = {wins}, losses = {losses}: counts must be >= 0")
    m = wins + losses
    if m == 0:
        return 1.0
    if sided == "one":
        return _upper_tail(wins, m)
    if sided != "two":
        raise ValueError(f"sided = {sided!r}: allowed 'one', 'two'")
    return min(1.0, 2 * _upper_tail(max(wins, losses), m))


@lru_cache(maxsize=4096)
def _critical_wins(m: int, alpha: float, sided: str) -> int:
    """The fewest wins out of m discordant pairs that the test calls significant (m + 1 when none does)."""
    for wins in range(m + 1):
        if wins * 2 > m and mcnemar_exact(wins, m - wins, sided=sided) <= alpha:
            return wins
    return m + 1


def power(n: int, gain: float, *, loss_rate: float = 0.0, alpha: float = 0.05, sided: str = "one") -> float:
    """Chance that the gate's test rejects H0 on n paired instances when the candidate solves a `gain + loss_rate`
    share the champion does not and loses a `loss_rate` share the champion solves (exact sum over outcomes)."""
    p_win, p_loss = gain + loss_rate, loss_rate
    p_disc = p_win + p_loss
    if p_disc <= 0:
        return 0.0
    if p_disc > 1:
        raise ValueError(f"gain {gain} + 2 x loss_rate {loss_rate} exceeds 1")
    share = p_win / p_disc
    total = 0.0
    for m in range(n + 1):
        p_m = math.comb(n, m) * p_disc**m * (1 - p_disc) ** (n - m)
        need = _critical_wins(m, alpha, sided)
        total += p_m * sum(math.comb(m, w) * share**w * (1 - share) ** (m - w) for w in range(need, m + 1))
    return total


def detectable_effect(
    n: int, *, alpha: float = 0.05, sided: str = "one", loss_rate: float = 0.0, target: float = 0.8
) -> float | None:
    """The smallest gain (resolve-rate points, step 0.005) the test detects with `target` power on n instances."""
    gain = 0.005
    while gain + 2 * loss_rate <= 1:  # checked before each power(): a gain past 1 is no share of instances
        if power(n, gain, loss_rate=loss_rate, alpha=alpha, sided=sided) >= target:
            return gain
        gain = round(gain + 0.005, 3)
    return None
