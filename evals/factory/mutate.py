"""Bug synthesis: mutation operators chosen by name from a registry.

An operator reads a module's source and yields `Mutation`s: one span of the source replaced by other text. Edits are
made on the text (positions from `ast`), so the rest of the file keeps its formatting and the gold patch that undoes
a bug is a small diff. Every mutation is checked to parse and to change the AST; whether it is a *bug* is decided
later, by running the project's tests through the evaluation harness (see `build.py`).

Only code inside function bodies (and their default values) is touched: module constants, docstrings, f-strings
(whose node positions are unreliable before Python 3.12) and `raise`/`assert` statements are left alone, and so are
the bodies of `while` loops (their condition is fair game): a bug there mostly makes a loop that never ends, which
costs a whole test-run timeout to find out and would make a poor task.

    from evals.factory.mutate import OPERATORS, find_mutations
    muts = find_mutations(source, "textkit/wrap.py", operators=["flip_comparison"])
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------------------------------
# Mutations and source positions


@dataclass(frozen=True)
class Mutation:
    """Replace `source[start:end]` (UTF-8 byte offsets) with `replacement`. `line` is 1-based, for reports."""

    operator: str
    path: str
    start: int
    end: int
    line: int
    original: str
    replacement: str

    @property
    def key(self) -> str:
        """Stable short id of this exact edit (independent of the seed)."""
        raw = f"{self.path}\0{self.operator}\0{self.start}\0{self.end}\0{self.replacement}"
        return hashlib.sha256(raw.encode()).hexdigest()[:10]

    def apply(self, source: str) -> str:
        data = source.encode()
        return (data[: self.start] + self.replacement.encode() + data[self.end :]).decode()

    def describe(self) -> dict:
        """Where and what, for the instance's `mutation` field (never shown to the policy)."""
        return {
            "operator": self.operator,
            "path": self.path,
            "line": self.line,
            "original": self.original,
            "replacement": self.replacement,
            "key": self.key,
        }


class _Source:
    """Byte-offset arithmetic over a module's text (ast columns are UTF-8 byte offsets)."""

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode()
        self.line_starts = [0]
        for i, b in enumerate(self.data):
            if b == 0x0A:
                self.line_starts.append(i + 1)

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)

    def seg(self, a: int, b: int) -> str:
        return self.data[a:b].decode()

    def node_text(self, node: ast.AST) -> str:
        return self.seg(self.start(node), self.end(node))

    def line_span(self, node: ast.stmt) -> tuple[int, int] | None:
        """Byte span of the whole lines a statement occupies, or None when it shares a line with other code."""
        first = self.line_starts[node.lineno - 1]
        if self.data[first : self.start(node)].strip():
            return None
        end = self.end(node)
        nl = self.data.find(b"\n", end)
        nl = len(self.data) if nl == -1 else nl
        rest = self.data[end:nl].strip()
        if rest and not rest.startswith(b"#"):
            return None
        return first, min(nl + 1, len(self.data))

    def indent_of(self, node: ast.stmt) -> str:
        first = self.line_starts[node.lineno - 1]
        return self.seg(first, self.start(node))


Operator = Callable[[ast.Module, _Source, str], Iterator[Mutation]]
OPERATORS: dict[str, Operator] = {}


def register(name: str) -> Callable[[Operator], Operator]:
    def deco(fn: Operator) -> Operator:
        OPERATORS[name] = fn
        return fn

    return deco


def get_operator(name: str) -> Operator:
    try:
        return OPERATORS[name]
    except KeyError:
        raise KeyError(f"unknown mutation operator {name!r}; valid names: {', '.join(sorted(OPERATORS))}") from None


def find_mutations(
    source: str, path: str, operators: list[str] | None = None, lines: tuple[int, int] | None = None
) -> list[Mutation]:
    """Every mutation the named operators (default: all) can make in `source`, deduplicated by resulting text.

    Each returned mutation parses and changes the AST. Order: by position, then operator name. `lines` (first, last)
    keeps those on these lines only, and only they are re-parsed: the check is what costs (a 2,700-line module has
    ~1,600 candidates), while the operators still read the whole module (loop counters named anywhere).
    """
    tree = ast.parse(source)
    src = _Source(source)
    baseline = ast.dump(tree)
    seen: set[str] = set()
    out: list[Mutation] = []
    for name in sorted(operators if operators is not None else OPERATORS):
        for mut in get_operator(name)(tree, src, path):
            if lines and not lines[0] <= mut.line <= lines[1]:
                continue
            mutated = mut.apply(source)
            if mutated in seen:
                continue
            try:
                changed = ast.dump(ast.parse(mutated)) != baseline
            except SyntaxError:
                continue
            if changed:
                seen.add(mutated)
                out.append(mut)
    return sorted(out, key=lambda m: (m.start, m.end, m.operator, m.replacement))


