import pytest

from tinyparse import EvalError, calculate, evaluate, parse, variables


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("10 - 4 - 3", 3),
        ("2^3^2", 512),
        ("-2^2", -4),
        ("(-2)^2", 4),
        ("100 / 10 / 5", 2.0),
        ("7 / 2", 3.5),
        ("17 % 5", 2),
        ("-17 % 5", 3),
        ("2 * 3 % 4", 2),
        ("2 - -3", 5),
        ("0.5 + 0.25", 0.75),
    ],
)
def test_calculate_arithmetic(text, expected):
    assert calculate(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1 < 2", 1),
        ("2 < 2", 0),
        ("2 <= 2", 1),
        ("3 <= 2", 0),
        ("3 > 2", 1),
        ("2 > 2", 0),
        ("2 >= 3", 0),
        ("3 >= 3", 1),
        ("1 + 1 == 2", 1),
        ("1 != 1", 0),
        ("1 != 2", 1),
    ],
)
def test_calculate_comparisons_give_one_or_zero(text, expected):
    assert calculate(text) == expected


def test_calculate_with_variables():
    assert calculate("x * y + 1", {"x": 3, "y": 4}) == 13


def test_evaluate_tree_keeps_operand_order():
    tree = ("bin", "-", ("num", 10), ("var", "a"))
    assert evaluate(tree, {"a": 4}) == 6
    assert evaluate(("bin", "^", ("num", 2), ("num", 5))) == 32


def test_unknown_variable_or_function_raises():
    with pytest.raises(EvalError):
        calculate("x + 1")
    with pytest.raises(EvalError):
        calculate("foo(1)")


def test_builtin_functions():
    assert calculate("abs(-5)") == 5
    assert calculate("min(4, 2, 8)") == 2
    assert calculate("max(4, 2, 8)") == 8


@pytest.mark.parametrize(
    "text, expected",
    [("clamp(15, 0, 10)", 10), ("clamp(-3, 0, 10)", 0), ("clamp(5, 0, 10)", 5), ("clamp(5, 5, 5)", 5)],
)
def test_clamp_limits_value(text, expected):
    assert calculate(text) == expected


@pytest.mark.parametrize("text", ["clamp(1, 5, 2)", "min()", "max()", "abs(1, 2)", "clamp(1, 2)"])
def test_bad_function_calls_raise(text):
    with pytest.raises(EvalError):
        calculate(text)


def test_division_and_modulo_by_zero_raise():
    with pytest.raises(EvalError):
        calculate("1 / 0")
    with pytest.raises(EvalError):
        calculate("1 % (2 - 2)")
    assert calculate("0 / 5") == 0.0


def test_variables_lists_distinct_names_sorted():
    assert variables(parse("b * a + max(a, c) - -d")) == ["a", "b", "c", "d"]
    assert variables(parse("1 + 2")) == []
