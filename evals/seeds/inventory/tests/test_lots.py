import pytest

from inventory import Lot, LotQueue


@pytest.fixture
def queue():
    q = LotQueue()
    q.receive(10, 5, 100)
    q.receive(12, 10, 120)
    q.receive(12, 3, 130)
    return q


def test_quantity_and_value(queue):
    assert queue.quantity == 18
    assert queue.value() == 2090


def test_receive_validates_input(queue):
    with pytest.raises(ValueError):
        queue.receive(11, 1, 100)
    with pytest.raises(ValueError):
        queue.receive(13, 0, 100)
    with pytest.raises(ValueError):
        queue.receive(13, 1, -1)
    queue.receive(13, 1, 0)
    assert queue.quantity == 19


def test_peek_cost_is_fifo_and_does_not_consume(queue):
    assert queue.peek_cost(7) == 740
    assert queue.peek_cost(18) == 2090
    assert queue.peek_cost(0) == 0
    assert queue.quantity == 18


def test_peek_cost_more_than_stock_raises(queue):
    with pytest.raises(ValueError):
        queue.peek_cost(19)


def test_consume_partial_lot_keeps_remainder(queue):
    assert queue.consume(7) == 740
    assert queue.lots == [Lot(12, 8, 120), Lot(12, 3, 130)]


def test_consume_exact_lot_drops_it(queue):
    assert queue.consume(5) == 500
    assert queue.lots == [Lot(12, 10, 120), Lot(12, 3, 130)]


def test_consume_across_three_lots(queue):
    assert queue.consume(16) == 500 + 1200 + 130
    assert queue.lots == [Lot(12, 2, 130)]


def test_consume_too_much_raises_and_keeps_stock(queue):
    with pytest.raises(ValueError):
        queue.consume(20)
    assert queue.quantity == 18


@pytest.mark.parametrize(
    "lots, expected",
    [([(3, 100), (1, 103)], 101), ([(1, 100), (1, 101)], 101), ([(2, 100), (1, 101)], 100), ([(4, 250)], 250)],
)
def test_average_cost_rounds_half_up(lots, expected):
    q = LotQueue()
    for day, (quantity, cost) in enumerate(lots):
        q.receive(day, quantity, cost)
    assert q.average_cost() == expected


def test_average_cost_of_empty_queue_is_none():
    assert LotQueue().average_cost() is None


def test_expire_drops_lots_at_least_shelf_life_old():
    q = LotQueue()
    q.receive(1, 5, 10)
    q.receive(5, 3, 10)
    q.receive(8, 2, 10)
    assert q.expire(today=10, shelf_life=5) == 8
    assert q.lots == [Lot(8, 2, 10)]


def test_expire_nothing_when_all_fresh(queue):
    assert queue.expire(today=12, shelf_life=10) == 0
    assert queue.quantity == 18


def test_oldest_age(queue):
    assert queue.oldest_age(15) == 5
    assert LotQueue().oldest_age(15) is None
