import pytest

from tinyparse import ParseError, parse


def test_parse_multiplication_binds_tighter_than_addition():
    assert parse("1 + 2 * 3") == ("bin", "+", ("num", 1), ("bin", "*", ("num", 2), ("num", 3)))


def test_parse_subtraction_is_left_associative():
    assert parse("8 - 3 - 2") == ("bin", "-", ("bin", "-", ("num", 8), ("num", 3)), ("num", 2))


def test_parse_power_is_right_associative():
    assert parse("2^3^2") == ("bin", "^", ("num", 2), ("bin", "^", ("num", 3), ("num", 2)))


def test_parse_unary_minus_binds_looser_than_power():
    assert parse("-2^2") == ("neg", ("bin", "^", ("num", 2), ("num", 2)))
    assert parse("2^-1") == ("bin", "^", ("num", 2), ("neg", ("num", 1)))


def test_parse_number_types():
    assert parse("42") == ("num", 42)
    assert isinstance(parse("42")[1], int)
    assert parse("1.5") == ("num", 1.5)


def test_parse_comparison_is_loosest():
    assert parse("a + 1 <= b") == ("bin", "<=", ("bin", "+", ("var", "a"), ("num", 1)), ("var", "b"))


def test_parse_calls_with_zero_and_many_arguments():
    assert parse("f()") == ("call", "f", [])
    assert parse("max(1, x)") == ("call", "max", [("num", 1), ("var", "x")])


def test_parse_parentheses_override_precedence():
    assert parse("(1 + 2) * 3") == ("bin", "*", ("bin", "+", ("num", 1), ("num", 2)), ("num", 3))


@pytest.mark.parametrize(
    "text, pos",
    [("1 +", 3), ("(1 + 2", 6), ("1 2", 2), (")", 0), ("max(1,)", 6), ("1 < 2 < 3", 6), ("", 0)],
)
def test_parse_errors_report_position(text, pos):
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.pos == pos
