"""matrixops: dense matrix helpers over plain Python lists.

A matrix is a non-empty list of equally long, non-empty row lists, e.g.
``[[1, 2], [3, 4]]``. Functions never modify their arguments.
"""

from .core import (
    MatrixError,
    shape,
    validate,
    zeros,
    identity,
    transpose,
    is_square,
    trace,
    diagonal,
    is_symmetric,
)
from .arithmetic import add, subtract, scale, multiply, mat_vec, dot, hadamard
from .algebra import minor, cofactor, determinant, adjugate, inverse, power

__all__ = [
    "MatrixError",
    "shape",
    "validate",
    "zeros",
    "identity",
    "transpose",
    "is_square",
    "trace",
    "diagonal",
    "is_symmetric",
    "add",
    "subtract",
    "scale",
    "multiply",
    "mat_vec",
    "dot",
    "hadamard",
    "minor",
    "cofactor",
    "determinant",
    "adjugate",
    "inverse",
    "power",
]
