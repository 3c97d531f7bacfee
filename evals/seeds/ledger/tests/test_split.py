import pytest

from ledger import allocate, cash_round, split_evenly


@pytest.mark.parametrize(
    "total, parts, expected",
    [
        (100, 3, [34, 33, 33]),
        (101, 3, [34, 34, 33]),
        (99, 3, [33, 33, 33]),
        (-100, 3, [-34, -33, -33]),
        (2, 5, [1, 1, 0, 0, 0]),
        (0, 2, [0, 0]),
        (7, 1, [7]),
    ],
)
def test_split_evenly_gives_leftover_cents_to_first_parts(total, parts, expected):
    assert split_evenly(total, parts) == expected


def test_split_evenly_rejects_zero_parts():
    with pytest.raises(ValueError):
        split_evenly(100, 0)


@pytest.mark.parametrize(
    "total, ratios, expected",
    [
        (100, [1, 1, 1], [34, 33, 33]),
        (100, [50, 30, 20], [50, 30, 20]),
        (5, [1, 3], [1, 4]),
        (10, [1, 2, 3], [2, 3, 5]),
        (1000, [1, 0, 2], [333, 0, 667]),
        (7, [1, 1, 1, 1], [2, 2, 2, 1]),
        (0, [1, 2], [0, 0]),
        (10, [0, 1, 0], [0, 10, 0]),
    ],
)
def test_allocate_largest_remainder(total, ratios, expected):
    assert allocate(total, ratios) == expected
    assert sum(allocate(total, ratios)) == total


@pytest.mark.parametrize("total, ratios", [(-1, [1, 1]), (10, [0, 0]), (10, [2, -1]), (10, [])])
def test_allocate_rejects_bad_input(total, ratios):
    with pytest.raises(ValueError):
        allocate(total, ratios)


@pytest.mark.parametrize(
    "cents, increment, expected",
    [(12, 5, 10), (13, 5, 15), (10, 5, 10), (-13, 5, -15), (-12, 5, -10), (25, 10, 30), (24, 10, 20), (0, 5, 0), (1, 100, 0), (50, 100, 100)],
)
def test_cash_round_to_increment(cents, increment, expected):
    assert cash_round(cents, increment) == expected


def test_cash_round_default_increment_is_five_cents():
    assert cash_round(1237) == 1235
    assert cash_round(1238) == 1240


def test_cash_round_rejects_non_positive_increment():
    with pytest.raises(ValueError):
        cash_round(10, 0)
