from textkit.slug import slugify


def test_single_word():
    assert slugify("Hello") == "hello"


def test_custom_separator_single_word():
    assert slugify("World", sep="_") == "world"
