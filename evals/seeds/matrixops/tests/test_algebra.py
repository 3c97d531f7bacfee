from fractions import Fraction

import pytest

from matrixops import (
    MatrixError,
    adjugate,
    cofactor,
    determinant,
    identity,
    inverse,
    minor,
    multiply,
    power,
)

M3 = [[2, -3, 1], [2, 0, -1], [1, 4, 5]]


def test_minor():
    assert minor(M3, 0, 0) == [[0, -1], [4, 5]]
    assert minor(M3, 1, 2) == [[2, -3], [1, 4]]
    assert minor(M3, 2, 1) == [[2, 1], [2, -1]]


def test_minor_errors():
    with pytest.raises(MatrixError):
        minor([[1]], 0, 0)
    with pytest.raises(IndexError):
        minor(M3, 3, 0)
    with pytest.raises(IndexError):
        minor(M3, 0, -1)
    with pytest.raises(IndexError):
        minor(M3, 0, 3)
    with pytest.raises(IndexError):
        minor(M3, -1, 0)


def test_cofactor_signs():
    assert cofactor(M3, 0, 0) == 4
    assert cofactor(M3, 0, 1) == -11
    assert cofactor(M3, 1, 1) == 9
    assert cofactor(M3, 2, 1) == 4


def test_determinant_small():
    assert determinant([[7]]) == 7
    assert determinant([[1, 2], [3, 4]]) == -2
    assert determinant([[3, 8], [4, 6]]) == -14


def test_determinant_3x3():
    assert determinant(M3) == 49
    assert determinant([[6, 1, 1], [4, -2, 5], [2, 8, 7]]) == -306


def test_determinant_with_leading_zero():
    assert determinant([[0, 1, 2], [3, 4, 5], [6, 7, 9]]) == -3


def test_determinant_4x4():
    m = [[1, 0, 2, -1], [3, 0, 0, 5], [2, 1, 4, -3], [1, 0, 5, 0]]
    assert determinant(m) == 30


def test_determinant_singular_and_non_square():
    assert determinant([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == 0
    with pytest.raises(MatrixError):
        determinant([[1, 2, 3], [4, 5, 6]])


def test_adjugate():
    assert adjugate([[1, 2], [3, 4]]) == [[4, -2], [-3, 1]]
    assert adjugate([[5]]) == [[1]]


def test_inverse_2x2():
    inv = inverse([[4, 7], [2, 6]])
    assert inv == [[Fraction(3, 5), Fraction(-7, 10)], [Fraction(-1, 5), Fraction(2, 5)]]


def test_inverse_times_matrix_is_identity():
    assert multiply(M3, inverse(M3)) == identity(3)


def test_inverse_of_singular_raises():
    with pytest.raises(MatrixError):
        inverse([[1, 2], [2, 4]])


def test_power_zero_and_one():
    assert power([[2, 3], [4, 5]], 0) == [[1, 0], [0, 1]]
    assert power([[2, 3], [4, 5]], 1) == [[2, 3], [4, 5]]


def test_power_fibonacci():
    fib = [[1, 1], [1, 0]]
    assert power(fib, 10) == [[89, 55], [55, 34]]
    assert power(fib, 5) == [[8, 5], [5, 3]]


def test_power_matches_repeated_multiplication():
    m = [[1, 2], [0, 3]]
    expected = m
    for _ in range(6):
        expected = multiply(expected, m)
    assert power(m, 7) == expected


def test_power_errors():
    with pytest.raises(ValueError):
        power([[1]], -1)
    with pytest.raises(MatrixError):
        power([[1, 2]], 2)
