"""Measures of central tendency."""


class StatisticsError(ValueError):
    """Raised when a statistic is undefined for the given data."""


def require_data(data, minimum=1):
    """Return ``data`` as a list, raising StatisticsError if it is too short."""
    values = list(data)
    if len(values) < minimum:
        raise StatisticsError("need at least %d data points" % minimum)
    return values


def mean(data):
    """Arithmetic mean."""
    values = require_data(data)
    return sum(values) / len(values)


def weighted_mean(data, weights):
    """Mean of ``data`` where ``data[i]`` counts ``weights[i]`` times."""
    values = require_data(data)
    if len(weights) != len(values):
        raise ValueError("data and weights differ in length")
    total = sum(weights)
    if total <= 0:
        raise StatisticsError("weights must sum to a positive number")
    return sum(x * w for x, w in zip(values, weights)) / total


def median(data):
    """Middle value; the mean of the two middle values for even-sized data."""
    values = sorted(require_data(data))
    n = len(values)
    mid = n // 2
    if n % 2 == 1:
        return values[mid]
    return (values[mid - 1] + values[mid]) / 2


def multimode(data):
    """All values that occur most often, in ascending order ([] for no data)."""
    counts = {}
    for x in data:
        counts[x] = counts.get(x, 0) + 1
    if not counts:
        return []
    best = max(counts.values())
    return sorted(x for x, c in counts.items() if c == best)


def mode(data):
    """Most common value; ties go to the smallest such value."""
    modes = multimode(data)
    if not modes:
        raise StatisticsError("mode of empty data")
    return modes[0]


def midrange(data):
    """Average of the minimum and maximum."""
    values = require_data(data)
    return (min(values) + max(values)) / 2
