"""Calendar basics: leap years, month lengths, day of year, parsing."""

_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_leap_year(year):
    """Return True if ``year`` is a Gregorian leap year.

    Years divisible by 4 are leap years, except centuries, which are leap
    years only when divisible by 400 (2000 is, 1900 is not).
    """
    if year % 400 == 0:
        return True
    if year % 100 == 0:
        return False
    return year % 4 == 0


def days_in_year(year):
    """Return 366 for leap years and 365 otherwise."""
    return 366 if is_leap_year(year) else 365


def days_in_month(year, month):
    """Return the number of days in ``month`` (1-12) of ``year``."""
    if month < 1 or month > 12:
        raise ValueError(f"month out of range: {month}")
    if month == 2 and is_leap_year(year):
        return 29
    return _MONTH_DAYS[month - 1]


def validate(year, month, day):
    """Return ``(year, month, day)`` if it is a real date, else raise ValueError.

    Years must be in 1..9999.
    """
    if year < 1 or year > 9999:
        raise ValueError(f"year out of range: {year}")
    if day < 1 or day > days_in_month(year, month):
        raise ValueError(f"day out of range: {day}")
    return (year, month, day)


def day_of_year(year, month, day):
    """Return the 1-based position of the date within its year (Jan 1 is 1)."""
    validate(year, month, day)
    total = day
    for m in range(1, month):
        total += days_in_month(year, m)
    return total


def from_day_of_year(year, doy):
    """Inverse of :func:`day_of_year`: return ``(month, day)`` for day ``doy``.

    Raises ValueError if ``doy`` is not within the year.
    """
    if doy < 1 or doy > days_in_year(year):
        raise ValueError(f"day of year out of range: {doy}")
    for month in range(1, 13):
        length = days_in_month(year, month)
        if doy <= length:
            return (month, doy)
        doy -= length
    raise AssertionError("unreachable")


def parse_date(text):
    """Parse ``YYYY-MM-DD`` into a validated ``(year, month, day)`` tuple."""
    parts = text.strip().split("-")
    if len(parts) != 3 or len(parts[0]) != 4 or len(parts[1]) != 2 or len(parts[2]) != 2:
        raise ValueError(f"not a YYYY-MM-DD date: {text!r}")
    if not all(p.isdigit() for p in parts):
        raise ValueError(f"not a YYYY-MM-DD date: {text!r}")
    return validate(int(parts[0]), int(parts[1]), int(parts[2]))


def format_date(date):
    """Format a ``(year, month, day)`` tuple as zero-padded ``YYYY-MM-DD``."""
    year, month, day = date
    return f"{year:04d}-{month:02d}-{day:02d}"
