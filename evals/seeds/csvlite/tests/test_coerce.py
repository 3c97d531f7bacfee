import pytest

from csvlite import coerce_row, coerce_rows, coerce_value
from csvlite.coerce import convert


@pytest.mark.parametrize(
    "text,expected",
    [
        ("42", 42),
        ("-7", -7),
        ("+3", 3),
        ("3.5", 3.5),
        ("1e3", 1000.0),
        ("true", True),
        ("Yes", True),
        ("FALSE", False),
        ("no", False),
        ("", None),
        ("NULL", None),
        ("na", None),
        ("hello", "hello"),
        ("-", "-"),
        (" 12 ", 12),
        (" hi ", " hi "),
    ],
)
def test_coerce_value(text, expected):
    result = coerce_value(text)
    assert result == expected
    assert type(result) is type(expected)


def test_convert_explicit_types():
    assert convert("5", int) == 5
    assert convert("5", float) == 5.0
    assert convert("007", str) == "007"
    assert convert(" yes ", bool) is True
    assert convert("no", bool) is False
    assert convert("  ", int) is None


def test_convert_bad_bool():
    with pytest.raises(ValueError):
        convert("maybe", bool)


def test_coerce_row_with_types():
    rec = {"zip": "02134", "n": "3", "ok": "true", "extra": 7}
    assert coerce_row(rec, {"zip": str}) == {"zip": "02134", "n": 3, "ok": True, "extra": 7}


def test_coerce_rows():
    recs = [{"a": "1"}, {"a": "x"}]
    assert coerce_rows(recs, {"a": str}) == [{"a": "1"}, {"a": "x"}]
    assert coerce_rows(recs) == [{"a": 1}, {"a": "x"}]
