"""semver: Semantic Versioning 2.0.0 parsing, ordering, bumping and ranges."""

from .version import Version, parse, compare, compare_prerelease, is_valid
from .bump import bump, bump_major, bump_minor, bump_patch, bump_prerelease
from .ranges import Range, satisfies, max_satisfying, min_satisfying

__all__ = [
    "Version",
    "parse",
    "compare",
    "compare_prerelease",
    "is_valid",
    "bump",
    "bump_major",
    "bump_minor",
    "bump_patch",
    "bump_prerelease",
    "Range",
    "satisfies",
    "max_satisfying",
    "min_satisfying",
]
