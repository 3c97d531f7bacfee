"""csvlite: a tiny CSV reader/writer working on strings.

Reading turns text into a list of rows (lists of strings); writing does the
reverse. ``to_dicts``/``from_dicts`` map rows onto a header, and the
``coerce`` helpers turn cell strings into Python values.
"""

from .reader import CSVError, parse, parse_line, iter_records
from .writer import needs_quoting, quote_field, format_row, write
from .mapping import to_dicts, from_dicts, column, select_columns
from .coerce import coerce_value, coerce_row, coerce_rows

__all__ = [
    "CSVError",
    "parse",
    "parse_line",
    "iter_records",
    "needs_quoting",
    "quote_field",
    "format_row",
    "write",
    "to_dicts",
    "from_dicts",
    "column",
    "select_columns",
    "coerce_value",
    "coerce_row",
    "coerce_rows",
]
