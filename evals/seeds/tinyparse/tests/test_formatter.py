import pytest

from tinyparse import format_expr, parse


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1+2*3", "1 + 2 * 3"),
        ("(1+2)*3", "(1 + 2) * 3"),
        ("(a-b)-c", "a - b - c"),
        ("a-(b-c)", "a - (b - c)"),
        ("a/(b*c)", "a / (b * c)"),
        ("(a<b)<c", "(a < b) < c"),
        ("a < (b < c)", "a < (b < c)"),
        ("(1<2)+3", "(1 < 2) + 3"),
        ("1 < 2+3", "1 < 2 + 3"),
    ],
)
def test_format_binary_operators_minimal_parentheses(text, expected):
    assert format_expr(parse(text)) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2^3^2", "2^3^2"),
        ("(2^3)^2", "(2^3)^2"),
        ("(-2)^2", "(-2)^2"),
        ("-2^2", "-2^2"),
        ("2^-3", "2^-3"),
        ("2^(1+1)", "2^(1 + 1)"),
        ("(1+1)^2", "(1 + 1)^2"),
    ],
)
def test_format_power_and_negation(text, expected):
    assert format_expr(parse(text)) == expected


@pytest.mark.parametrize(
    "text, expected",
    [("-(a+b)", "-(a + b)"), ("-(a*b)", "-(a * b)"), ("-a*b", "-a * b"), ("--x", "--x"), ("a*-b", "a * -b")],
)
def test_format_unary_minus(text, expected):
    assert format_expr(parse(text)) == expected


def test_format_calls_and_atoms():
    assert format_expr(parse("max(1,a*2,-b)")) == "max(1, a * 2, -b)"
    assert format_expr(parse("f()")) == "f()"
    assert format_expr(parse("2.5")) == "2.5"


def test_format_round_trips_through_parse():
    for text in ["a - (b - c) * d^2", "-(x + 1) % 3 >= y", "min(a, b) / (c - 1)"]:
        tree = parse(text)
        assert parse(format_expr(tree)) == tree
