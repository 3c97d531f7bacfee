import pytest

from matrixops import (
    MatrixError,
    diagonal,
    identity,
    is_square,
    is_symmetric,
    shape,
    trace,
    transpose,
    validate,
    zeros,
)


def test_shape_of_rectangular_matrix():
    assert shape([[1, 2, 3], [4, 5, 6]]) == (2, 3)
    assert shape([[7]]) == (1, 1)


def test_shape_rejects_ragged_rows():
    with pytest.raises(MatrixError):
        shape([[1, 2], [3]])


@pytest.mark.parametrize("bad", [[], [[]], [[1, 2], [3]], "abc", [[1], 2]])
def test_validate_rejects_malformed(bad):
    with pytest.raises(MatrixError):
        validate(bad)


def test_validate_returns_matrix():
    m = [[1, 2], [3, 4]]
    assert validate(m) is m


def test_zeros():
    assert zeros(2, 3) == [[0, 0, 0], [0, 0, 0]]
    assert zeros(1, 1) == [[0]]
    with pytest.raises(MatrixError):
        zeros(0, 2)
    with pytest.raises(MatrixError):
        zeros(2, 0)


def test_zeros_rows_are_independent():
    m = zeros(2, 2)
    m[0][0] = 5
    assert m == [[5, 0], [0, 0]]


def test_identity():
    assert identity(3) == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert identity(1) == [[1]]


def test_transpose_rectangular():
    assert transpose([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]
    assert transpose([[1], [2]]) == [[1, 2]]


def test_is_square():
    assert is_square([[1, 2], [3, 4]])
    assert not is_square([[1, 2, 3], [4, 5, 6]])


def test_diagonal_of_non_square():
    assert diagonal([[1, 2, 3], [4, 5, 6]]) == [1, 5]
    assert diagonal([[1, 2], [3, 4], [5, 6]]) == [1, 4]


def test_trace():
    assert trace([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == 15
    assert trace([[-4]]) == -4
    with pytest.raises(MatrixError):
        trace([[1, 2]])


def test_is_symmetric():
    assert is_symmetric([[1, 7, 3], [7, 4, 5], [3, 5, 6]]) is True
    assert is_symmetric([[1, 7, 3], [7, 4, 5], [3, 0, 6]]) is False
    assert is_symmetric([[1, 2], [3, 1]]) is False
    assert is_symmetric([[9]]) is True
