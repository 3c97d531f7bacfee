"""Turning cell strings into Python values."""

TRUE_WORDS = ("true", "yes")
FALSE_WORDS = ("false", "no")
NULL_WORDS = ("", "null", "none", "na")


def _looks_int(text):
    body = text[1:] if text[:1] in "+-" else text
    return body.isdigit()


def coerce_value(text):
    """Guess the type of a cell.

    Null words (empty, ``null``, ``none``, ``na``; any case) give None, boolean
    words give True/False, integers give int, other numbers float, and
    anything else is returned unchanged (surrounding spaces stripped for the
    checks only).
    """
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in NULL_WORDS:
        return None
    if lowered in TRUE_WORDS:
        return True
    if lowered in FALSE_WORDS:
        return False
    if _looks_int(stripped):
        return int(stripped)
    try:
        return float(stripped)
    except ValueError:
        return text


def convert(text, kind):
    """Convert ``text`` to ``kind`` (``int``, ``float``, ``bool`` or ``str``).

    Empty text gives None. For ``bool`` only the boolean words are accepted.
    """
    if text.strip() == "":
        return None
    if kind is bool:
        lowered = text.strip().lower()
        if lowered in TRUE_WORDS:
            return True
        if lowered in FALSE_WORDS:
            return False
        raise ValueError("not a boolean: %r" % text)
    return kind(text.strip()) if kind is not str else text


def coerce_row(record, types=None):
    """Coerce the values of a dict record.

    Columns listed in ``types`` are converted with that type; the others are
    guessed with ``coerce_value``. Non-string values are left alone.
    """
    types = types or {}
    out = {}
    for key, value in record.items():
        if not isinstance(value, str):
            out[key] = value
        elif key in types:
            out[key] = convert(value, types[key])
        else:
            out[key] = coerce_value(value)
    return out


def coerce_rows(records, types=None):
    """Apply ``coerce_row`` to every record."""
    return [coerce_row(rec, types) for rec in records]
