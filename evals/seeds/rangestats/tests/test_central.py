import pytest

from rangestats import StatisticsError, mean, median, midrange, mode, multimode, weighted_mean


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5
    assert mean([5]) == 5
    assert mean([-2, 2, 6]) == 2


def test_mean_of_empty_raises():
    with pytest.raises(StatisticsError):
        mean([])


def test_mean_accepts_iterators():
    assert mean(x for x in [2, 4, 9]) == 5


def test_weighted_mean():
    assert weighted_mean([1, 2, 3], [3, 0, 1]) == 1.5
    assert weighted_mean([10, 20], [1, 1]) == 15


def test_weighted_mean_errors():
    with pytest.raises(ValueError):
        weighted_mean([1, 2], [1])
    with pytest.raises(StatisticsError):
        weighted_mean([1, 2], [0, 0])
    with pytest.raises(StatisticsError):
        weighted_mean([1, 2], [1, -3])


def test_median_odd_and_even():
    assert median([7, 1, 3]) == 3
    assert median([4, 1, 3, 2]) == 2.5
    assert median([10, 1]) == 5.5
    assert median([8]) == 8


def test_median_unsorted_with_duplicates():
    assert median([5, 3, 3, 9, 1, 8]) == 4


def test_median_empty_raises():
    with pytest.raises(StatisticsError):
        median([])


def test_multimode():
    assert multimode([1, 2, 2, 3, 3]) == [2, 3]
    assert multimode(["b", "a"]) == ["a", "b"]
    assert multimode([4, 4, 4, 1]) == [4]
    assert multimode([]) == []


def test_mode_breaks_ties_low():
    assert mode([5, 1, 5, 1, 7]) == 1
    assert mode([3, 9, 9]) == 9
    with pytest.raises(StatisticsError):
        mode([])


def test_midrange():
    assert midrange([3, 9, 1, 4]) == 5
    assert midrange([-4, 2]) == -1
