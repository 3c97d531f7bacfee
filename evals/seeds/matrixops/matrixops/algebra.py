"""Determinants, inverses and powers of square matrices."""

from fractions import Fraction

from .arithmetic import multiply
from .core import MatrixError, identity, require_square, transpose


def minor(m, row, col):
    """Return ``m`` with row ``row`` and column ``col`` removed."""
    n = require_square(m)
    if n < 2:
        raise MatrixError("a 1x1 matrix has no minors")
    if not (0 <= row < n and 0 <= col < n):
        raise IndexError("row/col out of range")
    return [r[:col] + r[col + 1:] for i, r in enumerate(m) if i != row]


def cofactor(m, row, col):
    """Return the signed minor ``(-1) ** (row + col) * det(minor)``."""
    sign = 1 if (row + col) % 2 == 0 else -1
    return sign * determinant(minor(m, row, col))


def determinant(m):
    """Return the determinant, by cofactor expansion along the first row.

    1x1 and 2x2 matrices use the closed forms. Exact for int/Fraction input.
    """
    n = require_square(m)
    if n == 1:
        return m[0][0]
    if n == 2:
        return m[0][0] * m[1][1] - m[0][1] * m[1][0]
    total = 0
    for col in range(n):
        if m[0][col] != 0:
            total += m[0][col] * cofactor(m, 0, col)
    return total


def adjugate(m):
    """Return the adjugate (transpose of the cofactor matrix)."""
    n = require_square(m)
    if n == 1:
        return [[1]]
    cof = [[cofactor(m, i, j) for j in range(n)] for i in range(n)]
    return transpose(cof)


def inverse(m):
    """Return the exact inverse as a matrix of Fractions.

    Raises MatrixError if the matrix is singular (determinant 0).
    """
    det = determinant(m)
    if det == 0:
        raise MatrixError("matrix is singular")
    adj = adjugate(m)
    return [[Fraction(x) / det for x in row] for row in adj]


def power(m, exponent):
    """Return ``m`` raised to a non-negative integer power.

    Uses exponentiation by squaring; ``power(m, 0)`` is the identity.
    """
    n = require_square(m)
    if exponent < 0:
        raise ValueError("exponent must be >= 0")
    result = identity(n)
    base = [row[:] for row in m]
    while exponent > 0:
        if exponent % 2 == 1:
            result = multiply(result, base)
        base = multiply(base, base)
        exponent //= 2
    return result
