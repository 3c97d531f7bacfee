import pytest

from textkit import center, indent, wrap


def test_wrap_packs_words_greedily():
    assert wrap("the quick brown fox", 10) == ["the quick", "brown fox"]


def test_wrap_line_that_exactly_fits_width():
    assert wrap("aaa bbb", 7) == ["aaa bbb"]
    assert wrap("aaa bbb", 6) == ["aaa", "bbb"]


def test_wrap_splits_long_words_into_chunks():
    assert wrap("abcdefghij xy", 4) == ["abcd", "efgh", "ij", "xy"]
    assert wrap("abcdefgh", 4) == ["abcd", "efgh"]


def test_wrap_flushes_current_line_before_long_word():
    assert wrap("hi abcdefgh", 4) == ["hi", "abcd", "efgh"]


def test_wrap_width_one_and_blank_text():
    assert wrap("a b", 1) == ["a", "b"]
    assert wrap("   ", 5) == []


def test_wrap_rejects_width_below_one():
    with pytest.raises(ValueError, match="at least 1"):
        wrap("a", 0)


def test_center_even_padding():
    assert center("ab", 6) == "  ab  "


def test_center_extra_fill_goes_right():
    assert center("abc", 6, "*") == "*abc**"
    assert center("a", 4, "-") == "-a--"


def test_center_text_not_shorter_than_width_unchanged():
    assert center("abc", 3) == "abc"
    assert center("abcdef", 4) == "abcdef"


def test_indent_prefixes_every_line():
    assert indent("a\nb", "> ") == "> a\n> b"


def test_indent_leaves_blank_lines_alone():
    assert indent("a\n\n  \nb", "  ") == "  a\n\n  \n  b"


def test_indent_skip_first_line():
    assert indent("def f():\nreturn 1", "    ", skip_first=True) == "def f():\n    return 1"
