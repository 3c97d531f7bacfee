import pytest

from datespan import iso_week, iso_week_start, weeks_in_iso_year


@pytest.mark.parametrize(
    "date, expected",
    [
        ((2024, 1, 1), (2024, 1, 1)),
        ((2024, 6, 15), (2024, 24, 6)),
        ((2021, 1, 1), (2020, 53, 5)),
        ((2023, 1, 1), (2022, 52, 7)),
        ((2016, 1, 3), (2015, 53, 7)),
        ((2019, 12, 30), (2020, 1, 1)),
        ((2024, 12, 30), (2025, 1, 1)),
        ((2008, 12, 29), (2009, 1, 1)),
        ((2026, 12, 31), (2026, 53, 4)),
    ],
)
def test_iso_week_including_year_boundaries(date, expected):
    assert iso_week(date) == expected


@pytest.mark.parametrize(
    "iso_year, week, expected",
    [
        (2024, 1, (2024, 1, 1)),
        (2024, 26, (2024, 6, 24)),
        (2020, 1, (2019, 12, 30)),
        (2020, 53, (2020, 12, 28)),
        (2025, 1, (2024, 12, 30)),
        (2015, 53, (2015, 12, 28)),
    ],
)
def test_iso_week_start_returns_monday(iso_year, week, expected):
    assert iso_week_start(iso_year, week) == expected


def test_iso_week_start_rejects_missing_weeks():
    with pytest.raises(ValueError):
        iso_week_start(2024, 0)
    with pytest.raises(ValueError):
        iso_week_start(2024, 53)


@pytest.mark.parametrize(
    "iso_year, expected",
    [(2015, 53), (2020, 53), (2026, 53), (2004, 53), (2021, 52), (2023, 52), (2024, 52)],
)
def test_weeks_in_iso_year(iso_year, expected):
    weeks = weeks_in_iso_year(iso_year)
    assert weeks == expected
    assert isinstance(weeks, int)
