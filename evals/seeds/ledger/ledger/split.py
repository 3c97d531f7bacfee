"""Splitting amounts into parts without losing or inventing a cent."""


def split_evenly(total, parts):
    """Split ``total`` cents into ``parts`` near-equal integer amounts.

    The leftover cents go one each to the first parts, so earlier parts are
    never smaller (in absolute value) than later ones. Negative totals are
    split the same way with every amount negated.
    """
    if parts <= 0:
        raise ValueError("parts must be positive")
    base, extra = divmod(abs(total), parts)
    sign = -1 if total < 0 else 1
    return [sign * (base + 1 if i < extra else base) for i in range(parts)]


def allocate(total, ratios):
    """Allocate ``total`` cents (>= 0) proportionally to integer ``ratios``.

    Each share first gets the floor of its exact proportion; leftover cents
    go one each to the shares with the largest remainders, earlier shares
    winning ties (largest remainder method). The shares sum to ``total``.
    """
    if total < 0:
        raise ValueError("total must not be negative")
    weight = sum(ratios)
    if weight <= 0 or any(r < 0 for r in ratios):
        raise ValueError("ratios must be non-negative with a positive sum")
    shares = []
    remainders = []
    for index, ratio in enumerate(ratios):
        share, remainder = divmod(total * ratio, weight)
        shares.append(share)
        remainders.append((-remainder, index))
    leftover = total - sum(shares)
    for _, index in sorted(remainders)[:leftover]:
        shares[index] += 1
    return shares


def cash_round(cents, increment=5):
    """Round to the nearest multiple of ``increment`` cents, halves away from zero.

    Used for cash payments where the smallest coin is worth ``increment``.
    """
    if increment <= 0:
        raise ValueError("increment must be positive")
    q, r = divmod(abs(cents), increment)
    if 2 * r >= increment:
        q += 1
    rounded = q * increment
    return rounded if cents >= 0 else -rounded
