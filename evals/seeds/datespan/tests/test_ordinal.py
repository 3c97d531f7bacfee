import pytest

from datespan import add_days, add_months, days_between, from_ordinal, to_ordinal, weekday


@pytest.mark.parametrize(
    "date, expected",
    [((1, 1, 1), 1), ((1, 12, 31), 365), ((2, 1, 1), 366), ((1970, 1, 1), 719163), ((2000, 1, 1), 730120), ((2024, 1, 1), 738886), ((9999, 12, 31), 3652059)],
)
def test_to_ordinal_known_values(date, expected):
    assert to_ordinal(date) == expected


@pytest.mark.parametrize(
    "n, expected",
    [(1, (1, 1, 1)), (365, (1, 12, 31)), (366, (2, 1, 1)), (730120, (2000, 1, 1)), (738886, (2024, 1, 1))],
)
def test_from_ordinal_known_values(n, expected):
    assert from_ordinal(n) == expected


@pytest.mark.parametrize(
    "date",
    [(2000, 12, 31), (2004, 12, 31), (1900, 12, 31), (1600, 12, 31), (2024, 2, 29), (2023, 3, 1), (400, 12, 31), (401, 1, 1)],
)
def test_from_ordinal_round_trips_cycle_boundaries(date):
    assert from_ordinal(to_ordinal(date)) == date


def test_from_ordinal_rejects_zero():
    with pytest.raises(ValueError):
        from_ordinal(0)


@pytest.mark.parametrize(
    "date, expected",
    [((1, 1, 1), 0), ((2024, 1, 1), 0), ((2000, 1, 1), 5), ((1970, 1, 1), 3), ((2023, 12, 31), 6)],
)
def test_weekday_monday_is_zero(date, expected):
    assert weekday(date) == expected


@pytest.mark.parametrize(
    "date, days, expected",
    [
        ((2024, 2, 28), 1, (2024, 2, 29)),
        ((2024, 2, 28), 2, (2024, 3, 1)),
        ((2023, 12, 31), 1, (2024, 1, 1)),
        ((2024, 3, 1), -1, (2024, 2, 29)),
        ((2024, 1, 1), 366, (2025, 1, 1)),
        ((2024, 5, 5), 0, (2024, 5, 5)),
    ],
)
def test_add_days(date, days, expected):
    assert add_days(date, days) == expected


def test_days_between_signed():
    assert days_between((2024, 1, 1), (2024, 12, 31)) == 365
    assert days_between((2024, 3, 1), (2024, 2, 1)) == -29
    assert days_between((2023, 1, 1), (2024, 1, 1)) == 365
    assert days_between((2024, 1, 1), (2025, 1, 1)) == 366
    assert days_between((2024, 7, 4), (2024, 7, 4)) == 0


@pytest.mark.parametrize(
    "date, months, expected",
    [
        ((2024, 1, 31), 1, (2024, 2, 29)),
        ((2023, 1, 31), 1, (2023, 2, 28)),
        ((2024, 5, 31), 1, (2024, 6, 30)),
        ((2024, 11, 15), 2, (2025, 1, 15)),
        ((2024, 1, 15), -1, (2023, 12, 15)),
        ((2024, 3, 31), -1, (2024, 2, 29)),
        ((2024, 12, 1), 12, (2025, 12, 1)),
        ((2024, 12, 1), 0, (2024, 12, 1)),
    ],
)
def test_add_months_clamps_to_month_end(date, months, expected):
    assert add_months(date, months) == expected
