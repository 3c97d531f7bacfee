import pytest

from csvlite import CSVError, column, from_dicts, select_columns, to_dicts


def test_to_dicts_uses_first_row_as_header():
    rows = [["name", "age"], ["ann", "31"], ["bob", "27"]]
    assert to_dicts(rows) == [{"name": "ann", "age": "31"}, {"name": "bob", "age": "27"}]


def test_to_dicts_explicit_header_keeps_all_rows():
    rows = [["ann", "31"]]
    assert to_dicts(rows, header=["name", "age"]) == [{"name": "ann", "age": "31"}]


def test_to_dicts_empty():
    assert to_dicts([]) == []
    assert to_dicts([["a", "b"]]) == []


def test_to_dicts_pads_short_rows():
    rows = [["a", "b", "c"], ["1"]]
    assert to_dicts(rows) == [{"a": "1", "b": None, "c": None}]
    assert to_dicts(rows, fill="") == [{"a": "1", "b": "", "c": ""}]


def test_to_dicts_long_rows_strict_reports_row_number():
    rows = [["a", "b"], ["1", "2"], ["1", "2", "3"]]
    with pytest.raises(CSVError) as info:
        to_dicts(rows)
    assert info.value.line == 3
    with pytest.raises(CSVError) as info:
        to_dicts(rows[1:], header=["a", "b"])
    assert info.value.line == 2


def test_to_dicts_long_rows_lenient_truncates():
    rows = [["a", "b"], ["1", "2", "3"]]
    assert to_dicts(rows, strict=False) == [{"a": "1", "b": "2"}]


def test_to_dicts_exact_length_row_is_fine():
    assert to_dicts([["a"], ["1"]]) == [{"a": "1"}]


def test_to_dicts_duplicate_header():
    with pytest.raises(CSVError) as info:
        to_dicts([["a", "a"], ["1", "2"]])
    assert info.value.line == 1


def test_to_dicts_and_from_dicts_accept_iterators():
    rows = iter([["k", "v"], ["x", "1"]])
    assert to_dicts(rows) == [{"k": "x", "v": "1"}]
    recs = iter([{"k": "x", "v": "1"}])
    assert from_dicts(recs) == [["k", "v"], ["x", "1"]]


def test_from_dicts():
    recs = [{"x": 1, "y": 2}, {"y": 5}]
    assert from_dicts(recs) == [["x", "y"], [1, 2], ["", 5]]
    assert from_dicts(recs, fieldnames=["y"], include_header=False) == [[2], [5]]
    assert from_dicts(recs, missing=None)[2] == [None, 5]
    assert from_dicts([]) == [[]]


def test_column():
    recs = [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    assert column(recs, "b") == [2, 4]


def test_select_columns():
    rows = [["a", "b", "c"], ["1", "2"]]
    assert select_columns(rows, [2, 0]) == [["c", "a"], ["", "1"]]
    assert select_columns(rows, [-1]) == [["c"], ["2"]]
    assert select_columns(rows, [-3, 3]) == [["a", ""], ["", ""]]