# ---------------------------------------------------------------------------------------------------------------------
# Which nodes operators may touch


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _body_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """Nodes inside function bodies, skipping docstrings, f-strings, raise/assert and nested function definitions
    (those are visited as functions of their own)."""
    for fn in _functions(tree):
        stack: list[ast.AST] = list(reversed(_body_without_docstring(fn.body)))
        while stack:
            node = stack.pop()
            if isinstance(
                node,
                (ast.JoinedStr, ast.Raise, ast.Assert, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda),
            ):
                continue
            yield node
            if isinstance(node, ast.While):
                stack.append(node.test)  # the condition only; see the module docstring
                continue
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _body_without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[1:]
    return body


def _blocks(tree: ast.Module) -> Iterator[list[ast.stmt]]:
    """Statement lists inside functions (function bodies, branches, loop bodies), docstrings removed."""
    for node in _body_nodes(tree):
        if isinstance(node, ast.While):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block
        for handler in getattr(node, "handlers", []) or []:
            yield handler.body
    for fn in _functions(tree):
        body = _body_without_docstring(fn.body)
        if body:
            yield body


def _int_value(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


_ATOMIC = (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Constant, ast.BinOp)


def _shift(src: _Source, node: ast.AST, delta: int) -> str:
    """`node ± 1` as text: literals are recomputed, `x - 1` becomes `x`, anything else gets `+ 1` / `- 1`."""
    value = _int_value(node)
    if value is not None:
        return str(value + delta)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and _int_value(node.right) is not None:
        k = _int_value(node.right) * (1 if isinstance(node.op, ast.Add) else -1) + delta
        left = src.node_text(node.left)
        if k == 0:
            return left
        return f"{left} + {k}" if k > 0 else f"{left} - {-k}"
    text = src.node_text(node)
    if not isinstance(node, _ATOMIC):
        text = f"({text})"
    return f"{text} + {delta}" if delta > 0 else f"{text} - {-delta}"


def _mut(op: str, path: str, src: _Source, a: int, b: int, replacement: str) -> Mutation:
    line = src.data.count(b"\n", 0, a) + 1
    return Mutation(op, path, a, b, line, src.seg(a, b), replacement)


def _swap_token(
    op: str, path: str, src: _Source, a: int, b: int, pattern: str, table: dict[str, str]
) -> Iterator[Mutation]:
    """Replace the operator token found in `src[a:b]` (the text between two operands) using `table`."""
    between = src.seg(a, b)
    if "#" in between or "\\" in between:
        return
    match = re.search(pattern, between)
    if not match:
        return
    token = re.sub(r"\s+", " ", match.group(0))
    if token not in table:
        return
    start = a + len(between[: match.start()].encode())
    end = a + len(between[: match.end()].encode())
    yield _mut(op, path, src, start, end, table[token])


# ---------------------------------------------------------------------------------------------------------------------
# The operators

_CMP_RE = r"\bnot\s+in\b|\bis\s+not\b|\bis\b|\bin\b|==|!=|<=|>=|<|>"
_CMP_FLIP = {
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "==": "!=",
    "!=": "==",
    "is": "is not",
    "is not": "is",
    "in": "not in",
    "not in": "in",
}


@register("flip_comparison")
def flip_comparison(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """`<` ↔ `<=`, `>` ↔ `>=`, `==` ↔ `!=`, `is` ↔ `is not`, `in` ↔ `not in`."""
    for node in _body_nodes(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for left, right in zip(operands, operands[1:]):
                yield from _swap_token(
                    "flip_comparison", path, src, src.end(left), src.start(right), _CMP_RE, _CMP_FLIP
                )


_ARITH_RE = r"\*\*=?|//=?|<<=?|>>=?|[-+*/%]=?"
_ARITH_FLIP = {
    "+": "-",
    "-": "+",
    "*": "/",
    "/": "*",
    "//": "/",
    "%": "//",
    "**": "*",
    "+=": "-=",
    "-=": "+=",
    "*=": "/=",
    "/=": "*=",
    "//=": "/=",
    "%=": "//=",
}


@register("flip_arithmetic")
def flip_arithmetic(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """`+` ↔ `-`, `*` ↔ `/`, `//` → `/`, `%` → `//`, `**` → `*` (and the augmented forms `+=` ...)."""
    for node in _body_nodes(tree):
        if isinstance(node, ast.BinOp) and isinstance(
            node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
        ):
            if (
                isinstance(node.op, ast.Mod)
                and isinstance(node.left, (ast.Constant, ast.JoinedStr))
                and isinstance(getattr(node.left, "value", None), str)
            ):
                continue  # "%s" % x is formatting, not arithmetic
            yield from _swap_token(
                "flip_arithmetic", path, src, src.end(node.left), src.start(node.right), _ARITH_RE, _ARITH_FLIP
            )
        elif isinstance(node, ast.AugAssign):
            yield from _swap_token(
                "flip_arithmetic", path, src, src.end(node.target), src.start(node.value), _ARITH_RE, _ARITH_FLIP
            )


@register("flip_boolean")
def flip_boolean(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """`and` ↔ `or` (one occurrence at a time)."""
    for node in _body_nodes(tree):
        if isinstance(node, ast.BoolOp):
            for left, right in zip(node.values, node.values[1:]):
                yield from _swap_token(
                    "flip_boolean",
                    path,
                    src,
                    src.end(left),
                    src.start(right),
                    r"\band\b|\bor\b",
                    {"and": "or", "or": "and"},
                )


@register("off_by_one_range")
def off_by_one_range(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """`range(n)` → `range(n ± 1)`, `range(a, b)` → start or stop moved by one."""
    for node in _body_nodes(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "range"
            and node.args
            and not node.keywords
            and not any(isinstance(a, ast.Starred) for a in node.args)
        ):
            for arg in node.args[:2]:
                for delta in (1, -1):
                    yield _mut("off_by_one_range", path, src, src.start(arg), src.end(arg), _shift(src, arg, delta))


@register("off_by_one_slice")
def off_by_one_slice(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """`x[a:b]` → one bound moved by one."""
    for node in _body_nodes(tree):
        if isinstance(node, ast.Slice):
            for bound in (node.lower, node.upper):
                if bound is None:
                    continue
                for delta in (1, -1):
                    yield _mut(
                        "off_by_one_slice", path, src, src.start(bound), src.end(bound), _shift(src, bound, delta)
                    )


def _loop_counters(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.For, ast.comprehension))
            and isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Name)
        ):
            if node.iter.func.id == "range" and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif (
                node.iter.func.id == "enumerate"
                and isinstance(node.target, ast.Tuple)
                and node.target.elts
                and isinstance(node.target.elts[0], ast.Name)
            ):
                names.add(node.target.elts[0].id)
    return names


@register("off_by_one_index")
def off_by_one_index(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """`x[i]` → `x[i ± 1]` where the index is an integer, `k ± const`, or a loop counter."""
    counters = _loop_counters(tree)
    for node in _body_nodes(tree):
        if not isinstance(node, ast.Subscript) or isinstance(node.slice, (ast.Slice, ast.Tuple)):
            continue
        index = node.slice
        numeric = (
            _int_value(index) is not None
            or (
                isinstance(index, ast.BinOp)
                and isinstance(index.op, (ast.Add, ast.Sub))
                and (_int_value(index.right) is not None or _int_value(index.left) is not None)
            )
            or (isinstance(index, ast.Name) and index.id in counters)
        )
        if numeric:
            for delta in (1, -1):
                yield _mut("off_by_one_index", path, src, src.start(index), src.end(index), _shift(src, index, delta))


def _negated(src: _Source, test: ast.expr) -> str:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        text = src.node_text(test.operand)
        return text if isinstance(test.operand, (*_ATOMIC, ast.Compare)) else f"({text})"
    text = src.node_text(test)
    return f"not {text}" if isinstance(test, (*_ATOMIC, ast.Compare, ast.UnaryOp)) else f"not ({text})"


@register("negate_condition")
def negate_condition(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """`if c:` → `if not c:` (also `elif`, conditional expressions and comprehension filters)."""
    for node in _body_nodes(tree):
        tests = []
        if isinstance(node, (ast.If, ast.IfExp)):
            tests = [node.test]
        elif isinstance(node, ast.comprehension):
            tests = list(node.ifs)
        for test in tests:
            yield _mut("negate_condition", path, src, src.start(test), src.end(test), _negated(src, test))


_REMOVABLE = (
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Expr,
    ast.If,
    ast.For,
    ast.While,
    ast.Raise,
    ast.Continue,
    ast.Break,
)


@register("remove_statement")
def remove_statement(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """Delete one statement (assignment, call, `if` block, loop, `raise`, `break`/`continue`); a block left empty
    gets `pass`."""
    for block in _blocks(tree):
        for stmt in block:
            if not isinstance(stmt, _REMOVABLE):
                continue
            span = src.line_span(stmt)
            if span is None:
                continue
            replacement = f"{src.indent_of(stmt)}pass\n" if len(block) == 1 else ""
            yield _mut("remove_statement", path, src, span[0], span[1], replacement)


_SWAPPABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)


@register("swap_statements")
def swap_statements(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """Swap two adjacent simple statements (assignments, calls) of the same block."""
    for block in _blocks(tree):
        for first, second in zip(block, block[1:]):
            if not (isinstance(first, _SWAPPABLE) and isinstance(second, _SWAPPABLE)):
                continue
            a, b = src.line_span(first), src.line_span(second)
            if a is None or b is None or a[1] != b[0]:
                continue  # blank lines or comments between them: leave alone
            text_a, text_b = src.seg(*a), src.seg(*b)
            if not text_b.endswith("\n"):
                text_b += "\n"
                text_a = text_a.rstrip("\n")
            yield _mut("swap_statements", path, src, a[0], b[1], text_b + text_a)


@register("change_constant")
def change_constant(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """An integer literal `n` → `n + 1` (and `n - 1` when n > 1); `True` ↔ `False`. Defaults of parameters count."""
    nodes: list[ast.AST] = list(_body_nodes(tree))
    for fn in _functions(tree):
        nodes.extend(d for d in [*fn.args.defaults, *fn.args.kw_defaults] if d is not None)
    seen: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.UnaryOp) and _int_value(node) is not None:
            targets = [(node, _int_value(node))]
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            targets = [(node, node.value)]
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            yield _mut("change_constant", path, src, src.start(node), src.end(node), str(not node.value))
            continue
        else:
            continue
        for target, value in targets:
            a = src.start(target)
            if a in seen:
                continue  # `-1` is seen both as the UnaryOp and as its operand; keep the UnaryOp
            seen.add(a)
            if isinstance(target, ast.UnaryOp):
                seen.add(src.start(target.operand))
            yield _mut("change_constant", path, src, a, src.end(target), str(value + 1))
            if value > 1:
                yield _mut("change_constant", path, src, a, src.end(target), str(value - 1))


_NO_SWAP = {
    "print",
    "isinstance",
    "issubclass",
    "getattr",
    "setattr",
    "hasattr",
    "super",
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
}


@register("swap_arguments")
def swap_arguments(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """`f(a, b, ...)` → `f(b, a, ...)` for the first two positional arguments."""
    for node in _body_nodes(tree):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        if any(isinstance(a, ast.Starred) for a in node.args[:2]):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name in _NO_SWAP:
            continue
        first, second = node.args[0], node.args[1]
        ta, tb = src.node_text(first), src.node_text(second)
        if ta == tb:
            continue
        between = src.seg(src.end(first), src.start(second))
        yield _mut("swap_arguments", path, src, src.start(first), src.end(second), tb + between + ta)


@register("wrong_return")
def wrong_return(tree: ast.Module, src: _Source, path: str) -> Iterator[Mutation]:
    """`return x` → the negation of a boolean, a pair returned in the wrong order, or the unchanged input."""
    for fn in _functions(tree):
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args] if a.arg not in ("self", "cls")]
        for node in _own_returns(fn):
            if node.value is None:
                continue
            value = node.value
            text = src.node_text(value)
            if isinstance(value, (ast.Compare, ast.BoolOp)) or (
                isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)
            ):
                replacement = _negated(src, value)
            elif (
                isinstance(value, ast.Tuple)
                and len(value.elts) >= 2
                and not any(isinstance(e, ast.Starred) for e in value.elts)
            ):
                first, second = value.elts[0], value.elts[1]
                if src.node_text(first) == src.node_text(second):
                    continue
                a, b = src.start(first), src.end(second)
                between = src.seg(src.end(first), src.start(second))
                yield _mut("wrong_return", path, src, a, b, src.node_text(second) + between + src.node_text(first))
                continue
            elif params and text != params[0] and not isinstance(value, ast.Constant):
                replacement = params[0]
            else:
                continue
            yield _mut("wrong_return", path, src, src.start(value), src.end(value), replacement)


def _own_returns(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.Return]:
    """`return` statements of `fn` itself, not of functions nested in it."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return):
            yield node
        stack.extend(ast.iter_child_nodes(node))
