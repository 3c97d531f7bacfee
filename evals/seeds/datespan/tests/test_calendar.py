import pytest

from datespan import (
    day_of_year,
    days_in_month,
    days_in_year,
    format_date,
    from_day_of_year,
    is_leap_year,
    parse_date,
    validate,
)


@pytest.mark.parametrize(
    "year, expected",
    [(2024, True), (2023, False), (2000, True), (1900, False), (2100, False), (1600, True), (4, True), (1, False)],
)
def test_is_leap_year_gregorian_rules(year, expected):
    assert is_leap_year(year) is expected


def test_days_in_year():
    assert days_in_year(2024) == 366
    assert days_in_year(2023) == 365
    assert days_in_year(1900) == 365


@pytest.mark.parametrize(
    "year, month, expected",
    [(2024, 2, 29), (2023, 2, 28), (1900, 2, 28), (2000, 2, 29), (2023, 1, 31), (2023, 4, 30), (2023, 11, 30), (2023, 12, 31)],
)
def test_days_in_month(year, month, expected):
    assert days_in_month(year, month) == expected


def test_days_in_month_rejects_bad_month():
    with pytest.raises(ValueError):
        days_in_month(2023, 0)
    with pytest.raises(ValueError):
        days_in_month(2023, 13)


def test_validate_accepts_real_dates_including_extremes():
    assert validate(2024, 2, 29) == (2024, 2, 29)
    assert validate(1, 1, 1) == (1, 1, 1)
    assert validate(9999, 12, 31) == (9999, 12, 31)


@pytest.mark.parametrize("year, month, day", [(2023, 2, 29), (2023, 1, 0), (2023, 4, 31), (0, 1, 1), (10000, 1, 1)])
def test_validate_rejects_impossible_dates(year, month, day):
    with pytest.raises(ValueError):
        validate(year, month, day)


@pytest.mark.parametrize(
    "date, expected",
    [((2023, 1, 1), 1), ((2023, 2, 28), 59), ((2023, 3, 1), 60), ((2024, 3, 1), 61), ((2023, 12, 31), 365), ((2024, 12, 31), 366)],
)
def test_day_of_year(date, expected):
    assert day_of_year(*date) == expected


@pytest.mark.parametrize(
    "year, doy, expected",
    [(2023, 1, (1, 1)), (2023, 31, (1, 31)), (2023, 32, (2, 1)), (2023, 60, (3, 1)), (2024, 60, (2, 29)), (2023, 365, (12, 31)), (2024, 366, (12, 31))],
)
def test_from_day_of_year(year, doy, expected):
    assert from_day_of_year(year, doy) == expected


def test_from_day_of_year_out_of_range():
    with pytest.raises(ValueError):
        from_day_of_year(2023, 366)
    with pytest.raises(ValueError):
        from_day_of_year(2023, 0)


def test_parse_date_valid():
    assert parse_date("2024-02-29") == (2024, 2, 29)
    assert parse_date(" 1999-12-31 ") == (1999, 12, 31)


@pytest.mark.parametrize("text", ["2024-2-29", "2024-02-1", "2024-02-001", "2024-02-30", "2024/02/29", "20a4-02-01", "2024-02-01-05", "24-02-01"])
def test_parse_date_rejects_malformed_text(text):
    with pytest.raises(ValueError):
        parse_date(text)


def test_format_date_zero_pads():
    assert format_date((5, 3, 7)) == "0005-03-07"
    assert format_date((2024, 12, 25)) == "2024-12-25"
