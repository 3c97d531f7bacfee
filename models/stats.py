"""The statistics of the promotion gate, pure: Wilson intervals, the exact McNemar test, and its power.

    wilson(8, 20)                          # (0.219, 0.613): 95% interval of a resolve rate
    mcnemar_exact(wins=10, losses=2)       # 0.0386 two-sided; sided="one" -> 0.0193
    detectable_effect(60, alpha=0.05)      # 0.11: gain detected with 80% power when nothing breaks
    sign_flip_exact([2, -1, 0, 4], sided="one")    # paired test on per-instance differences (in 1/K units)
    detectable_gain([2, -1, 0, 4], k=4)    # the gain detectable with 80% power at the measured churn

McNemar compares two models on the same instances: only the discordant pairs count (`wins`: the candidate resolves an
instance the champion does not; `losses`: the reverse). Under H0 a discordant pair is a fair coin, so the exact test is
a binomial test on wins out of wins + losses.

With K attempts per instance and side (the gate's `promote.samples`), an instance's outcome is how many of its K
attempts resolved, and the paired test is the exact sign-flip (permutation) test on the per-instance differences
d_i = candidate solved - champion solved: under H0 the two sides are exchangeable on each instance, so every sign
pattern of the d_i is equally likely, and the p-value is the share of the 2^n patterns whose sum reaches the observed
one (counted exactly over the integer sums). With K = 1 it *is* the exact McNemar test (d_i in {-1, 0, 1}). Its
power at a gain g, for the churn measured (the per-instance spread of d around its mean, losses included), is the
paired test's normal approximation: it rejects when the mean difference exceeds z_(1-alpha) * s / sqrt(n), with s the
standard deviation of d; `simulated_power` checks that figure by running the exact test on simulated instances.
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


def sign_flip_exact(diffs: list[int], *, sided: str = "one") -> float:
    """The exact paired sign-flip p-value of integer per-instance differences (candidate minus champion, in units of
    one attempt). sided="one": H1 is that the candidate is better; "two": they differ (twice the smaller tail, capped
    at 1, as `mcnemar_exact`). Equals `mcnemar_exact(wins, losses)` when every difference is -1, 0 or 1."""
    if sided not in ("one", "two"):
        raise ValueError(f"sided = {sided!r}: allowed 'one', 'two'")
    magnitudes = [abs(int(d)) for d in diffs if d]
    observed = sum(int(d) for d in diffs)
    if not magnitudes:
        return 1.0
    total = sum(magnitudes)
    # counts[s + total] = how many sign patterns sum to s (exact integers: 2^n stays exact in Python ints)
    counts = [0] * (2 * total + 1)
    counts[total] = 1
    reach = 0
    for m in magnitudes:
        nxt = [0] * (2 * total + 1)
        for s in range(total - reach, total + reach + 1):
            c = counts[s]
            if c:
                nxt[s + m] += c
                nxt[s - m] += c
        counts, reach = nxt, reach + m
    patterns = 2 ** len(magnitudes)
    upper = sum(counts[observed + total :]) / patterns
    if sided == "one":
        return upper
    lower = sum(counts[: observed + total + 1]) / patterns
    return min(1.0, 2 * min(upper, lower))


def _z(q: float) -> float:
    """The standard normal quantile."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(q)


def paired_power(n: int, gain: float, spread: float, *, alpha: float = 0.05, sided: str = "one") -> float:
    """Power of the paired test on n instances when the mean per-instance difference (in resolve-rate units) is
    `gain` and its standard deviation `spread` (normal approximation; `simulated_power` checks it)."""
    if n <= 0 or spread <= 0:
        return 1.0 if gain > 0 and n > 0 else 0.0
    from statistics import NormalDist

    crit = _z(1 - (alpha if sided == "one" else alpha / 2))
    return 1 - NormalDist().cdf(crit - gain * math.sqrt(n) / spread)


def churn_spread(diffs: list[int], k: int) -> float:
    """The per-instance standard deviation of the differences, in resolve-rate units, as the power figure uses it:
    the root mean square of d_i / k around 0, which counts every loss and win as spread (under H0 the mean is 0)."""
    if not diffs:
        return 0.0
    return math.sqrt(sum((d / k) ** 2 for d in diffs) / len(diffs))


def detectable_gain(
    diffs: list[int], *, k: int = 1, alpha: float = 0.05, sided: str = "one", target: float = 0.8
) -> float | None:
    """The gain (resolve-rate points) the paired test detects with `target` power on as many instances as `diffs`,
    at the churn these differences show (`churn_spread`); None when there are no instances or no spread measured."""
    n, spread = len(diffs), churn_spread(diffs, k)
    if n == 0 or spread == 0:
        return None
    crit = _z(1 - (alpha if sided == "one" else alpha / 2))
    return (crit + _z(target)) * spread / math.sqrt(n)


def simulated_power(
    n: int, k: int, p_win: float, p_loss: float, *, alpha: float = 0.05, runs: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """(power, mean gain, spread) of the exact sign-flip test, by simulation: each of n instances favours the
    candidate (share p_win: its attempts resolve with probability 0.8, the champion's 0.1), the champion (p_loss:
    the reverse: the churn) or neither (a tie), and each side makes k attempts. The mean gain and the spread
    (`churn_spread`) are those of the simulated differences: `paired_power(n, gain, spread)` should match the power."""
    import random

    rng = random.Random(seed)
    hits, total, square = 0, 0.0, 0.0
    for _ in range(runs):
        diffs = []
        for _ in range(n):
            u = rng.random()
            a = b = 0
            if u < p_win:  # the candidate solves it on most attempts, the champion rarely
                a = sum(rng.random() < 0.8 for _ in range(k))
                b = sum(rng.random() < 0.1 for _ in range(k))
            elif u < p_win + p_loss:
                a = sum(rng.random() < 0.1 for _ in range(k))
                b = sum(rng.random() < 0.8 for _ in range(k))
            diffs.append(a - b)
        hits += sign_flip_exact(diffs) <= alpha
        total += sum(diffs) / (k * n)
        square += sum((d / k) ** 2 for d in diffs) / n
    return hits / runs, total / runs, math.sqrt(square / runs)
