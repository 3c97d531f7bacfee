from csvlite import format_row, needs_quoting, parse, quote_field, write


def test_needs_quoting():
    assert needs_quoting("a,b")
    assert needs_quoting('say "x"')
    assert needs_quoting("two\nlines")
    assert needs_quoting("cr\r")
    assert needs_quoting(" lead")
    assert needs_quoting("trail ")
    assert needs_quoting("plain text") is False
    assert needs_quoting("") is False


def test_needs_quoting_custom_delimiter():
    assert not needs_quoting("a,b", delimiter=";")
    assert needs_quoting("a;b", delimiter=";")
    assert needs_quoting("it's", quotechar="'")


def test_quote_field_escapes_quotes():
    assert quote_field('a "b" c') == '"a ""b"" c"'
    assert quote_field("x,y") == '"x,y"'
    assert quote_field("plain") == "plain"


def test_quote_field_non_strings():
    assert quote_field(None) == ""
    assert quote_field(42) == "42"
    assert quote_field(1.5) == "1.5"
    assert quote_field(True) == "true"
    assert quote_field(False) == "false"


def test_quote_field_always():
    assert quote_field("abc", always=True) == '"abc"'
    assert quote_field("", always=True) == '""'


def test_format_row():
    assert format_row(["a", "b,c", 3]) == 'a,"b,c",3'
    assert format_row(["a", None, ""]) == "a,,"
    assert format_row([""]) == '""'
    assert format_row([]) == ""


def test_write_with_line_ending_and_delimiter():
    assert write([["a", "b"], [1, 2]]) == "a,b\n1,2\n"
    assert write([["a", "b"]], delimiter="|", line_ending="\r\n") == "a|b\r\n"
    assert write([]) == ""


def test_round_trip():
    rows = [["id", "text"], ["1", 'He said "no", twice'], ["2", "multi\nline"], [""], ["3", " pad "]]
    assert parse(write(rows)) == rows
    assert parse(write(rows, delimiter=";", quotechar="'"), delimiter=";", quotechar="'") == rows
