import pytest

from inventory import StockItem, days_of_cover, round_up_to_pack


@pytest.mark.parametrize(
    "quantity, pack, expected",
    [(10, 6, 12), (12, 6, 12), (13, 6, 18), (1, 1, 1), (5, 1, 5), (1, 6, 6), (0, 6, 0), (-3, 6, 0), (-7, 6, 0)],
)
def test_round_up_to_pack(quantity, pack, expected):
    assert round_up_to_pack(quantity, pack) == expected


def test_round_up_to_pack_rejects_zero_pack():
    with pytest.raises(ValueError):
        round_up_to_pack(5, 0)


@pytest.mark.parametrize(
    "available, demand, expected",
    [(100, 7, 14), (14, 7, 2), (5, 1, 5), (6, 7, 0), (0, 5, 0), (-3, 5, 0), (10, 0, None), (10, -1, None)],
)
def test_days_of_cover(available, demand, expected):
    assert days_of_cover(available, demand) == expected


def test_available_subtracts_reserved():
    assert StockItem("A", on_hand=10, reserved=3).available == 7


def test_needs_reorder_at_and_below_reorder_point():
    assert StockItem("A", on_hand=5, reorder_point=5).needs_reorder() is True
    assert StockItem("A", on_hand=4, reorder_point=5).needs_reorder() is True
    assert StockItem("A", on_hand=6, reorder_point=5).needs_reorder() is False
    assert StockItem("A", on_hand=8, reserved=3, reorder_point=5).needs_reorder() is True


def test_needs_reorder_counts_incoming_units():
    item = StockItem("A", on_hand=3, reorder_point=5)
    assert item.needs_reorder(incoming=3) is False
    assert item.needs_reorder(incoming=2) is True


def test_suggested_order_fills_up_to_target():
    item = StockItem("A", on_hand=4, reserved=1, reorder_point=5, reorder_qty=20)
    assert item.suggested_order() == 22


def test_suggested_order_rounds_up_to_pack_size():
    item = StockItem("A", on_hand=4, reserved=1, reorder_point=5, reorder_qty=20, pack_size=10)
    assert item.suggested_order() == 30


def test_suggested_order_subtracts_incoming():
    item = StockItem("A", on_hand=3, reorder_point=5, reorder_qty=20)
    assert item.suggested_order(incoming=2) == 20
    assert item.suggested_order(incoming=10) == 0


def test_suggested_order_zero_above_reorder_point():
    assert StockItem("A", on_hand=6, reorder_point=5, reorder_qty=20).suggested_order() == 0
