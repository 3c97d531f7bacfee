"""Producing the next version."""

from .version import Version, parse


def _as_version(v):
    return parse(v) if isinstance(v, str) else v


def bump_major(v):
    """Next major version. ``1.2.3 -> 2.0.0``; ``2.0.0-rc.1 -> 2.0.0``."""
    v = _as_version(v)
    if v.is_prerelease() and v.minor == 0 and v.patch == 0:
        return Version(v.major, 0, 0)
    return Version(v.major + 1, 0, 0)


def bump_minor(v):
    """Next minor version. ``1.2.3 -> 1.3.0``; ``1.3.0-beta -> 1.3.0``."""
    v = _as_version(v)
    if v.is_prerelease() and v.patch == 0:
        return Version(v.major, v.minor, 0)
    return Version(v.major, v.minor + 1, 0)


def bump_patch(v):
    """Next patch version. ``1.2.3 -> 1.2.4``; ``1.2.4-alpha -> 1.2.4``."""
    v = _as_version(v)
    if v.is_prerelease():
        return Version(v.major, v.minor, v.patch)
    return Version(v.major, v.minor, v.patch + 1)


def bump_prerelease(v, identifier="rc"):
    """Next pre-release.

    * a release gets the next patch and ``-<identifier>.0``:
      ``1.2.3 -> 1.2.4-rc.0``
    * the same identifier with a trailing number increments it:
      ``1.2.4-rc.0 -> 1.2.4-rc.1``
    * the same identifier without a number gains ``.0``:
      ``1.2.4-rc -> 1.2.4-rc.0``
    * a different identifier restarts at 0: ``1.2.4-alpha.3 -> 1.2.4-rc.0``
    """
    v = _as_version(v)
    if not v.is_prerelease():
        return Version(v.major, v.minor, v.patch + 1, (identifier, "0"))
    pre = v.prerelease
    if pre[0] != identifier:
        return Version(v.major, v.minor, v.patch, (identifier, "0"))
    if len(pre) > 1 and pre[-1].isdigit():
        return Version(v.major, v.minor, v.patch, pre[:-1] + (str(int(pre[-1]) + 1),))
    return Version(v.major, v.minor, v.patch, pre + ("0",))


def bump(v, part, identifier="rc"):
    """Bump ``part`` (``major``, ``minor``, ``patch`` or ``prerelease``); return a string."""
    funcs = {"major": bump_major, "minor": bump_minor, "patch": bump_patch}
    if part == "prerelease":
        return str(bump_prerelease(v, identifier))
    if part not in funcs:
        raise ValueError("unknown part %r" % part)
    return str(funcs[part](v))
