"""Percentiles with linear interpolation."""

from .central import StatisticsError, require_data


def percentile(data, p):
    """The ``p``-th percentile (0 <= p <= 100) with linear interpolation.

    The sorted values sit at ranks ``0 .. n-1``; percentile ``p`` sits at rank
    ``p / 100 * (n - 1)`` and is interpolated between its two neighbours
    (the same as NumPy's default "linear" method).
    """
    if p < 0 or p > 100:
        raise ValueError("percentile must be between 0 and 100")
    values = sorted(require_data(data))
    rank = p / 100 * (len(values) - 1)
    lower = int(rank)
    upper = min(lower + 1, len(values) - 1)
    fraction = rank - lower
    return values[lower] + (values[upper] - values[lower]) * fraction


def quartiles(data):
    """Return ``(Q1, Q2, Q3)``: the 25th, 50th and 75th percentiles."""
    values = require_data(data)
    return (percentile(values, 25), percentile(values, 50), percentile(values, 75))


def iqr(data):
    """Interquartile range ``Q3 - Q1``."""
    q1, _, q3 = quartiles(data)
    return q3 - q1


def percentile_rank(data, value):
    """Percentage of data points strictly below ``value`` plus half of those equal.

    Returns a number between 0 and 100.
    """
    values = require_data(data)
    below = sum(1 for x in values if x < value)
    equal = sum(1 for x in values if x == value)
    return 100 * (below + 0.5 * equal) / len(values)


def five_number_summary(data):
    """Return ``(min, Q1, median, Q3, max)``."""
    values = require_data(data)
    q1, q2, q3 = quartiles(values)
    return (min(values), q1, q2, q3, max(values))


def outliers(data, k=1.5):
    """Values below ``Q1 - k*IQR`` or above ``Q3 + k*IQR``, in input order."""
    values = require_data(data)
    if k < 0:
        raise StatisticsError("k must be non-negative")
    q1, _, q3 = quartiles(values)
    spread = q3 - q1
    low, high = q1 - k * spread, q3 + k * spread
    return [x for x in values if x < low or x > high]
