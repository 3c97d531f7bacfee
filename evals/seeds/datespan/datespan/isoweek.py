"""ISO 8601 week dates: weeks start on Monday, week 1 contains January 4th."""

from datespan.ordinal import from_ordinal, to_ordinal, weekday


def _week1_monday(iso_year):
    """Ordinal of the Monday that starts ISO week 1 of ``iso_year``."""
    jan4 = (iso_year, 1, 4)
    return to_ordinal(jan4) - weekday(jan4)


def iso_week(date):
    """Return ``(iso_year, week, iso_weekday)`` for ``date``.

    ``iso_weekday`` runs from 1 (Monday) to 7 (Sunday). Early January
    days may belong to the last week of the previous ISO year and late
    December days to week 1 of the next.
    """
    n = to_ordinal(date)
    year = date[0]
    if n < _week1_monday(year):
        year -= 1
    elif n >= _week1_monday(year + 1):
        year += 1
    week = (n - _week1_monday(year)) // 7 + 1
    return (year, week, weekday(date) + 1)


def iso_week_start(iso_year, week):
    """Return the Monday ``(year, month, day)`` that starts ISO ``week``."""
    if week < 1 or week > weeks_in_iso_year(iso_year):
        raise ValueError(f"week out of range: {week}")
    return from_ordinal(_week1_monday(iso_year) + (week - 1) * 7)


def weeks_in_iso_year(iso_year):
    """Return 52 or 53, the number of ISO weeks in ``iso_year``."""
    return (_week1_monday(iso_year + 1) - _week1_monday(iso_year)) // 7
