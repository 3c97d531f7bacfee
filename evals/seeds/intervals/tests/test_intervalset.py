import pytest

from intervals import Interval as I
from intervals import IntervalSet


@pytest.fixture
def five():
    return IntervalSet([I(40, 45), I(0, 5), I(10, 15), I(20, 25), I(30, 35)])


def test_set_normalises_input(five):
    assert len(five) == 5
    assert five.intervals == [I(0, 5), I(10, 15), I(20, 25), I(30, 35), I(40, 45)]


@pytest.mark.parametrize(
    "x, expected",
    [
        (0, (0, 5)),
        (4.5, (0, 5)),
        (5, None),
        (10, (10, 15)),
        (24, (20, 25)),
        (25, None),
        (30, (30, 35)),
        (44, (40, 45)),
        (45, None),
        (-1, None),
        (17, None),
    ],
)
def test_find_binary_search(five, x, expected):
    found = five.find(x)
    if expected is None:
        assert found is None
    else:
        assert found == I(*expected)


def test_membership_operator(five):
    assert 3 in five
    assert 7 not in five
    assert 35 not in five


def test_empty_set_queries():
    s = IntervalSet()
    assert len(s) == 0
    assert s.find(1) is None
    assert s.bounds() is None
    assert s.total_length() == 0


def test_add_merges_bridging_interval():
    s = IntervalSet([I(0, 5), I(10, 15), I(20, 25)])
    s.add(5, 10)
    assert s.intervals == [I(0, 15), I(20, 25)]


def test_remove_splits_interval():
    s = IntervalSet([I(0, 10)])
    s.remove(3, 4)
    assert s.intervals == [I(0, 3), I(4, 10)]
    assert 3 not in s
    assert 4 in s


def test_covers(five):
    assert five.covers(1, 4) is True
    assert five.covers(0, 5) is True
    assert five.covers(7, 7) is True
    assert five.covers(4, 6) is False
    assert five.covers(3, 12) is False


def test_total_length_and_bounds(five):
    assert five.total_length() == 25
    assert five.bounds() == I(0, 45)


def test_next_free_point(five):
    assert five.next_free(2) == 5
    assert five.next_free(7) == 7
    assert five.next_free(10) == 15
    assert five.next_free(45) == 45


def test_equality_uses_normalised_form():
    assert IntervalSet([I(1, 3), I(3, 4)]) == IntervalSet([I(1, 4)])
    assert IntervalSet([I(1, 4)]) != IntervalSet([I(1, 5)])
    assert IntervalSet([I(1, 4)]) != [I(1, 4)]


def test_intervals_property_returns_a_copy():
    s = IntervalSet([I(1, 2)])
    s.intervals.append(I(5, 6))
    assert s.intervals == [I(1, 2)]
