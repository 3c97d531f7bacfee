"""Measures of spread."""

import math

from .central import mean, require_data


def _sum_sq_dev(values):
    m = mean(values)
    return sum((x - m) ** 2 for x in values)


def variance(data, sample=True):
    """Variance of ``data``.

    ``sample=True`` divides by ``n - 1`` (needs two points); ``sample=False``
    gives the population variance, dividing by ``n``.
    """
    values = require_data(data, 2 if sample else 1)
    divisor = len(values) - 1 if sample else len(values)
    return _sum_sq_dev(values) / divisor


def stdev(data, sample=True):
    """Standard deviation: the square root of ``variance``."""
    return math.sqrt(variance(data, sample))


def data_range(data):
    """Difference between the largest and the smallest value."""
    values = require_data(data)
    return max(values) - min(values)


def mean_absolute_deviation(data):
    """Average absolute distance from the mean."""
    values = require_data(data)
    m = mean(values)
    return sum(abs(x - m) for x in values) / len(values)


def zscores(data, sample=False):
    """Standard scores ``(x - mean) / stdev``; all zeros if stdev is 0."""
    values = require_data(data, 2 if sample else 1)
    m = mean(values)
    sd = stdev(values, sample)
    if sd == 0:
        return [0.0] * len(values)
    return [(x - m) / sd for x in values]
