"""datespan: date arithmetic on (year, month, day) tuples, no datetime module."""

from datespan.business import add_business_days, business_days_between, is_business_day, is_weekend
from datespan.calendar import (
    day_of_year,
    days_in_month,
    days_in_year,
    format_date,
    from_day_of_year,
    is_leap_year,
    parse_date,
    validate,
)
from datespan.isoweek import iso_week, iso_week_start, weeks_in_iso_year
from datespan.ordinal import add_days, add_months, days_between, from_ordinal, to_ordinal, weekday

__all__ = [
    "add_business_days",
    "add_days",
    "add_months",
    "business_days_between",
    "day_of_year",
    "days_between",
    "days_in_month",
    "days_in_year",
    "format_date",
    "from_day_of_year",
    "from_ordinal",
    "is_business_day",
    "is_leap_year",
    "is_weekend",
    "iso_week",
    "iso_week_start",
    "parse_date",
    "to_ordinal",
    "validate",
    "weekday",
    "weeks_in_iso_year",
]
