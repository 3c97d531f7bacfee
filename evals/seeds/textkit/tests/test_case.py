import pytest

from textkit import (
    split_words,
    to_camel_case,
    to_kebab_case,
    to_pascal_case,
    to_snake_case,
    to_title_case,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("fooBar", ["foo", "bar"]),
        ("HTTPServer", ["http", "server"]),
        ("getHTTPResponseCode", ["get", "http", "response", "code"]),
        ("snake_case_name", ["snake", "case", "name"]),
        ("version2Update", ["version2", "update"]),
        ("ABC", ["abc"]),
        ("ABc", ["a", "bc"]),
        ("A", ["a"]),
        ("  spaced   out  ", ["spaced", "out"]),
        ("", []),
    ],
)
def test_split_words_boundaries(text, expected):
    assert split_words(text) == expected


def test_to_snake_case_from_pascal():
    assert to_snake_case("HelloWorld") == "hello_world"


def test_to_kebab_case_from_mixed_separators():
    assert to_kebab_case("some_value here") == "some-value-here"


def test_to_camel_case_lowercases_first_word():
    assert to_camel_case("hello_world_again") == "helloWorldAgain"
    assert to_camel_case("Single") == "single"


def test_to_camel_case_empty():
    assert to_camel_case("") == ""
    assert to_camel_case("__") == ""


def test_to_pascal_case_capitalises_every_word():
    assert to_pascal_case("hello-world") == "HelloWorld"
    assert to_pascal_case("XMLHttpRequest") == "XmlHttpRequest"


def test_to_title_case_keeps_small_words_lowercase():
    assert to_title_case("the lord of the rings") == "The Lord of the Rings"
    assert to_title_case("a tale OF two cities") == "A Tale of Two Cities"


def test_to_title_case_capitalises_last_small_word():
    assert to_title_case("what is it for") == "What Is It For"


def test_to_title_case_single_small_word_and_spacing():
    assert to_title_case("of") == "Of"
    assert to_title_case("  the   end ") == "The End"
    assert to_title_case("") == ""
