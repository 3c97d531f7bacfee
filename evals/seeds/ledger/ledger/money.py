"""Parsing, formatting and rounding of amounts held as integer cents."""

CENTS_PER_UNIT = 100
BASIS_POINTS = 10000


def parse_amount(text):
    """Parse a decimal amount such as ``"$1,234.5"`` into integer cents.

    Accepts an optional leading ``-`` or accounting parentheses
    (``"(12.00)"`` is -1200), an optional ``$``, thousands commas and at
    most two decimal places. Raises ValueError for anything else.
    """
    s = text.strip()
    negative = False
    if s.startswith("(") and s.endswith(")"):
        negative, s = True, s[1:-1].strip()
    elif s.startswith("-"):
        negative, s = True, s[1:]
    if s.startswith("$"):
        s = s[1:]
    s = s.replace(",", "")
    whole, dot, frac = s.partition(".")
    if len(frac) > 2 or (dot and not frac):
        raise ValueError(f"bad amount: {text!r}")
    if not (whole or frac) or not (whole + frac).isdigit():
        raise ValueError(f"bad amount: {text!r}")
    cents = int(whole or "0") * CENTS_PER_UNIT + int(frac.ljust(2, "0"))
    return -cents if negative else cents


def _group_thousands(digits, separator):
    """Insert ``separator`` every three digits from the right."""
    head = len(digits) % 3 or 3
    groups = [digits[:head]]
    for k in range(head, len(digits), 3):
        groups.append(digits[k : k + 3])
    return separator.join(groups)


def format_amount(cents, symbol="$", separator=","):
    """Format integer cents as text, e.g. ``-123456`` -> ``"-$1,234.56"``."""
    sign = "-" if cents < 0 else ""
    units, rest = divmod(abs(cents), CENTS_PER_UNIT)
    return f"{sign}{symbol}{_group_thousands(str(units), separator)}.{rest:02d}"


def round_half_up(numerator, denominator):
    """Divide and round to the nearest integer, halves away from zero."""
    if denominator <= 0:
        raise ValueError("denominator must be positive")
    q, r = divmod(abs(numerator), denominator)
    if 2 * r >= denominator:
        q += 1
    return q if numerator >= 0 else -q


def round_half_even(numerator, denominator):
    """Divide and round to the nearest integer, halves to the even neighbour."""
    if denominator <= 0:
        raise ValueError("denominator must be positive")
    q, r = divmod(abs(numerator), denominator)
    twice = 2 * r
    if twice > denominator or (twice == denominator and q % 2 == 1):
        q += 1
    return q if numerator >= 0 else -q


def apply_rate(cents, basis_points, half_even=False):
    """Return ``cents * basis_points / 10000`` rounded to whole cents.

    ``basis_points`` is a rate in hundredths of a percent (825 is 8.25%).
    Halves round away from zero unless ``half_even`` is set.
    """
    rounder = round_half_even if half_even else round_half_up
    return rounder(cents * basis_points, BASIS_POINTS)
