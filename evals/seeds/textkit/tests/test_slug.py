import pytest

from textkit import slugify, truncate


def test_slugify_lowercases_and_joins_words_with_dashes():
    assert slugify("Hello, World!") == "hello-world"


def test_slugify_strips_leading_and_trailing_separators():
    assert slugify("  --Leading and trailing--  ") == "leading-and-trailing"


def test_slugify_folds_accented_letters():
    assert slugify("Crème Brûlée") == "creme-brulee"
    assert slugify("Straße") == "strasse"


def test_slugify_keeps_digits():
    assert slugify("Version 2.0 release") == "version-2-0-release"


def test_slugify_custom_separator():
    assert slugify("Hello big World", separator="_") == "hello_big_world"


def test_slugify_empty_and_symbol_only_input():
    assert slugify("") == ""
    assert slugify("!!! ???") == ""


@pytest.mark.parametrize(
    "max_length, expected",
    [
        (0, "the-quick-brown-fox"),
        (9, "the-quick"),
        (10, "the-quick"),
        (11, "the-quick-b"),
        (19, "the-quick-brown-fox"),
        (50, "the-quick-brown-fox"),
    ],
)
def test_slugify_max_length_cuts_and_drops_trailing_separator(max_length, expected):
    assert slugify("The quick brown fox", max_length=max_length) == expected


def test_truncate_returns_text_that_fits_unchanged():
    assert truncate("hello", 5) == "hello"
    assert truncate("hello", 10) == "hello"


def test_truncate_appends_ellipsis():
    assert truncate("hello world", 8) == "hello..."
    assert truncate("abcdefgh", 6) == "abc..."
    assert truncate("abcdefgh", 4) == "a..."


def test_truncate_drops_whitespace_before_ellipsis():
    assert truncate("hello world", 9) == "hello..."


def test_truncate_width_not_larger_than_ellipsis():
    assert truncate("hello world", 3) == "..."
    assert truncate("hello world", 2) == ".."
    assert truncate("hello world", 0) == ""


def test_truncate_custom_ellipsis():
    assert truncate("abcdef", 4, ellipsis="~") == "abc~"


def test_truncate_negative_width_raises():
    with pytest.raises(ValueError):
        truncate("abc", -1)
