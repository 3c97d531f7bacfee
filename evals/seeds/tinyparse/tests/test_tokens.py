import pytest

from tinyparse import ParseError, Token, tokenize


def test_tokenize_numbers_and_operator_with_positions():
    assert tokenize("1 + 23") == [
        Token("NUM", "1", 0),
        Token("OP", "+", 2),
        Token("NUM", "23", 4),
        Token("END", "", 6),
    ]


def test_tokenize_two_char_operator_and_decimal():
    assert tokenize("x<=3.5") == [
        Token("NAME", "x", 0),
        Token("OP", "<=", 1),
        Token("NUM", "3.5", 3),
        Token("END", "", 6),
    ]


def test_tokenize_leading_dot_number():
    assert tokenize(".5") == [Token("NUM", ".5", 0), Token("END", "", 2)]


def test_tokenize_dot_number_after_operator():
    assert tokenize("a+.5") == [
        Token("NAME", "a", 0),
        Token("OP", "+", 1),
        Token("NUM", ".5", 2),
        Token("END", "", 4),
    ]


def test_tokenize_call_punctuation_and_identifiers():
    tokens = tokenize("a_1(b, c2)")
    assert [t.kind for t in tokens] == ["NAME", "LPAREN", "NAME", "COMMA", "NAME", "RPAREN", "END"]
    assert [t.text for t in tokens] == ["a_1", "(", "b", ",", "c2", ")", ""]
    assert [t.pos for t in tokens] == [0, 3, 4, 5, 7, 9, 10]


def test_tokenize_single_char_comparisons():
    assert [t.text for t in tokenize("a<b>c")] == ["a", "<", "b", ">", "c", ""]
    assert [t.text for t in tokenize("a!=b==c")] == ["a", "!=", "b", "==", "c", ""]


def test_tokenize_empty_text_gives_only_end():
    assert tokenize("") == [Token("END", "", 0)]
    assert tokenize("   ") == [Token("END", "", 3)]


@pytest.mark.parametrize("text, pos", [("3.", 1), ("3.x", 1), ("2 $ 3", 2), ("a!b", 1), ("a< =b", 3), ("2 + .", 4), (".x", 0)])
def test_tokenize_errors_report_position(text, pos):
    with pytest.raises(ParseError) as info:
        tokenize(text)
    assert info.value.pos == pos
