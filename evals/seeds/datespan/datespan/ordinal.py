"""Day ordinals (0001-01-01 is day 1), weekdays and date arithmetic."""

from datespan.calendar import day_of_year, days_in_month, from_day_of_year

_DAYS_IN_400_YEARS = 146097
_DAYS_IN_100_YEARS = 36524
_DAYS_IN_4_YEARS = 1461


def _days_before_year(year):
    """Number of days from 0001-01-01 up to (not including) Jan 1 of ``year``."""
    y = year - 1
    return y * 365 + y // 4 - y // 100 + y // 400


def to_ordinal(date):
    """Return the day number of ``date``; 0001-01-01 is day 1."""
    year, month, day = date
    return _days_before_year(year) + day_of_year(year, month, day)


def from_ordinal(n):
    """Return the ``(year, month, day)`` tuple for day number ``n`` (n >= 1)."""
    if n < 1:
        raise ValueError("ordinal must be at least 1")
    n400, rest = divmod(n - 1, _DAYS_IN_400_YEARS)
    n100, rest = divmod(rest, _DAYS_IN_100_YEARS)
    n4, rest = divmod(rest, _DAYS_IN_4_YEARS)
    n1, rest = divmod(rest, 365)
    year = n400 * 400 + n100 * 100 + n4 * 4 + n1 + 1
    if n1 == 4 or n100 == 4:
        # Last day of a leap year that closes a 4- or 400-year cycle.
        return (year - 1, 12, 31)
    month, day = from_day_of_year(year, rest + 1)
    return (year, month, day)


def weekday(date):
    """Return the day of the week: Monday is 0 and Sunday is 6."""
    return (to_ordinal(date) - 1) % 7


def add_days(date, days):
    """Return the date ``days`` days after ``date`` (negative goes back)."""
    return from_ordinal(to_ordinal(date) + days)


def days_between(start, end):
    """Return ``end - start`` in days (negative if ``end`` is earlier)."""
    return to_ordinal(end) - to_ordinal(start)


def add_months(date, months):
    """Add calendar months, clamping the day to the end of the target month.

    ``add_months((2024, 1, 31), 1)`` is ``(2024, 2, 29)``.
    """
    year, month, day = date
    index = year * 12 + (month - 1) + months
    new_year, new_month0 = divmod(index, 12)
    new_month = new_month0 + 1
    return (new_year, new_month, min(day, days_in_month(new_year, new_month)))
