import pytest

from datespan import add_business_days, add_days, business_days_between, is_business_day, is_weekend

# January 2024 starts on a Monday: the 5th is a Friday, the 6th/7th a weekend.


def test_is_weekend_saturday_and_sunday_only():
    assert is_weekend((2024, 1, 6)) is True
    assert is_weekend((2024, 1, 7)) is True
    assert is_weekend((2024, 1, 5)) is False
    assert is_weekend((2024, 1, 8)) is False


def test_is_business_day_with_holidays():
    holidays = [(2024, 1, 1)]
    assert is_business_day((2024, 1, 1), holidays) is False
    assert is_business_day((2024, 1, 2), holidays) is True
    assert is_business_day((2024, 1, 1)) is True
    assert is_business_day((2024, 1, 6)) is False


def test_is_business_day_accepts_holidays_as_lists():
    assert is_business_day((2024, 1, 1), [[2024, 1, 1]]) is False


def test_add_business_days_skips_weekend():
    assert add_business_days((2024, 1, 5), 1) == (2024, 1, 8)
    assert add_business_days((2024, 1, 1), 5) == (2024, 1, 8)
    assert add_business_days((2024, 1, 1), 4) == (2024, 1, 5)


def test_add_business_days_backwards():
    assert add_business_days((2024, 1, 8), -1) == (2024, 1, 5)
    assert add_business_days((2024, 1, 10), -2) == (2024, 1, 8)


def test_add_business_days_zero_and_from_weekend():
    assert add_business_days((2024, 1, 6), 0) == (2024, 1, 6)
    assert add_business_days((2024, 1, 6), 1) == (2024, 1, 8)


def test_add_business_days_skips_holidays():
    assert add_business_days((2023, 12, 29), 1, holidays=[(2024, 1, 1)]) == (2024, 1, 2)
    assert add_business_days((2024, 1, 3), -2, holidays=[(2024, 1, 2)]) == (2023, 12, 29)


def test_add_business_days_gives_up_after_a_year_of_holidays():
    every_day_of_2024 = [add_days((2024, 1, 1), k) for k in range(366)]
    with pytest.raises(ValueError):
        add_business_days((2023, 12, 31), 1, holidays=every_day_of_2024)
    assert add_business_days((2023, 12, 31), 1, holidays=every_day_of_2024[:-1]) == (2024, 12, 31)


def test_business_days_between_one_week():
    assert business_days_between((2024, 1, 1), (2024, 1, 8)) == 5
    assert business_days_between((2024, 1, 5), (2024, 1, 6)) == 1
    assert business_days_between((2024, 1, 6), (2024, 1, 8)) == 0


def test_business_days_between_empty_and_reversed():
    assert business_days_between((2024, 1, 1), (2024, 1, 1)) == 0
    assert business_days_between((2024, 1, 8), (2024, 1, 1)) == -5


def test_business_days_between_whole_month_with_holidays():
    start, end = (2024, 1, 1), (2024, 2, 1)
    assert business_days_between(start, end) == 23
    assert business_days_between(start, end, holidays=[(2024, 1, 1), (2024, 1, 15)]) == 21
    assert business_days_between(start, end, holidays=[(2024, 1, 6)]) == 23
