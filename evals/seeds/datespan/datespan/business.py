"""Business-day arithmetic: weekends (Saturday, Sunday) and holidays are skipped."""

from datespan.ordinal import from_ordinal, to_ordinal, weekday

SATURDAY = 5
MAX_SEARCH_DAYS = 366


def is_weekend(date):
    """Return True for Saturdays and Sundays."""
    return weekday(date) >= SATURDAY


def is_business_day(date, holidays=()):
    """Return True if ``date`` is neither a weekend day nor in ``holidays``."""
    return not is_weekend(date) and tuple(date) not in set(map(tuple, holidays))


def _next_business_ordinal(n, step, holidays):
    """Step from day ordinal ``n`` by ``step`` until a business day is reached.

    Gives up with ValueError after a whole year without a business day.
    """
    for _ in range(MAX_SEARCH_DAYS):
        n += step
        if is_business_day(from_ordinal(n), holidays):
            return n
    raise ValueError("no business day within a year")


def add_business_days(date, count, holidays=()):
    """Move ``count`` business days forward (or backward if negative).

    The start date itself is never counted, so adding 1 to a Friday gives
    the next Monday. Adding 0 returns ``date`` unchanged even if it is not
    a business day.
    """
    step = 1 if count >= 0 else -1
    n = to_ordinal(date)
    for _ in range(abs(count)):
        n = _next_business_ordinal(n, step, holidays)
    return from_ordinal(n)


def business_days_between(start, end, holidays=()):
    """Count business days in the half-open range ``[start, end)``.

    If ``end`` is before ``start`` the count for ``[end, start)`` is
    returned negated.
    """
    first = to_ordinal(start)
    last = to_ordinal(end)
    sign = 1
    if last < first:
        first, last = last, first
        sign = -1
    count = 0
    for n in range(first, last):
        if is_business_day(from_ordinal(n), holidays):
            count += 1
    return sign * count
