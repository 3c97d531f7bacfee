"""Problem statements written from the failing tests, the way a user reports a bug: a small reproducer (what was
called), what came back, what was expected. Never the file, the line or the fix.

The facts come from a real harness run of the buggy base: pytest's `-rA` output (the failing statement's location,
the values pytest's assertion rewriting printed, the exception that escaped) read together with the test source
(to build the reproducer: the test's body up to the failing statement, module fixtures inlined, parametrized
arguments substituted). When the output does not say enough, a plainer statement built from the test source alone
is used; the instance is never dropped for want of a nice statement.
"""

from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass

MAX_SNIPPET_LINES = 14
MAX_VALUE_CHARS = 160
MAX_CONSTANT_CHARS = 600


@dataclass(frozen=True)
class Failure:
    """One failing test, as far as the log and the test source tell."""

    test: str  # node id
    kind: str  # wrong_value | mismatch | compare | falsy | truthy | raised | did_not_raise | unknown
    snippet: list[str]  # reproducer lines (setup + the failing call), dedented
    expr: str = ""  # the expression that misbehaves, arguments substituted
    actual: str = ""  # what it returned (repr as pytest printed it) or the exception
    expected: str = ""  # what the test expected (source text or value)
    op: str = "=="
    function: str = ""  # the called function's name, for the title
    details: tuple[str, ...] = ()  # pytest's explanation of a mismatch it could not print whole


# ---------------------------------------------------------------------------------------------------------------------
# Reading pytest's output

_HEADER = re.compile(r"^_{2,} (.+?) _{2,}$")
_LOCATION = re.compile(r"^([\w./-]+\.py):(\d+): ?(.*)$")


def failure_sections(log: str) -> dict[str, list[str]]:
    """{section title: lines} of the FAILURES / ERRORS part of pytest's output (title = `test_x[p]`, `Cls.test_y`)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in log.splitlines():
        if line.startswith("=") and line.rstrip("=").strip().startswith(("short test summary", "PASSES")):
            current = None
            continue
        m = _HEADER.match(line)
        if m:
            title = m.group(1)
            title = title.removeprefix("ERROR at setup of ").removeprefix("ERROR at teardown of ")
            current = sections.setdefault(title, [])
            continue
        if current is not None:
            current.append(line)
    return sections


def section_title(nodeid: str) -> str:
    parts = nodeid.split("::")[1:]
    return ".".join(parts)


def _first_error_lines(lines: list[str]) -> list[str]:
    """The last block of `E   ` lines (the exception pytest reports), without the prefix."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in lines + [""]:
        if line.startswith("E ") or line == "E":
            current.append(line[1:].strip())
        elif current:
            blocks.append(current)
            current = []
    return blocks[-1] if blocks else []


def _funcargs(lines: list[str]) -> dict[str, str]:
    """Arguments pytest printed above the test's source (`a = 'x', n = 3`), kept only when valid Python."""
    for line in lines:
        if not line.strip():
            continue
        if not re.match(r"^\w+ = ", line):
            return {}
        try:
            call = ast.parse(f"f({line})", mode="eval").body
        except SyntaxError:
            return {}
        if not isinstance(call, ast.Call):
            return {}
        return {kw.arg: ast.unparse(kw.value) for kw in call.keywords if kw.arg}
    return {}


# ---------------------------------------------------------------------------------------------------------------------
# Reading the test source


class _TestSource:
    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines()
        self.tree = ast.parse(text)
        self.fixtures = {
            node.name: node
            for node in self.tree.body
            if isinstance(node, ast.FunctionDef) and any(_is_fixture(d) for d in node.decorator_list)
        }

    def module_constants(self, used: list[str]) -> list[str]:
        """Module-level assignments (`M3 = [[...]]`) the lines `used` need, in source order, transitively."""
        assigns = {
            n: n.targets[0].id
            for n in self.tree.body
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
        }
        text, keep = "\n".join(used), set()
        changed = True
        while changed:
            changed = False
            for node, name in assigns.items():
                if name not in keep and re.search(rf"\b{re.escape(name)}\b", text):
                    keep.add(name)
                    text += "\n" + ast.unparse(node)
                    changed = True
        return [
            text for n, name in assigns.items() if name in keep and len(text := ast.unparse(n)) <= MAX_CONSTANT_CHARS
        ]

    def function(self, title: str) -> ast.FunctionDef | None:
        name = title.split("[")[0]
        scope: list[ast.stmt] = self.tree.body
        *classes, fn = name.split(".")
        for cls in classes:
            found = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls), None)
            if found is None:
                return None
            scope = found.body
        return next((n for n in scope if isinstance(n, ast.FunctionDef) and n.name == fn), None)

    def segment(self, node: ast.stmt | ast.expr) -> str:
        return "\n".join(self.lines[node.lineno - 1 : node.end_lineno])

    def expr_text(self, node: ast.AST, subst: dict[str, str]) -> str:
        return ast.unparse(_Substitute(subst).visit(_copy(node)))


