from textkit.wrap import wrap


def test_short_text_is_one_line():
    assert wrap("a b c", 10) == ["a b c"]


def test_empty_text():
    assert wrap("", 5) == []
