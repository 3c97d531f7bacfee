"""Construction and basic structural queries."""


class MatrixError(ValueError):
    """Raised for malformed matrices or incompatible shapes."""


def validate(m):
    """Check that ``m`` is a non-empty rectangular matrix; return it."""
    if not isinstance(m, list) or len(m) == 0:
        raise MatrixError("matrix must be a non-empty list of rows")
    width = len(m[0])
    if width == 0:
        raise MatrixError("rows must be non-empty")
    for row in m:
        if not isinstance(row, list) or len(row) != width:
            raise MatrixError("all rows must have the same length")
    return m


def shape(m):
    """Return ``(rows, cols)``."""
    validate(m)
    return len(m), len(m[0])


def zeros(rows, cols):
    """Return a ``rows x cols`` matrix of zeros."""
    if rows < 1 or cols < 1:
        raise MatrixError("dimensions must be at least 1")
    return [[0] * cols for _ in range(rows)]


def identity(n):
    """Return the ``n x n`` identity matrix."""
    m = zeros(n, n)
    for i in range(n):
        m[i][i] = 1
    return m


def transpose(m):
    """Return the transpose: row ``i`` column ``j`` becomes row ``j`` column ``i``."""
    rows, cols = shape(m)
    return [[m[i][j] for i in range(rows)] for j in range(cols)]


def is_square(m):
    """Return True if ``m`` has as many rows as columns."""
    rows, cols = shape(m)
    return rows == cols


def require_square(m):
    """Raise MatrixError unless ``m`` is square; return its size."""
    if not is_square(m):
        raise MatrixError("matrix must be square")
    return len(m)


def diagonal(m):
    """Return the main diagonal ``[m[0][0], m[1][1], ...]`` (any shape)."""
    rows, cols = shape(m)
    return [m[i][i] for i in range(min(rows, cols))]


def trace(m):
    """Return the sum of the main diagonal of a square matrix."""
    require_square(m)
    return sum(diagonal(m))


def is_symmetric(m):
    """Return True if a square matrix equals its transpose."""
    n = require_square(m)
    for i in range(n):
        for j in range(i + 1, n):
            if m[i][j] != m[j][i]:
                return False
    return True
