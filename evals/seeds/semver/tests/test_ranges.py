import pytest

from semver import Range, max_satisfying, min_satisfying, satisfies
from semver.ranges import parse_comparator


@pytest.mark.parametrize(
    "version,expected",
    [("1.2.0", True), ("1.9.9", True), ("1.1.9", False), ("2.0.0", False), ("1.2.3", True)],
)
def test_caret_major(version, expected):
    assert satisfies(version, "^1.2.0") is expected


@pytest.mark.parametrize(
    "version,expected",
    [("0.2.3", True), ("0.2.9", True), ("0.3.0", False), ("0.2.2", False)],
)
def test_caret_zero_major(version, expected):
    assert satisfies(version, "^0.2.3") is expected


def test_caret_zero_minor():
    assert satisfies("0.0.3", "^0.0.3")
    assert not satisfies("0.0.4", "^0.0.3")


def test_caret_zero_major_minor_one():
    assert satisfies("0.1.5", "^0.1.2")
    assert not satisfies("0.2.0", "^0.1.2")


@pytest.mark.parametrize(
    "rng,version,expected",
    [
        ("~1.2", "1.2.0", True),
        ("~1.2", "1.2.99", True),
        ("~1.2", "1.3.0", False),
        ("~1.2.3", "1.2.2", False),
        ("~1.2.3", "1.2.3", True),
        ("~1", "1.9.0", True),
        ("~1", "1.0.0", True),
        ("~1", "0.5.0", False),
        ("~x", "7.3.1", True),
        ("~1", "2.0.0", False),
        ("~1.x", "1.5.0", True),
    ],
)
def test_tilde(rng, version, expected):
    assert satisfies(version, rng) is expected


def test_tilde_with_prerelease_lower_bound():
    assert satisfies("1.2.3-beta.4", "~1.2.3-beta.2")
    assert not satisfies("1.2.3-beta.1", "~1.2.3-beta.2")
    assert satisfies("1.2.5", "~1.2.3-beta.2")
    assert not satisfies("1.3.0", "~1.2.3-beta.2")


@pytest.mark.parametrize(
    "rng,version,expected",
    [
        (">=1.0.0 <2.0.0", "1.5.0", True),
        (">=1.0.0 <2.0.0", "2.0.0", False),
        (">=1.0.0 <2.0.0", "1.0.0", True),
        (">1.0.0", "1.0.0", False),
        (">1.0.0", "1.0.1", True),
        ("<=1.0.0", "1.0.0", True),
        ("<=1.0.0", "1.0.1", False),
        ("=1.2.3", "1.2.3", True),
        ("=1.2.3", "1.2.2", False),
        ("1.2.3", "1.2.3", True),
        ("1.2.3", "1.2.4", False),
        ("<0.5.0 || >=3.0.0", "3.1.0", True),
        ("<0.5.0 || >=3.0.0", "0.4.0", True),
        ("<0.5.0 || >=3.0.0", "1.0.0", False),
    ],
)
def test_primitive_comparators(rng, version, expected):
    assert satisfies(version, rng) is expected


@pytest.mark.parametrize(
    "rng,version,expected",
    [
        ("1.x", "1.7.3", True),
        ("1.x", "2.0.0", False),
        ("1", "0.9.0", False),
        ("1.2.*", "1.2.8", True),
        ("1.2.*", "1.3.0", False),
        ("1.2", "1.2.0", True),
        ("*", "99.0.0", True),
        ("", "0.0.1", True),
    ],
)
def test_partial_versions_and_wildcards(rng, version, expected):
    assert satisfies(version, rng) is expected


def test_prerelease_needs_matching_core_in_range():
    assert not satisfies("1.3.0-beta", "^1.2.0")
    assert satisfies("1.2.0-rc.2", ">=1.2.0-rc.1 <2.0.0")
    assert not satisfies("1.2.1-rc.2", ">=1.2.0-rc.1 <2.0.0")
    assert not satisfies("1.2.0-rc.0", ">=1.2.0-rc.1")
    assert not satisfies("2.0.0-rc.1", "*")


def test_range_object_and_in_operator():
    r = Range("^2.1.0 || 1.0.x")
    assert "2.5.0" in r
    assert "1.0.7" in r
    assert "1.1.0" not in r
    assert len(r.sets) == 2
    assert r.text == "^2.1.0 || 1.0.x"


def test_parse_comparator_expansions():
    expanded = [(op, str(v)) for op, v in parse_comparator("^1.2.3")]
    assert expanded == [(">=", "1.2.3"), ("<", "2.0.0")]
    assert [(op, str(v)) for op, v in parse_comparator("~0.4")] == [(">=", "0.4.0"), ("<", "0.5.0")]
    assert [(op, str(v)) for op, v in parse_comparator("v1.2")] == [(">=", "1.2.0"), ("<", "1.3.0")]
    assert [(op, str(v)) for op, v in parse_comparator("<=3.0.0")] == [("<=", "3.0.0")]
    assert [(op, str(v)) for op, v in parse_comparator("1.0.0-rc.1")] == [("=", "1.0.0-rc.1")]
    assert parse_comparator("x") == []


@pytest.mark.parametrize("bad", ["1.2.3.4", "x.2", "1.a", "^1.2", ">=abc"])
def test_invalid_range_tokens(bad):
    with pytest.raises(ValueError):
        Range(bad)


def test_max_and_min_satisfying():
    versions = ["1.2.3", "1.9.0", "2.0.0", "1.10.1", "0.9.0", "1.10.1-rc.1"]
    assert max_satisfying(versions, "^1.2.0") == "1.10.1"
    assert min_satisfying(versions, "^1.2.0") == "1.2.3"
    assert max_satisfying(versions, ">=3.0.0") is None
    assert min_satisfying(versions, ">=3.0.0") is None
    assert max_satisfying(versions, "<1.0.0 || 2.x") == "2.0.0"
