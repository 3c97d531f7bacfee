import pytest

from rangestats import StatisticsError, five_number_summary, iqr, outliers, percentile, percentile_rank, quartiles


@pytest.mark.parametrize(
    "p,expected",
    [(0, 10), (100, 50), (50, 30), (25, 20), (10, 14), (90, 46), (62.5, 35)],
)
def test_percentile_interpolates(p, expected):
    assert percentile([50, 10, 40, 20, 30], p) == pytest.approx(expected)


def test_percentile_even_count():
    data = [1, 2, 3, 4]
    assert percentile(data, 50) == 2.5
    assert percentile(data, 25) == 1.75
    assert percentile(data, 75) == 3.25


def test_percentile_single_value():
    assert percentile([7], 0) == 7
    assert percentile([7], 99) == 7
    assert percentile([7], 100) == 7


def test_percentile_bounds():
    with pytest.raises(ValueError):
        percentile([1, 2], -1)
    with pytest.raises(ValueError):
        percentile([1, 2], 100.5)
    with pytest.raises(StatisticsError):
        percentile([], 50)


def test_quartiles_and_iqr():
    data = [7, 1, 3, 5, 9, 11, 13, 15, 17]
    assert quartiles(data) == (5, 9, 13)
    assert iqr(data) == 8


def test_percentile_rank():
    data = [1, 2, 2, 3, 4]
    assert percentile_rank(data, 2) == 40
    assert percentile_rank(data, 0) == 0
    assert percentile_rank(data, 5) == 100
    assert percentile_rank(data, 4) == 90


def test_five_number_summary():
    assert five_number_summary([2, 6, 4, 8, 10]) == (2, 4, 6, 8, 10)


def test_outliers():
    data = [10, 12, 11, 13, 12, 50, -20, 11]
    assert outliers(data) == [50, -20]
    assert outliers(data, k=100) == []
    with pytest.raises(StatisticsError):
        outliers(data, k=-1)


def test_outliers_boundary_is_not_outlier():
    # Q1 = 2, Q3 = 4, IQR = 2 -> fences at -1 and 7
    data = [1, 2, 3, 4, 5]
    assert outliers(data) == []
    assert outliers(data, k=0) == [1, 5]
    assert outliers([-1, 2, 2, 2, 3, 4, 4, 4, 7], k=1.5) == []


def test_outliers_default_k_is_one_and_a_half():
    # Q1 = 2, Q3 = 4, IQR = 2 -> default fences at -1 and 7
    assert outliers([1, 2, 3, 4, 8]) == [8]
    assert outliers([1, 2, 3, 4, 7]) == []
