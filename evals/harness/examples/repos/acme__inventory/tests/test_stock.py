import pytest

from inventory.stock import Stock


def test_add_and_count():
    s = Stock()
    s.add("apple", 3)
    assert s.count("apple") == 3


def test_remove_some():
    s = Stock()
    s.add("apple", 3)
    s.remove("apple", 2)
    assert s.count("apple") == 1


def test_add_rejects_zero():
    with pytest.raises(ValueError):
        Stock().add("apple", 0)
