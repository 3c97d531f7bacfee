"""Element-wise operations and products."""

from .core import MatrixError, shape


def _same_shape(a, b):
    if shape(a) != shape(b):
        raise MatrixError("shapes differ: %r vs %r" % (shape(a), shape(b)))
    return shape(a)


def add(a, b):
    """Return the element-wise sum ``a + b``."""
    rows, cols = _same_shape(a, b)
    return [[a[i][j] + b[i][j] for j in range(cols)] for i in range(rows)]


def subtract(a, b):
    """Return the element-wise difference ``a - b``."""
    rows, cols = _same_shape(a, b)
    return [[a[i][j] - b[i][j] for j in range(cols)] for i in range(rows)]


def hadamard(a, b):
    """Return the element-wise product of two equally shaped matrices."""
    rows, cols = _same_shape(a, b)
    return [[a[i][j] * b[i][j] for j in range(cols)] for i in range(rows)]


def scale(m, k):
    """Return ``k * m``."""
    rows, cols = shape(m)
    return [[k * m[i][j] for j in range(cols)] for i in range(rows)]


def dot(u, v):
    """Return the dot product of two equally long vectors."""
    if len(u) != len(v):
        raise MatrixError("vectors differ in length")
    total = 0
    for i in range(len(u)):
        total += u[i] * v[i]
    return total


def multiply(a, b):
    """Return the matrix product ``a @ b``.

    ``a`` is ``n x k`` and ``b`` must be ``k x m``; the result is ``n x m``.
    """
    n, k = shape(a)
    k2, m = shape(b)
    if k != k2:
        raise MatrixError("cannot multiply %dx%d by %dx%d" % (n, k, k2, m))
    result = [[0] * m for _ in range(n)]
    for i in range(n):
        for j in range(m):
            total = 0
            for t in range(k):
                total += a[i][t] * b[t][j]
            result[i][j] = total
    return result


def mat_vec(m, v):
    """Return the product of matrix ``m`` and column vector ``v`` as a list."""
    rows, cols = shape(m)
    if len(v) != cols:
        raise MatrixError("vector length must equal column count")
    return [dot(m[i], v) for i in range(rows)]