def _copy(node: ast.AST) -> ast.AST:
    return (
        ast.parse(ast.unparse(node)).body[0]
        if isinstance(node, ast.stmt)
        else ast.parse(ast.unparse(node), mode="eval").body
    )


class _Substitute(ast.NodeTransformer):
    def __init__(self, subst: dict[str, str]):
        self.subst = subst

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.subst:
            return ast.parse(self.subst[node.id], mode="eval").body
        return node


def _is_fixture(dec: ast.expr) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    return (isinstance(target, ast.Attribute) and target.attr == "fixture") or (
        isinstance(target, ast.Name) and target.id == "fixture"
    )


def _innermost_stmt(body: list[ast.stmt], line: int) -> ast.stmt | None:
    for stmt in body:
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    found = _innermost_stmt(inner, line)
                    if found is not None:
                        return found
            return stmt
    return None


def _fixture_lines(src: _TestSource, name: str, seen: set[str]) -> list[str] | None:
    """A module fixture inlined as statements ending in `name = <returned value>`; None when it cannot be."""
    fn = src.fixtures.get(name)
    if fn is None or name in seen:
        return None
    seen.add(name)
    out: list[str] = []
    for arg in fn.args.args:
        inner = _fixture_lines(src, arg.arg, seen)
        if inner is None:
            return None
        out += inner
    body = (
        fn.body[1:]
        if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(getattr(fn.body[0], "value", None), ast.Constant)
        else fn.body
    )
    for stmt in body:
        if isinstance(stmt, ast.Return):
            if stmt.value is None:
                return None
            out.append(f"{name} = {ast.unparse(stmt.value)}")
            return out
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(stmt)):
            return None
        out += ast.unparse(stmt).splitlines()
    return None


_BUILTINS = {
    "type",
    "len",
    "list",
    "sorted",
    "set",
    "dict",
    "tuple",
    "str",
    "int",
    "float",
    "round",
    "abs",
    "sum",
    "min",
    "max",
    "isinstance",
    "repr",
    "bool",
    "any",
    "all",
    "next",
    "iter",
    "print",
    "approx",
}


