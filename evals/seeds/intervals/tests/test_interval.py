import pytest

from intervals import Interval as I


def test_interval_rejects_start_after_end():
    with pytest.raises(ValueError):
        I(3, 1)


def test_interval_length_and_emptiness():
    assert I(1, 4).length == 3
    assert I(0.5, 2.0).length == 1.5
    assert I(2, 2).is_empty() is True
    assert I(2, 3).is_empty() is False


@pytest.mark.parametrize("x, expected", [(1, True), (3.999, True), (4, False), (0, False), (2, True)])
def test_contains_is_half_open(x, expected):
    assert I(1, 4).contains(x) is expected


@pytest.mark.parametrize(
    "other, expected",
    [((2, 5), True), ((0, 10), True), ((5, 11), False), ((-1, 3), False), ((20, 20), True)],
)
def test_contains_interval(other, expected):
    assert I(0, 10).contains_interval(I(*other)) is expected


@pytest.mark.parametrize(
    "a, b, expected",
    [((1, 3), (2, 5), True), ((1, 3), (3, 5), False), ((3, 5), (1, 3), False), ((1, 10), (2, 3), True), ((1, 2), (5, 6), False)],
)
def test_overlaps_requires_a_shared_point(a, b, expected):
    assert I(*a).overlaps(I(*b)) is expected


@pytest.mark.parametrize(
    "a, b, expected",
    [((1, 3), (3, 5), True), ((3, 5), (1, 3), True), ((1, 2), (3, 4), False), ((4, 5), (1, 3), False), ((1, 4), (2, 3), True)],
)
def test_touches_includes_adjacent_intervals(a, b, expected):
    assert I(*a).touches(I(*b)) is expected


def test_intersection_of_overlapping_intervals():
    assert I(1, 5).intersection(I(3, 8)) == I(3, 5)
    assert I(3, 8).intersection(I(1, 5)) == I(3, 5)
    assert I(0, 10).intersection(I(2, 4)) == I(2, 4)


def test_intersection_of_adjacent_intervals_is_none():
    assert I(1, 3).intersection(I(3, 5)) is None


def test_hull_covers_both():
    assert I(1, 2).hull(I(5, 7)) == I(1, 7)
    assert I(5, 7).hull(I(1, 2)) == I(1, 7)


def test_shift_moves_both_ends():
    assert I(1, 3).shift(2) == I(3, 5)
    assert I(1, 3).shift(-1) == I(0, 2)


def test_split_inside_and_at_edges():
    assert I(0, 10).split(4) == (I(0, 4), I(4, 10))
    assert I(0, 10).split(0) == (I(0, 0), I(0, 10))
    assert I(0, 10).split(10) == (I(0, 10), I(10, 10))


def test_split_outside_raises():
    with pytest.raises(ValueError, match="outside"):
        I(0, 10).split(11)
    with pytest.raises(ValueError, match="outside"):
        I(0, 10).split(-1)


def test_intervals_sort_by_start_then_end():
    assert sorted([I(3, 4), I(1, 5), I(1, 2)]) == [I(1, 2), I(1, 5), I(3, 4)]
