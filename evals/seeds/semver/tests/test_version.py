import pytest

from semver import Version, compare, compare_prerelease, is_valid, parse


def test_parse_full_version():
    v = parse("1.4.0-rc.1+build.5")
    assert v.core() == (1, 4, 0)
    assert v.prerelease == ("rc", "1")
    assert v.build == ("build", "5")


def test_parse_allows_v_prefix_and_whitespace():
    assert parse(" v2.0.10 ").core() == (2, 0, 10)
    assert parse("=0.0.1").core() == (0, 0, 1)


def test_parse_hyphen_inside_prerelease():
    assert parse("1.0.0-x-y-z.--").prerelease == ("x-y-z", "--")
    assert parse("1.0.0+build-7").build == ("build-7",)


@pytest.mark.parametrize(
    "text",
    ["1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.03", "1.2.-3", "a.b.c", "1.2.3-", "1.2.3-a..b", "1.2.3-01", "1.2.3+", "1.2.3-a_b", "1.2. 3", ""],
)
def test_invalid_versions(text):
    assert is_valid(text) is False
    with pytest.raises(ValueError):
        parse(text)


@pytest.mark.parametrize("text", ["0.0.0", "10.20.30", "1.0.0-0", "1.0.0-0a", "1.0.0+001", "1.0.0-alpha.0"])
def test_valid_versions(text):
    assert is_valid(text) is True


def test_str_round_trip():
    for text in ["1.2.3", "1.0.0-alpha.1", "1.0.0+sha.5114f85", "1.0.0-rc.1+b2"]:
        assert str(parse(text)) == text
    assert repr(parse("3.1.4")) == "Version('3.1.4')"


def test_version_constructor_validates():
    with pytest.raises(ValueError):
        Version(1, -1, 0)
    with pytest.raises(ValueError):
        Version("1")
    assert Version(0).core() == (0, 0, 0)


def test_compare_core_numbers_numerically():
    assert compare("1.10.0", "1.9.0") == 1
    assert compare("1.9.9", "2.0.0") == -1
    assert compare("1.2.3", "1.2.3") == 0
    assert compare("1.2.10", "1.2.9") == 1


def test_prerelease_is_lower_than_release():
    assert compare("1.0.0-rc.1", "1.0.0") == -1
    assert compare("1.0.0", "1.0.0-rc.1") == 1
    assert compare("1.0.0-rc.1", "0.9.9") == 1


def test_spec_precedence_chain():
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
             "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"]
    versions = [parse(t) for t in chain]
    for low, high in zip(versions, versions[1:]):
        assert low < high
        assert compare(high, low) == 1
    assert sorted(reversed(versions)) == versions


def test_compare_prerelease_directly():
    assert compare_prerelease((), ()) == 0
    assert compare_prerelease(("1",), ()) == -1
    assert compare_prerelease((), ("a",)) == 1
    assert compare_prerelease(("2",), ("10",)) == -1
    assert compare_prerelease(("alpha",), ("9",)) == 1
    assert compare_prerelease(("9",), ("alpha",)) == -1
    assert compare_prerelease(("a", "b"), ("a",)) == 1
    assert compare_prerelease(("b",), ("a", "z")) == 1
    assert compare_prerelease(("x", "1"), ("x", "1")) == 0


def test_build_metadata_ignored_for_equality():
    assert parse("1.0.0+a") == parse("1.0.0+b")
    assert hash(parse("1.0.0+a")) == hash(parse("1.0.0"))
    assert parse("1.0.0") != parse("1.0.0-a")
    assert len({parse("2.0.0"), parse("2.0.0+x"), parse("2.0.1")}) == 2


def test_rich_comparisons():
    a, b = parse("1.2.3"), parse("1.2.4")
    assert a < b and a <= b and b > a and b >= a
    assert not a > b
    assert a <= parse("1.2.3")
    assert not a < parse("1.2.3+build")
    assert not a > parse("1.2.3")
    assert (a == "1.2.3") is False


def test_versions_do_not_order_against_strings():
    with pytest.raises(TypeError):
        parse("1.0.0") < "2.0.0"
