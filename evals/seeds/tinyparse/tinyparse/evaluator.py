"""Evaluation of syntax trees produced by :func:`tinyparse.parse`."""

from tinyparse.parser import parse


class EvalError(ValueError):
    """Raised when a well-formed expression cannot be evaluated."""


def _min(*args):
    if len(args) == 0:
        raise EvalError("min() needs at least one argument")
    return min(args)


def _max(*args):
    if len(args) == 0:
        raise EvalError("max() needs at least one argument")
    return max(args)


def _clamp(x, low, high):
    if low > high:
        raise EvalError("clamp() needs low <= high")
    return low if x < low else high if x > high else x


FUNCTIONS = {"abs": abs, "min": _min, "max": _max, "clamp": _clamp}
ARITY = {"abs": 1, "clamp": 3}


def _binary(op, a, b):
    """Apply binary operator ``op``; comparisons give 1 (true) or 0 (false)."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            raise EvalError("division by zero")
        return a / b
    if op == "%":
        if b == 0:
            raise EvalError("modulo by zero")
        return a % b
    if op == "^":
        return a**b
    comparisons = {
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
        "==": a == b,
        "!=": a != b,
    }
    return 1 if comparisons[op] else 0


def evaluate(node, env=None):
    """Evaluate a syntax tree with variables taken from the mapping ``env``.

    Raises EvalError for unknown variables or functions, wrong argument
    counts and division or modulo by zero.
    """
    env = env or {}
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "var":
        if node[1] not in env:
            raise EvalError(f"unknown variable {node[1]!r}")
        return env[node[1]]
    if kind == "neg":
        return -evaluate(node[1], env)
    if kind == "bin":
        return _binary(node[1], evaluate(node[2], env), evaluate(node[3], env))
    name, args = node[1], node[2]
    if name not in FUNCTIONS:
        raise EvalError(f"unknown function {name!r}")
    if name in ARITY and len(args) != ARITY[name]:
        raise EvalError(f"{name}() takes {ARITY[name]} arguments, got {len(args)}")
    return FUNCTIONS[name](*[evaluate(a, env) for a in args])


def calculate(text, env=None):
    """Parse and evaluate ``text`` in one step."""
    return evaluate(parse(text), env)


def variables(node):
    """Return the sorted list of distinct variable names used in ``node``."""
    found = set()
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current[0]
        if kind == "var":
            found.add(current[1])
        elif kind == "neg":
            stack.append(current[1])
        elif kind == "bin":
            stack.extend(current[2:4])
        elif kind == "call":
            stack.extend(current[2])
    return sorted(found)
