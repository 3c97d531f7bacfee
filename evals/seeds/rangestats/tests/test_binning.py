import pytest

from rangestats import StatisticsError, bin_edges, bin_index, exponential_moving_average, histogram, moving_average


def test_bin_edges():
    assert bin_edges(0, 10, 5) == [0, 2, 4, 6, 8, 10]
    assert bin_edges(1, 2, 1) == [1, 2]
    assert bin_edges(-1, 1, 4) == [-1, -0.5, 0, 0.5, 1]


def test_bin_edges_errors():
    with pytest.raises(ValueError):
        bin_edges(0, 10, 0)
    with pytest.raises(ValueError):
        bin_edges(5, 5, 2)
    with pytest.raises(ValueError):
        bin_edges(6, 5, 2)


@pytest.mark.parametrize(
    "value,expected",
    [(0, 0), (1.99, 0), (2, 1), (7.5, 3), (9.99, 4), (10, 4), (-0.01, None), (10.01, None)],
)
def test_bin_index(value, expected):
    assert bin_index(value, 0, 10, 5) == expected


def test_bin_index_offset_range():
    assert bin_index(15, 10, 20, 2) == 1
    assert bin_index(12, 10, 20, 2) == 0


def test_histogram_default_range():
    counts, edges = histogram([1, 2, 2, 3, 3, 3, 4, 5], bins=4)
    assert edges == [1, 2, 3, 4, 5]
    assert counts == [1, 2, 3, 2]


def test_histogram_explicit_range_ignores_outside():
    counts, edges = histogram([-5, 0, 1, 5, 9, 10, 11], bins=2, lo=0, hi=10)
    assert counts == [2, 3]
    assert edges == [0, 5, 10]


def test_histogram_constant_data():
    counts, edges = histogram([3, 3, 3], bins=2)
    assert counts == [0, 3]
    assert edges == [2.5, 3, 3.5]


def test_histogram_counts_sum_to_len():
    data = [0.5, 1.5, 2.5, 9.0, 3.3, 4.4]
    counts, _ = histogram(data, bins=3)
    assert sum(counts) == len(data)
    assert counts == [4, 1, 1]


def test_moving_average():
    assert moving_average([1, 2, 3, 4, 5], 2) == [1.5, 2.5, 3.5, 4.5]
    assert moving_average([2, 4, 6, 8], 3) == [4, 6]
    assert moving_average([5, 7], 1) == [5, 7]


def test_moving_average_full_window():
    assert moving_average([3, 6, 9], 3) == [6]


def test_moving_average_errors():
    with pytest.raises(ValueError):
        moving_average([1, 2], 0)
    with pytest.raises(StatisticsError):
        moving_average([1, 2], 3)


def test_exponential_moving_average():
    assert exponential_moving_average([10, 20, 30], 0.5) == [10, 15, 22.5]
    assert exponential_moving_average([4, 8], 1) == [4, 8]
    assert exponential_moving_average([], 0.5) == []


def test_exponential_moving_average_weights_newest_by_alpha():
    assert exponential_moving_average([0, 8, 8], 0.25) == [0, 2, 3.5]


def test_exponential_moving_average_bad_alpha():
    with pytest.raises(ValueError):
        exponential_moving_average([1], 0)
    with pytest.raises(ValueError):
        exponential_moving_average([1], 1.5)


def test_bin_index_just_below_hi_stays_in_last_bin():
    # (value - lo) / width rounds up to 3.0 here; the index must still be 2
    just_below_one = 0.9999999999999999
    assert just_below_one < 1
    assert bin_index(just_below_one, 0, 1, 3) == 2


def test_histogram_uses_ten_bins_by_default():
    counts, edges = histogram(list(range(20)))
    assert len(counts) == 10
    assert len(edges) == 11
    assert counts == [2] * 10
    assert edges[1] == 1.9
