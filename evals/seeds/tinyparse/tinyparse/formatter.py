"""Turn syntax trees back into text with as few parentheses as possible."""

PRECEDENCE = {
    "<": 1, "<=": 1, ">": 1, ">=": 1, "==": 1, "!=": 1,
    "+": 2, "-": 2,
    "*": 3, "/": 3, "%": 3,
    "neg": 4,
    "^": 5,
}
ATOM = 6


def _precedence(node):
    if node[0] == "bin":
        return PRECEDENCE[node[1]]
    if node[0] == "neg":
        return PRECEDENCE["neg"]
    return ATOM


def _wrap(text, needed):
    return f"({text})" if needed else text


def format_expr(node):
    """Format a syntax tree as text, adding parentheses only where needed.

    Binary operators are surrounded by single spaces, except ``^``. A left
    operand needs parentheses when it binds looser than its parent (for
    ``^`` and the non-associative comparisons, also when equally loose); a
    right operand also when equally loose. The right operand of ``^`` is
    parsed as a unary expression, so it only needs them below unary minus.
    """
    kind = node[0]
    if kind == "num":
        return str(node[1])
    if kind == "var":
        return node[1]
    if kind == "call":
        return node[1] + "(" + ", ".join(format_expr(a) for a in node[2]) + ")"
    if kind == "neg":
        inner = node[1]
        return "-" + _wrap(format_expr(inner), _precedence(inner) < PRECEDENCE["neg"])
    op, left, right = node[1], node[2], node[3]
    prec = PRECEDENCE[op]
    if op == "^":
        left_text = _wrap(format_expr(left), _precedence(left) <= prec)
        right_text = _wrap(format_expr(right), _precedence(right) < PRECEDENCE["neg"])
        return f"{left_text}^{right_text}"
    non_associative = prec == PRECEDENCE["=="]
    left_text = _wrap(
        format_expr(left),
        _precedence(left) < prec or (non_associative and _precedence(left) == prec),
    )
    right_text = _wrap(format_expr(right), _precedence(right) <= prec)
    return f"{left_text} {op} {right_text}"
