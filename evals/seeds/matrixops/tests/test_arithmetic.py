import pytest

from matrixops import MatrixError, add, dot, hadamard, mat_vec, multiply, scale, subtract

A = [[1, 2], [3, 4]]
B = [[5, 6], [7, 8]]


def test_add():
    assert add(A, B) == [[6, 8], [10, 12]]


def test_subtract_is_ordered():
    assert subtract(B, A) == [[4, 4], [4, 4]]
    assert subtract(A, [[0, 1], [1, 0]]) == [[1, 1], [2, 4]]


def test_hadamard():
    assert hadamard(A, B) == [[5, 12], [21, 32]]


def test_elementwise_shape_mismatch():
    with pytest.raises(MatrixError):
        add(A, [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(MatrixError):
        subtract(A, [[1, 2]])


def test_scale():
    assert scale(A, 3) == [[3, 6], [9, 12]]
    assert scale([[1, -2, 0]], -1) == [[-1, 2, 0]]


def test_dot():
    assert dot([1, 2, 3], [4, 5, 6]) == 32
    assert dot([], []) == 0
    with pytest.raises(MatrixError):
        dot([1], [1, 2])


def test_multiply_square():
    assert multiply(A, B) == [[19, 22], [43, 50]]
    assert multiply(B, A) == [[23, 34], [31, 46]]


def test_multiply_rectangular():
    a = [[1, 2, 3], [4, 5, 6]]
    b = [[7, 8], [9, 10], [11, 12]]
    assert multiply(a, b) == [[58, 64], [139, 154]]
    assert multiply(b, a) == [[39, 54, 69], [49, 68, 87], [59, 82, 105]]


def test_multiply_row_by_column():
    assert multiply([[1, 2, 3]], [[4], [5], [6]]) == [[32]]


def test_multiply_incompatible():
    with pytest.raises(MatrixError):
        multiply([[1, 2, 3]], [[1, 2, 3]])


def test_mat_vec():
    assert mat_vec([[1, 2, 3], [4, 5, 6]], [1, 0, -1]) == [-2, -2]
    with pytest.raises(MatrixError):
        mat_vec(A, [1, 2, 3])


def test_inputs_are_not_modified():
    a = [[1, 2], [3, 4]]
    multiply(a, a)
    add(a, a)
    assert a == [[1, 2], [3, 4]]
