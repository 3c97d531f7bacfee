"""Problem statements read like a user's bug report: a reproducer, what came back, what was expected — written from
real pytest output — and never name the file, the line or the fix."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evals.factory.statements import failure_sections, statement_for

PACKAGE = {
    "shop/__init__.py": "from shop.cart import Cart, Unknown, parse_qty, price_of, stock, total\n",
    "shop/cart.py": (
        "def total(prices, discount=0):\n"
        "    return sum(prices) - discount + 1\n"  # the bug: + 1
        "\n\n"
        "class Cart:\n"
        "    def __init__(self):\n"
        "        self.items = []\n\n"
        "    def add(self, name, qty):\n"
        "        if qty < 0:\n"  # the bug: 0 should be rejected too
        "            raise ValueError('qty must be positive')\n"
        "        self.items.append((name, qty))\n\n"
        "    def count(self):\n"
        "        return len(self.items) * 2\n"  # the bug: * 2
        "\n\n"
        "class Unknown(KeyError):\n"
        "    pass\n\n\n"
        "def price_of(name):\n"
        "    raise Unknown(name)\n"  # the bug: always raises
        "\n\n"
        "def stock():\n"
        "    return {'apple': 2, 'pear': 7, 'plum': 0, 'quince': 4}\n"  # the bug: plum should be 1
        "\n\n"
        "def parse_qty(text):\n"
        "    return text\n"  # the bug: int(text)
    ),
}
TESTS = {
    "tests/test_cart.py": (
        "import pytest\n\n"
        "from shop import Cart, parse_qty, price_of, stock, total\n\n\n"
        "@pytest.fixture\n"
        "def cart():\n"
        "    c = Cart()\n"
        "    c.add('apple', 2)\n"
        "    return c\n\n\n"
        "@pytest.mark.parametrize('prices, expected', [([1, 2], 3), ([], 0)])\n"
        "def test_total(prices, expected):\n"
        "    assert total(prices) == expected\n\n\n"
        "def test_count(cart):\n"
        "    cart.add('pear', 1)\n"
        "    assert cart.count() == 2\n\n\n"
        "def test_rejects_zero():\n"
        "    with pytest.raises(ValueError):\n"
        "        Cart().add('plum', 0)\n\n\n"
        "def test_add_keeps_items():\n"
        "    assert Cart().items == []\n\n\n"
        "PRICES = [1, 2]\n\n\n"
        "def test_total_of_constant():\n"
        "    result = total(PRICES)\n"
        "    assert result == 3\n\n\n"
        "def test_price_of():\n"
        "    assert price_of('apple') == 3\n\n\n"
        "def test_stock():\n"
        "    assert stock() == {'apple': 2, 'pear': 7, 'plum': 1, 'quince': 4}\n\n\n"
        "def test_parse_qty_gives_an_int():\n"
        "    result = parse_qty('3')\n"
        "    assert type(result) is int\n\n\n"
        "@pytest.fixture\n"
        "def fig_price():\n"
        "    p = price_of('fig')\n"
        "    return p\n\n\n"
        "def test_fig(fig_price):\n"
        "    assert fig_price == 2\n"
    ),
}


@pytest.fixture(scope="module")
def pytest_log(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("shop")
    for name, text in {**PACKAGE, **TESTS}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out.stdout


def statement(log: str, test: str) -> str:
    return statement_for([test], log, TESTS, package="shop", seed="s")


def test_sections_are_found_by_test_name(pytest_log):
    sections = failure_sections(pytest_log)
    assert {
        "test_total[prices0-3]",
        "test_total[prices1-0]",
        "test_count",
        "test_rejects_zero",
        "test_total_of_constant",
        "test_price_of",
        "test_stock",
        "test_parse_qty_gives_an_int",
        "test_fig",
    } <= set(sections)


def test_wrong_value_shows_the_call_with_its_arguments_what_came_back_and_what_was_expected(pytest_log):
    text = statement(pytest_log, "tests/test_cart.py::test_total[prices0-3]")
    assert "total([1, 2])" in text and "`4`" in text and "`3`" in text
    assert "from shop import Cart, parse_qty, price_of, stock, total" in text


def test_fixture_setup_is_inlined_into_the_reproducer(pytest_log):
    text = statement(pytest_log, "tests/test_cart.py::test_count")
    assert "cart = c" in text and "c.add('apple', 2)" in text and "cart.add('pear', 1)" in text
    assert "`cart.count()`" in text and "`4`" in text


def test_missing_exception_is_reported_as_such(pytest_log):
    text = statement(pytest_log, "tests/test_cart.py::test_rejects_zero")
    assert "Cart().add('plum', 0)" in text and "should raise `ValueError`" in text


def test_result_variables_and_module_constants_are_resolved(pytest_log):
    text = statement(pytest_log, "tests/test_cart.py::test_total_of_constant")
    assert "PRICES = [1, 2]" in text and "`total(PRICES)` " in text and "`4`" in text


def test_exceptions_are_named_as_a_traceback_ends(pytest_log):
    text = statement(pytest_log, "tests/test_cart.py::test_price_of")
    assert text.startswith("`price_of` raises Unknown") and "`Unknown: 'apple'`" in text and "shop.cart" not in text


def test_a_value_pytest_shortened_is_reported_with_its_difference(pytest_log):
    text = statement(pytest_log, "tests/test_cart.py::test_stock")
    assert "`stock()` does not give" in text and "'plum'" in text and "The difference" in text


def test_reprs_that_are_not_python_and_builtins_around_the_call(pytest_log):
    text = statement(pytest_log, "tests/test_cart.py::test_parse_qty_gives_an_int")
    assert "`parse_qty`" in text.splitlines()[0] and "`<class 'str'>`" in text and "`int`" in text


def test_a_fixture_that_breaks_is_reported_at_the_call_that_broke(pytest_log):
    text = statement(pytest_log, "tests/test_cart.py::test_fig")
    assert text.startswith("`price_of` raises Unknown") and "p = price_of('fig')" in text
    assert "`Unknown: 'fig'`" in text and "fig_price" not in text


def test_statement_never_names_the_file_line_or_fix(pytest_log):
    for test in (
        "tests/test_cart.py::test_total[prices0-3]",
        "tests/test_cart.py::test_count",
        "tests/test_cart.py::test_rejects_zero",
    ):
        text = statement(pytest_log, test)
        assert "cart.py" not in text and "line" not in text.lower() and "+ 1" not in text and "* 2" not in text
        assert "test_" not in text  # the hidden tests are not named either


def test_no_usable_output_still_gives_a_statement():
    text = statement_for(["tests/test_cart.py::test_count"], "", TESTS, package="shop", seed="s")
    assert text.strip() and "shop" in text
    text = statement_for(["tests/test_gone.py::test_x"], "", TESTS, package="shop", seed="s")
    assert "`shop` misbehaves" in text
