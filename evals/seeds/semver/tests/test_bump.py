import pytest

from semver import Version, bump, bump_major, bump_minor, bump_patch, bump_prerelease


@pytest.mark.parametrize(
    "start,expected",
    [("1.2.3", "2.0.0"), ("0.9.9", "1.0.0"), ("2.0.0-rc.1", "2.0.0"), ("2.1.0-rc.1", "3.0.0"), ("2.0.1-a", "3.0.0")],
)
def test_bump_major(start, expected):
    assert str(bump_major(start)) == expected


@pytest.mark.parametrize(
    "start,expected",
    [("1.2.3", "1.3.0"), ("1.3.0-beta", "1.3.0"), ("1.3.1-beta", "1.4.0"), ("0.0.7", "0.1.0")],
)
def test_bump_minor(start, expected):
    assert str(bump_minor(start)) == expected


@pytest.mark.parametrize(
    "start,expected",
    [("1.2.3", "1.2.4"), ("1.2.4-alpha", "1.2.4"), ("0.0.0", "0.0.1"), ("1.2.3+build.9", "1.2.4")],
)
def test_bump_patch(start, expected):
    assert str(bump_patch(start)) == expected


@pytest.mark.parametrize(
    "start,ident,expected",
    [
        ("1.2.3", "rc", "1.2.4-rc.0"),
        ("1.2.4-rc.0", "rc", "1.2.4-rc.1"),
        ("1.2.4-rc.9", "rc", "1.2.4-rc.10"),
        ("1.2.4-rc", "rc", "1.2.4-rc.0"),
        ("1.2.4-alpha.3", "rc", "1.2.4-rc.0"),
        ("1.2.4-beta.x", "beta", "1.2.4-beta.x.0"),
    ],
)
def test_bump_prerelease(start, ident, expected):
    assert str(bump_prerelease(start, ident)) == expected


def test_bump_prerelease_single_numeric_identifier():
    assert str(bump_prerelease("1.0.0-5", "5")) == "1.0.0-5.0"


def test_bumps_accept_version_objects():
    assert bump_minor(Version(1, 2, 3)) == Version(1, 3, 0)


def test_bump_dispatch():
    assert bump("1.2.3", "major") == "2.0.0"
    assert bump("1.2.3", "minor") == "1.3.0"
    assert bump("1.2.3", "patch") == "1.2.4"
    assert bump("1.2.3", "prerelease", "beta") == "1.2.4-beta.0"
    with pytest.raises(ValueError):
        bump("1.2.3", "micro")
