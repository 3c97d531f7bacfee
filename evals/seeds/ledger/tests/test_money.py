import pytest

from ledger import apply_rate, format_amount, parse_amount, round_half_even, round_half_up


@pytest.mark.parametrize(
    "text, cents",
    [
        ("12.34", 1234),
        ("12.3", 1230),
        ("12", 1200),
        (".5", 50),
        ("0.05", 5),
        ("$1,234.50", 123450),
        ("-5.01", -501),
        ("(12.00)", -1200),
        (" ( $7.25 ) ", -725),
        ("-$0.99", -99),
        ("1000000", 100000000),
    ],
)
def test_parse_amount_to_cents(text, cents):
    assert parse_amount(text) == cents


@pytest.mark.parametrize("text", ["12.345", "12.", "", "$", "abc", "1.2.3", "--5", "1 2", "+5"])
def test_parse_amount_rejects_malformed(text):
    with pytest.raises(ValueError):
        parse_amount(text)


@pytest.mark.parametrize(
    "cents, text",
    [
        (123456, "$1,234.56"),
        (-123456, "-$1,234.56"),
        (0, "$0.00"),
        (5, "$0.05"),
        (-5, "-$0.05"),
        (100, "$1.00"),
        (99999, "$999.99"),
        (100000, "$1,000.00"),
        (12345678, "$123,456.78"),
        (123456789012, "$1,234,567,890.12"),
    ],
)
def test_format_amount(cents, text):
    assert format_amount(cents) == text


def test_format_amount_custom_symbol_and_separator():
    assert format_amount(123456, symbol="€", separator=" ") == "€1 234.56"


def test_format_then_parse_round_trip():
    for cents in (0, 1, 99, 100, 1001, -123456, 98765432):
        assert parse_amount(format_amount(cents)) == cents


@pytest.mark.parametrize(
    "num, den, expected",
    [(5, 2, 3), (-5, 2, -3), (7, 3, 2), (8, 3, 3), (-7, 3, -2), (-8, 3, -3), (1, 3, 0), (0, 5, 0), (10, 5, 2)],
)
def test_round_half_up_rounds_halves_away_from_zero(num, den, expected):
    assert round_half_up(num, den) == expected


@pytest.mark.parametrize(
    "num, den, expected",
    [(5, 2, 2), (7, 2, 4), (-5, 2, -2), (-7, 2, -4), (1, 2, 0), (3, 2, 2), (8, 3, 3), (7, 3, 2), (250, 100, 2), (251, 100, 3), (350, 100, 4), (-251, 100, -3)],
)
def test_round_half_even_rounds_halves_to_even(num, den, expected):
    assert round_half_even(num, den) == expected


def test_rounding_by_one_is_identity():
    assert round_half_up(7, 1) == 7
    assert round_half_even(-7, 1) == -7


def test_rounding_rejects_non_positive_denominator():
    for rounder in (round_half_up, round_half_even):
        with pytest.raises(ValueError):
            rounder(5, 0)
        with pytest.raises(ValueError):
            rounder(5, -2)


def test_apply_rate_half_up_by_default():
    assert apply_rate(1000, 825) == 83
    assert apply_rate(1999, 825) == 165
    assert apply_rate(-1000, 825) == -83
    assert apply_rate(1005, 1000) == 101


def test_apply_rate_half_even():
    assert apply_rate(1000, 825, half_even=True) == 82
    assert apply_rate(1005, 1000, half_even=True) == 100
    assert apply_rate(1015, 1000, half_even=True) == 102


def test_apply_rate_exact_and_zero_rates():
    assert apply_rate(12345, 0) == 0
    assert apply_rate(100, 10000) == 100
    assert apply_rate(250, 200) == 5
