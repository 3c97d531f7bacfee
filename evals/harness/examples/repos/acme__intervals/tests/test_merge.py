from intervals import merge


def test_empty():
    assert merge([]) == []


def test_overlapping():
    assert merge([(1, 3), (2, 5)]) == [(1, 5)]


def test_unsorted_input():
    assert merge([(8, 9), (1, 4), (3, 5)]) == [(1, 5), (8, 9)]
