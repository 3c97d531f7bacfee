import pytest

from inventory import OutOfStock, Warehouse


@pytest.fixture
def wh():
    w = Warehouse()
    w.add_item("bolt", reorder_point=5, reorder_qty=10)
    w.receive("bolt", 1, 10, 200)
    w.receive("bolt", 2, 10, 300)
    return w


def test_add_item_rejects_duplicates(wh):
    with pytest.raises(ValueError):
        wh.add_item("bolt")


def test_unknown_sku_raises_key_error(wh):
    with pytest.raises(KeyError, match="unknown sku"):
        wh.receive("nut", 1, 1, 1)


def test_receive_increases_on_hand(wh):
    assert wh.items["bolt"].on_hand == 20
    assert wh.items["bolt"].available == 20


def test_reserve_reduces_available(wh):
    wh.reserve("bolt", 15)
    assert wh.items["bolt"].available == 5
    wh.reserve("bolt", 5)
    assert wh.items["bolt"].available == 0


def test_reserve_more_than_available_raises(wh):
    wh.reserve("bolt", 15)
    with pytest.raises(OutOfStock):
        wh.reserve("bolt", 6)
    assert wh.items["bolt"].reserved == 15


def test_reserve_rejects_non_positive(wh):
    with pytest.raises(ValueError):
        wh.reserve("bolt", 0)


def test_release_part_of_reservation(wh):
    wh.reserve("bolt", 5)
    wh.release("bolt", 2)
    assert wh.items["bolt"].reserved == 3
    with pytest.raises(ValueError):
        wh.release("bolt", 4)
    with pytest.raises(ValueError):
        wh.release("bolt", 0)
    wh.release("bolt", 3)
    assert wh.items["bolt"].reserved == 0


def test_ship_consumes_fifo_lots_and_reservation(wh):
    wh.reserve("bolt", 15)
    assert wh.ship("bolt", 12) == 10 * 200 + 2 * 300
    item = wh.items["bolt"]
    assert (item.on_hand, item.reserved) == (8, 3)
    assert wh.stock_value() == 8 * 300


def test_ship_more_than_reserved_raises(wh):
    wh.reserve("bolt", 3)
    with pytest.raises(OutOfStock):
        wh.ship("bolt", 4)
    with pytest.raises(ValueError):
        wh.ship("bolt", 0)
    assert wh.ship("bolt", 3) == 600


def test_expire_shrinks_reservations_to_stock():
    w = Warehouse()
    w.add_item("milk")
    w.receive("milk", 1, 4, 100)
    w.receive("milk", 6, 6, 100)
    w.reserve("milk", 8)
    assert w.expire("milk", today=10, shelf_life=7) == 4
    assert (w.items["milk"].on_hand, w.items["milk"].reserved) == (6, 6)


def test_expire_keeps_smaller_reservation():
    w = Warehouse()
    w.add_item("milk")
    w.receive("milk", 1, 4, 100)
    w.receive("milk", 6, 6, 100)
    w.reserve("milk", 2)
    assert w.expire("milk", today=8, shelf_life=7) == 4
    assert (w.items["milk"].on_hand, w.items["milk"].reserved) == (6, 2)


@pytest.fixture
def empty_shop():
    w = Warehouse()
    w.add_item("A", reorder_point=5, reorder_qty=10)
    w.add_item("B", reorder_point=2, reorder_qty=3, pack_size=4)
    w.add_item("D", reorder_point=0, reorder_qty=5)
    w.add_item("C", reorder_point=0, reorder_qty=5)
    return w


def test_reorder_report_sorted_by_quantity_then_sku(empty_shop):
    assert empty_shop.reorder_report() == [("A", 15), ("B", 8), ("C", 5), ("D", 5)]


def test_reorder_report_accounts_for_incoming(empty_shop):
    assert empty_shop.reorder_report({"A": 12, "C": 1}) == [("B", 8), ("D", 5)]
    assert empty_shop.reorder_report({"A": 5})[0] == ("A", 10)


def test_reorder_report_skips_well_stocked_items(empty_shop):
    empty_shop.receive("A", 1, 6, 50)
    empty_shop.receive("B", 1, 3, 50)
    assert empty_shop.reorder_report() == [("C", 5), ("D", 5)]


def test_stock_value_sums_all_lots(wh):
    wh.add_item("nut")
    wh.receive("nut", 3, 4, 25)
    assert wh.stock_value() == 10 * 200 + 10 * 300 + 4 * 25
