"""The Version type, parsing and precedence."""

import functools


def _parse_number(text, what):
    if not text.isdigit():
        raise ValueError("%s must be a non-negative integer: %r" % (what, text))
    if len(text) > 1 and text[0] == "0":
        raise ValueError("%s has a leading zero: %r" % (what, text))
    return int(text)


def _parse_identifiers(text, numeric_check):
    parts = text.split(".")
    for part in parts:
        if part == "":
            raise ValueError("empty identifier in %r" % text)
        if not all(c.isalnum() or c == "-" for c in part):
            raise ValueError("invalid identifier %r" % part)
        if numeric_check and part.isdigit() and len(part) > 1 and part[0] == "0":
            raise ValueError("numeric identifier with leading zero: %r" % part)
    return tuple(parts)


@functools.total_ordering
class Version:
    """An immutable semantic version ``MAJOR.MINOR.PATCH[-PRE][+BUILD]``.

    ``prerelease`` and ``build`` are tuples of identifier strings. Build
    metadata is kept for display but ignored for ordering and equality.
    """

    __slots__ = ("major", "minor", "patch", "prerelease", "build")

    def __init__(self, major, minor=0, patch=0, prerelease=(), build=()):
        for value in (major, minor, patch):
            if not isinstance(value, int) or value < 0:
                raise ValueError("version numbers must be non-negative ints")
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = tuple(prerelease)
        self.build = tuple(build)

    def core(self):
        """Return ``(major, minor, patch)``."""
        return (self.major, self.minor, self.patch)

    def is_prerelease(self):
        """Return True if the version has pre-release identifiers."""
        return len(self.prerelease) > 0

    def __str__(self):
        text = "%d.%d.%d" % self.core()
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self):
        return "Version(%r)" % str(self)

    def __eq__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return compare(self, other) == 0

    def __lt__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return compare(self, other) < 0

    def __hash__(self):
        return hash((self.core(), self.prerelease))


def parse(text):
    """Parse a version string such as ``"1.4.0-rc.1+build.5"``.

    A leading ``v`` or ``=`` and surrounding whitespace are allowed. Raises
    ValueError for anything that is not a valid semantic version.
    """
    text = text.strip()
    if text[:1] in ("v", "="):
        text = text[1:]
    build = ()
    if "+" in text:
        text, build_text = text.split("+", 1)
        build = _parse_identifiers(build_text, numeric_check=False)
    prerelease = ()
    if "-" in text:
        text, pre_text = text.split("-", 1)
        prerelease = _parse_identifiers(pre_text, numeric_check=True)
    numbers = text.split(".")
    if len(numbers) != 3:
        raise ValueError("expected MAJOR.MINOR.PATCH, got %r" % text)
    major, minor, patch = (_parse_number(n, w) for n, w in zip(numbers, ("major", "minor", "patch")))
    return Version(major, minor, patch, prerelease, build)


def is_valid(text):
    """Return True if ``text`` parses as a version."""
    try:
        parse(text)
    except ValueError:
        return False
    return True


def _cmp(a, b):
    return (a > b) - (a < b)


def compare_prerelease(a, b):
    """Compare two pre-release tuples; return -1, 0 or 1.

    An empty tuple (a release) ranks above any pre-release. Identifiers are
    compared left to right: numeric ones numerically and below alphanumeric
    ones, alphanumeric ones in ASCII order. If all shared identifiers are
    equal, the longer tuple ranks higher.
    """
    if not a or not b:
        return _cmp(len(b), len(a)) if (a or b) else 0
    for x, y in zip(a, b):
        x_num, y_num = x.isdigit(), y.isdigit()
        if x_num and y_num:
            result = _cmp(int(x), int(y))
        elif x_num:
            result = -1
        elif y_num:
            result = 1
        else:
            result = _cmp(x, y)
        if result != 0:
            return result
    return _cmp(len(a), len(b))


def compare(a, b):
    """Compare two versions (or version strings); return -1, 0 or 1."""
    if isinstance(a, str):
        a = parse(a)
    if isinstance(b, str):
        b = parse(b)
    result = _cmp(a.core(), b.core())
    if result != 0:
        return result
    return compare_prerelease(a.prerelease, b.prerelease)
