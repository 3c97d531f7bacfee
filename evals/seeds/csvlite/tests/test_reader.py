import pytest

from csvlite import CSVError, iter_records, parse, parse_line


def test_simple_rows():
    assert parse("a,b,c\n1,2,3\n") == [["a", "b", "c"], ["1", "2", "3"]]


def test_no_trailing_newline():
    assert parse("a,b\n1,2") == [["a", "b"], ["1", "2"]]


def test_empty_text_has_no_records():
    assert parse("") == []


def test_empty_fields():
    assert parse(",a,,\n") == [["", "a", "", ""]]


def test_crlf_line_endings():
    assert parse("a,b\r\n1,2\r\n") == [["a", "b"], ["1", "2"]]


def test_bare_carriage_return_ends_record():
    assert parse("a\rb") == [["a"], ["b"]]
    assert parse("a\r") == [["a"]]
    assert parse("x,y\r\r\n") == [["x", "y"], [""]]


def test_quoted_field_with_delimiter_and_newline():
    text = 'name,note\n"Smith, J","line1\nline2"\n'
    assert parse(text) == [["name", "note"], ["Smith, J", "line1\nline2"]]


def test_doubled_quotes_are_unescaped():
    assert parse_line('"she said ""hi""",x') == ['she said "hi"', "x"]
    assert parse_line('""""') == ['"']


def test_quoted_empty_field_at_end():
    assert parse_line('a,""') == ["a", ""]
    assert parse('""') == [[""]]


def test_quote_inside_unquoted_field_is_literal():
    assert parse_line('ab"c,d') == ['ab"c', "d"]


def test_blank_lines():
    assert parse("a\n\nb\n") == [["a"], [""], ["b"]]
    assert parse("a\n\nb\n", skip_blank=True) == [["a"], ["b"]]


def test_custom_delimiter_and_quotechar():
    assert parse("a;'x;y';c", delimiter=";", quotechar="'") == [["a", "x;y", "c"]]
    assert parse("1\t2\t3", delimiter="\t") == [["1", "2", "3"]]


def test_unterminated_quote_reports_line():
    with pytest.raises(CSVError) as info:
        parse('a,b\n"open\nstill open\n')
    assert info.value.line == 4


def test_doubled_quote_at_end_of_text_is_unterminated():
    with pytest.raises(CSVError, match="unterminated"):
        parse('"a""')


def test_csv_error_message_includes_line():
    err = CSVError("bad thing", 7)
    assert str(err) == "line 7: bad thing"
    assert err.line == 7


def test_text_after_closing_quote_is_an_error():
    with pytest.raises(CSVError) as info:
        parse('ok\nok\n"abc"x,1\n')
    assert info.value.line == 3


def test_quoted_newlines_advance_line_count():
    with pytest.raises(CSVError) as info:
        parse('"a\nb"\n"c"d')
    assert info.value.line == 3


@pytest.mark.parametrize("delim,quote", [(",", ","), (";;", '"'), (",", "\n"), ("\r", '"')])
def test_invalid_dialect(delim, quote):
    with pytest.raises(ValueError):
        parse("a", delimiter=delim, quotechar=quote)


def test_parse_line_single_record_only():
    assert parse_line("x,y") == ["x", "y"]
    assert parse_line("") == []
    with pytest.raises(CSVError) as info:
        parse_line("x\ny")
    assert info.value.line == 2


def test_iter_records_is_lazy_generator():
    records = iter_records("1\n2\n")
    assert next(records) == ["1"]
    assert next(records) == ["2"]
