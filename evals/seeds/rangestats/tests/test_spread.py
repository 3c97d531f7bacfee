import math

import pytest

from rangestats import StatisticsError, data_range, mean_absolute_deviation, stdev, variance, zscores

DATA = [2, 4, 4, 4, 5, 5, 7, 9]


def test_population_variance():
    assert variance(DATA, sample=False) == 4


def test_sample_variance():
    assert variance(DATA) == 32 / 7
    assert variance([1, 3]) == 2


def test_variance_of_constant_data_is_zero():
    assert variance([3, 3, 3]) == 0
    assert variance([3], sample=False) == 0


def test_variance_needs_enough_points():
    with pytest.raises(StatisticsError):
        variance([1])
    with pytest.raises(StatisticsError):
        variance([], sample=False)


def test_stdev():
    assert stdev(DATA, sample=False) == 2
    assert stdev([1, 3]) == math.sqrt(2)


def test_data_range():
    assert data_range([4, -1, 7, 3]) == 8
    assert data_range([5]) == 0


def test_mean_absolute_deviation():
    assert mean_absolute_deviation([1, 2, 3, 4, 10]) == 2.4
    assert mean_absolute_deviation([6, 6]) == 0


def test_zscores_population():
    assert zscores(DATA) == [-1.5, -0.5, -0.5, -0.5, 0, 0, 1, 2]


def test_zscores_sample():
    assert zscores([1, 3], sample=True) == pytest.approx([-1 / math.sqrt(2), 1 / math.sqrt(2)])
    with pytest.raises(StatisticsError):
        zscores([1], sample=True)


def test_zscores_constant_data():
    assert zscores([4, 4, 4]) == [0.0, 0.0, 0.0]