def _called_function(node: ast.AST, body: list[ast.stmt] | None = None) -> str:
    """The name of the project function an expression calls (builtins skipped); through `x = f(...)` in `body`
    when the expression only uses a name."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name and name not in _BUILTINS:
                return name
    for sub in ast.walk(node):
        if body and isinstance(sub, ast.Name):
            value = _assigned_value(body, sub, 10**9)
            if value is not None:
                return _called_function(value)
    return ""


def _raises(stmt: ast.stmt) -> str | None:
    """`with pytest.raises(E):` -> `E`."""
    if not isinstance(stmt, ast.With):
        return None
    for item in stmt.items:
        call = item.context_expr
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "raises"
            and call.args
        ):
            return ast.unparse(call.args[0])
    return None


def _parses(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
        return True
    except SyntaxError:
        return False


def _split_compare(text: str, op: str) -> tuple[str, str] | None:
    """`A op B` as pytest printed it -> (A, B): the one split leaving two Python expressions, else the one whose left
    (then right) side alone parses (pytest shortens long values with '...')."""
    token = f" {op} "
    splits = []
    start = 0
    while (i := text.find(token, start)) != -1:
        splits.append((text[:i], text[i + len(token) :]))
        start = i + 1
    for ok in (lambda l, r: _parses(l) and _parses(r), lambda l, r: _parses(l), lambda l, r: _parses(r)):
        found = [(l, r) for l, r in splits if ok(l, r)]
        if len(found) == 1:
            return found[0]
    if len(splits) == 1 and "..." not in text:  # reprs that are not Python (`<class 'str'>`), one way to cut
        return splits[0]
    return None


_OPS = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


def read_failure(nodeid: str, log_sections: dict[str, list[str]], tests: dict[str, str]) -> Failure | None:
    """What one failing test shows: None when its source cannot be found."""
    path = nodeid.split("::")[0]
    if path not in tests:
        return None
    try:
        src = _TestSource(tests[path])
    except SyntaxError:
        return None
    title = section_title(nodeid)
    fn = src.function(title)
    if fn is None:
        return None
    lines = log_sections.get(title, [])
    args = _funcargs(lines)
    error = _first_error_lines(lines)
    locations = [(m.group(1), int(m.group(2)), m.group(3)) for m in map(_LOCATION.match, lines) if m]
    test_line = next((ln for p, ln, _ in locations if p == path or p.endswith("/" + path)), None)
    stmt = _innermost_stmt(fn.body, test_line) if test_line else None

    # The reproducer: fixtures inlined, the test body up to the failing statement.
    setup: list[str] = []
    subst = {}
    for arg in fn.args.args:
        if arg.arg in args:
            subst[arg.arg] = args[arg.arg]
        elif arg.arg in src.fixtures:
            inlined = _fixture_lines(src, arg.arg, set())
            if inlined is None:
                return None
            setup += inlined
        elif arg.arg not in ("self",):
            return None  # a fixture from elsewhere (tmp_path, ...): no self-contained reproducer
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if stmt is None and test_line:  # it broke while a fixture set the test up
        fixture = next((f for f in src.fixtures.values() if f.lineno <= test_line <= (f.end_lineno or f.lineno)), None)
        failing = _innermost_stmt(fixture.body, test_line) if fixture else None
        if failing is not None and error:
            text = ast.unparse(failing)
            cut = next((i for i, line in enumerate(setup) if line == text), len(setup) - 1)
            return Failure(
                nodeid,
                "raised",
                setup[: cut + 1],
                expr=text,
                actual=_short_exception(error[0]),
                function=_called_function(failing),
            )
    if stmt is None:
        return Failure(
            nodeid, "unknown", setup + [src.expr_text(s, subst) for s in body], actual=error[0] if error else ""
        )
    top = next((s for s in body if s.lineno <= stmt.lineno <= (s.end_lineno or s.lineno)), stmt)
    before = [src.expr_text(s, subst) for s in body if (s.end_lineno or s.lineno) < top.lineno]
    if top is not stmt:  # the failure is inside a with/for/if block: keep its header context simple
        before += [
            src.expr_text(s, subst) for s in getattr(top, "body", []) if (s.end_lineno or s.lineno) < stmt.lineno
        ]
    snippet = setup + before
    first_error = error[0] if error else ""
    error_text = first_error.removeprefix("AssertionError: ")

    expected_exc = _raises(top) if top is not stmt else _raises(stmt)
    if expected_exc and "DID NOT RAISE" in first_error:
        block = getattr(stmt, "body", None)
        inner = stmt if top is not stmt else (block[0] if block else stmt)
        expr = src.expr_text(inner.value if isinstance(inner, ast.Expr) else inner, subst)
        return Failure(
            nodeid,
            "did_not_raise",
            snippet + [expr],
            expr=expr,
            expected=expected_exc,
            function=_called_function(inner),
        )

    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1:
        op = _OPS.get(type(stmt.test.ops[0]), "==")
        left = src.expr_text(stmt.test.left, subst)
        expected = src.expr_text(stmt.test.comparators[0], subst)
        source = _assigned_value(body, stmt.test.left, top.lineno)  # `result = f(x)` ... `assert result == y`
        expr = src.expr_text(source, subst) if source is not None else left
        name = _called_function(source if source is not None else stmt.test.left, body)
        if error_text.startswith("assert "):
            split = _split_compare(error_text[len("assert ") :], op)
            if split:
                return Failure(
                    nodeid,
                    "wrong_value" if op in ("==", "is") else "compare",
                    snippet + [f"print({left})"],
                    expr=expr,
                    actual=split[0],
                    expected=expected,
                    op=op,
                    function=name,
                )
        if first_error and not first_error.startswith(("AssertionError", "assert ")):
            return Failure(
                nodeid,
                "raised",
                snippet + [left],
                expr=left,
                actual=_short_exception(first_error),
                expected=expected,
                op=op,
                function=name,
            )
        if error_text.startswith("assert ") and op == "==":
            details = tuple(e for e in error[1:] if e and not e.startswith(("Use -v", "Omitting", "Full diff")))[:6]
            return Failure(
                nodeid,
                "mismatch",
                snippet + [f"print({left})"],
                expr=expr,
                expected=expected,
                function=name,
                details=details,
            )
        return Failure(
            nodeid, "unknown", snippet + [src.expr_text(stmt, subst)], expr=left, expected=expected, function=name
        )
    if isinstance(stmt, ast.Assert):
        test = stmt.test
        inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
        negated = inner is not test
        expr = src.expr_text(inner, subst)
        if first_error and not first_error.startswith(("AssertionError", "assert ")):
            return Failure(
                nodeid,
                "raised",
                snippet + [expr],
                expr=expr,
                actual=_short_exception(first_error),
                function=_called_function(inner),
            )
        value = (
            error_text.removeprefix("assert not ").removeprefix("assert ") if error_text.startswith("assert") else ""
        )
        return Failure(
            nodeid,
            "truthy" if negated else "falsy",
            snippet + [f"print({expr})"],
            expr=expr,
            actual=value,
            function=_called_function(inner),
        )
    # Any other statement (a call, an assignment) that raised.
    text = src.expr_text(stmt, subst)
    return Failure(
        nodeid,
        "raised" if first_error else "unknown",
        snippet + [text],
        expr=text.split("=", 1)[-1].strip() if isinstance(stmt, ast.Assign) else text,
        actual=_short_exception(first_error),
        function=_called_function(stmt),
    )


def _assigned_value(body: list[ast.stmt], node: ast.expr, before_line: int) -> ast.expr | None:
    """The value last assigned to the name `node` before `before_line` in the test body, if `node` is a name."""
    if not isinstance(node, ast.Name):
        return None
    found = None
    for stmt in body:
        if stmt.lineno >= before_line:
            break
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == node.id
        ):
            found = stmt.value
    return found


def _short_exception(text: str) -> str:
    """`pkg.module.OutOfStock: only 10` -> `OutOfStock: only 10` (what a user's traceback shows last)."""
    m = re.match(r"^(?:[A-Za-z_][\w]*\.)+([A-Za-z_]\w*)(:.*)?$", text, re.S)
    return f"{m.group(1)}{m.group(2) or ''}" if m else text


# ---------------------------------------------------------------------------------------------------------------------
# Writing the statement


def _short(value: str) -> str:
    value = re.sub(r" at 0x[0-9a-fA-F]+", "", value.replace("\n", " "))  # object addresses differ run to run
    return value if len(value) <= MAX_VALUE_CHARS else value[: MAX_VALUE_CHARS - 3] + "..."


def _score(f: Failure) -> tuple:
    order = {
        "wrong_value": 0,
        "raised": 1,
        "did_not_raise": 1,
        "mismatch": 2,
        "compare": 2,
        "falsy": 2,
        "truthy": 2,
        "unknown": 9,
    }
    return order.get(f.kind, 9), len(f.snippet), f.test


def _result_sentence(f: Failure, rng: random.Random) -> str:
    expr, actual, expected = f"`{_short(f.expr)}`", f"`{_short(f.actual)}`", f"`{_short(f.expected)}`"
    if f.kind == "wrong_value":
        return rng.choice(
            [
                f"{expr} returns {actual}, but I expected {expected}.",
                f"I get {actual} from {expr}; the expected result is {expected}.",
                f"Expected {expr} to give {expected}, got {actual} instead.",
            ]
        )
    if f.kind == "mismatch":
        diff = "\n".join(f.details)
        return f"{expr} does not give {expected}." + (f" The difference:\n\n```\n{diff}\n```" if diff else "")
    if f.kind == "compare":
        words = {
            "!=": "anything but",
            "is not": "anything but",
            "<": "a value below",
            "<=": "at most",
            ">": "a value above",
            ">=": "at least",
            "in": "one of",
            "not in": "nothing in",
        }.get(f.op, f.op)
        return f"{expr} gives {actual}, but I expected {words} {expected}."
    if f.kind == "raised":
        tail = f" I expected {expected}." if f.expected else " I expected it to work."
        return rng.choice([f"{expr} raises {actual}.", f"{expr} fails with {actual}."]) + tail
    if f.kind == "did_not_raise":
        return f"{expr} should raise `{f.expected}`, but it returns without an error."
    if f.kind == "falsy":
        got = f" (got {actual})" if f.actual else ""
        return f"{expr} should be true here, but it is not{got}."
    if f.kind == "truthy":
        got = f" (got {actual})" if f.actual else ""
        return f"{expr} should be false here, but it is not{got}."
    return "The last line does not behave as documented" + (f": {actual}." if f.actual else ".")


def _title(f: Failure, package: str, rng: random.Random) -> str:
    fn = f"`{f.function}`" if f.function else f"`{package}`"
    if f.kind == "raised":
        exc = _short_exception(f.actual).split(":")[0]
        return f"{fn} raises {exc}" if exc else f"{fn} crashes"
    if f.kind == "did_not_raise":
        return f"{fn} accepts invalid input instead of raising {f.expected}"
    return rng.choice([f"{fn} returns the wrong result", f"Wrong result from {fn}", f"Unexpected output from {fn}"])


def write_statement(
    failures: list[Failure], *, package: str, imports: list[str], rng: random.Random, constants: list[str] | None = None
) -> str:
    """The issue text for a bug whose failing tests are `failures` (at least one)."""
    ranked = sorted(failures, key=_score)
    main = ranked[0]
    constants = constants or []
    snippet = constants + main.snippet[-MAX_SNIPPET_LINES:]
    used = "\n".join(snippet)
    header = [line for line in imports if any(re.search(rf"\b{re.escape(n)}\b", used) for n in _imported(line))]
    code = "\n".join(header + ([""] if header else []) + snippet)
    intro = rng.choice(
        ["Minimal example:", "To reproduce:", f"I'm using `{package}` and hit this:", "Steps to reproduce:"]
    )
    parts = [_title(main, package, rng), "", intro, "", "```python", code, "```", "", _result_sentence(main, rng)]
    others = [
        f
        for f in ranked[1:]
        if f.kind in ("wrong_value", "raised") and f.expr and f.expr != main.expr and len(f.snippet) == 1
    ]
    if others:
        parts += ["", "Also: " + _result_sentence(others[0], rng)]
    return "\n".join(parts).strip() + "\n"


def _imported(line: str) -> list[str]:
    try:
        node = ast.parse(line).body[0]
    except (SyntaxError, IndexError):
        return []
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return []


def module_imports(test_text: str) -> list[str]:
    """The test module's import lines (each on one line); only those the reproducer uses are shown."""
    return [ast.unparse(node) for node in ast.parse(test_text).body if isinstance(node, (ast.Import, ast.ImportFrom))]


def statement_for(f2p: list[str], log: str, tests: dict[str, str], *, package: str, seed: str) -> str:
    """The problem statement of an instance from its FAIL_TO_PASS tests and the log of a run of the buggy base."""
    sections = failure_sections(log)
    failures = [f for f in (read_failure(t, sections, tests) for t in f2p) if f is not None]
    rng = random.Random(seed)
    if not failures:
        names = ", ".join(
            sorted({t.split("::")[-1].split("[")[0].replace("_", " ").removeprefix("test ") for t in f2p})[:3]
        )
        return (
            f"`{package}` misbehaves\n\nSome documented behaviour of `{package}` is broken; the cases that go "
            f"wrong include: {names}.\n"
        )
    main = min(failures, key=_score)
    text = tests[main.test.split("::")[0]]
    constants = _TestSource(text).module_constants(main.snippet[-MAX_SNIPPET_LINES:])
    return write_statement(failures, package=package, imports=module_imports(text), rng=rng, constants=constants)
