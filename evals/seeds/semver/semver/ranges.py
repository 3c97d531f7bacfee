"""npm-style version ranges.

A range is one or more comparator sets joined by ``||``; a set is a list of
space-separated comparators that must all hold. Supported comparators:
``>``, ``>=``, ``<``, ``<=``, ``=`` (or none) with a full version, plus the
shorthands ``^X.Y.Z`` (full version required), ``~X.Y.Z`` / ``~X.Y`` /
``~X``, partial versions (``1``, ``1.2``, ``1.x``, ``1.2.*``) and ``*``.

A pre-release version only matches a comparator set in which some bound
is a pre-release of the same ``MAJOR.MINOR.PATCH``.
"""

from .version import Version, compare, parse

_OPERATORS = (">=", "<=", ">", "<", "=")


def _parse_partial(text):
    """Parse ``1``, ``1.2``, ``1.x.x`` ... into a 3-list with None for wildcards."""
    parts = text.split(".")
    if len(parts) > 3:
        raise ValueError("too many components: %r" % text)
    values = []
    for part in parts:
        if part in ("x", "X", "*"):
            values.append(None)
        elif part.isdigit():
            values.append(int(part))
        else:
            raise ValueError("bad version component %r" % part)
    while len(values) < 3:
        values.append(None)
    for i in range(1, 3):
        if values[i - 1] is None and values[i] is not None:
            raise ValueError("wildcard followed by a number: %r" % text)
    return values


def _caret(text):
    v = parse(text)
    if v.major > 0:
        upper = Version(v.major + 1, 0, 0)
    elif v.minor > 0:
        upper = Version(0, v.minor + 1, 0)
    else:
        upper = Version(0, 0, v.patch + 1)
    return [(">=", v), ("<", upper)]


def _tilde(text):
    if "-" in text:
        lower = parse(text)
        return [(">=", lower), ("<", Version(lower.major, lower.minor + 1, 0))]
    major, minor, patch = _parse_partial(text)
    if major is None:
        return []
    if minor is None:
        return [(">=", Version(major, 0, 0)), ("<", Version(major + 1, 0, 0))]
    lower = Version(major, minor, patch if patch is not None else 0)
    return [(">=", lower), ("<", Version(major, minor + 1, 0))]


def _partial(text):
    major, minor, patch = _parse_partial(text)
    if major is None:
        return []
    if minor is None:
        return [(">=", Version(major, 0, 0)), ("<", Version(major + 1, 0, 0))]
    if patch is None:
        return [(">=", Version(major, minor, 0)), ("<", Version(major, minor + 1, 0))]
    return [("=", Version(major, minor, patch))]


def parse_comparator(token):
    """Turn one token into a list of ``(op, Version)`` primitives."""
    if token.startswith("^"):
        return _caret(token[1:])
    if token.startswith("~"):
        return _tilde(token[1:])
    for op in _OPERATORS:
        if token.startswith(op):
            return [(op, parse(token[len(op):]))]
    if "-" in token or "+" in token:
        return [("=", parse(token))]
    return _partial(token.lstrip("v"))


def _test(op, version, bound):
    result = compare(version, bound)
    if op == "=":
        return result == 0
    if op == ">":
        return result > 0
    if op == ">=":
        return result >= 0
    if op == "<":
        return result < 0
    return result <= 0


class Range:
    """A parsed range; use ``contains`` (or ``in``) to test versions."""

    def __init__(self, text):
        self.text = text
        self.sets = []
        for alternative in text.split("||"):
            comparators = []
            for token in alternative.split():
                comparators.extend(parse_comparator(token))
            self.sets.append(comparators)

    def _set_allows(self, comparators, version):
        for op, bound in comparators:
            if not _test(op, version, bound):
                return False
        if version.is_prerelease():
            # pre-releases only match a set that mentions the same core version
            return any(b.is_prerelease() and b.core() == version.core() for _, b in comparators)
        return True

    def contains(self, version):
        """Return True if ``version`` (Version or string) is in the range."""
        if isinstance(version, str):
            version = parse(version)
        return any(self._set_allows(s, version) for s in self.sets)

    def __contains__(self, version):
        return self.contains(version)


def satisfies(version, range_text):
    """Return True if ``version`` satisfies the range expression."""
    return Range(range_text).contains(version)


def max_satisfying(versions, range_text):
    """Return the highest version string in ``versions`` inside the range, or None."""
    r = Range(range_text)
    matching = [parse(v) for v in versions if r.contains(v)]
    return str(max(matching)) if matching else None


def min_satisfying(versions, range_text):
    """Return the lowest version string in ``versions`` inside the range, or None."""
    r = Range(range_text)
    matching = [parse(v) for v in versions if r.contains(v)]
    return str(min(matching)) if matching else None
