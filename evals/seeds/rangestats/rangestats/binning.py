"""Histogram binning and moving averages."""

from .central import StatisticsError, require_data


def bin_edges(lo, hi, bins):
    """Return ``bins + 1`` equally spaced edges from ``lo`` to ``hi``."""
    if bins < 1:
        raise ValueError("need at least one bin")
    if hi <= lo:
        raise ValueError("hi must be greater than lo")
    width = (hi - lo) / bins
    edges = [lo + i * width for i in range(bins)]
    edges.append(hi)
    return edges


def bin_index(value, lo, hi, bins):
    """Index of the bin holding ``value``, or None if it is out of range.

    Bins are half-open ``[left, right)`` except the last, which also
    includes ``hi``.
    """
    if value < lo or value > hi:
        return None
    if value == hi:
        return bins - 1
    width = (hi - lo) / bins
    return min(int((value - lo) / width), bins - 1)


def histogram(data, bins=10, lo=None, hi=None):
    """Count values per bin; return ``(counts, edges)``.

    ``lo``/``hi`` default to the data's min/max. Values outside ``[lo, hi]``
    are ignored. If all values are equal (and no range is given) the single
    range ``[x - 0.5, x + 0.5]`` is used.
    """
    values = require_data(data)
    if lo is None:
        lo = min(values)
    if hi is None:
        hi = max(values)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    edges = bin_edges(lo, hi, bins)
    counts = [0] * bins
    for x in values:
        idx = bin_index(x, lo, hi, bins)
        if idx is not None:
            counts[idx] += 1
    return counts, edges


def moving_average(data, window):
    """Simple moving average over a sliding ``window``.

    Returns ``len(data) - window + 1`` averages; the first is the mean of
    ``data[0:window]``.
    """
    values = list(data)
    if window < 1:
        raise ValueError("window must be at least 1")
    if window > len(values):
        raise StatisticsError("window larger than data")
    total = sum(values[:window])
    result = [total / window]
    for i in range(window, len(values)):
        total += values[i] - values[i - window]
        result.append(total / window)
    return result


def exponential_moving_average(data, alpha):
    """Exponential moving average with smoothing factor ``0 < alpha <= 1``.

    ``ema[0] = data[0]`` and ``ema[i] = alpha * data[i] + (1 - alpha) * ema[i-1]``.
    """
    if not 0 < alpha <= 1:
        raise ValueError("alpha must be in (0, 1]")
    values = list(data)
    result = []
    for i, x in enumerate(values):
        if i == 0:
            result.append(x)
        else:
            result.append(alpha * x + (1 - alpha) * result[i - 1])
    return result
