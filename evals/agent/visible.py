"""The tests an agent may see: the instance's tests with every FAIL_TO_PASS test taken out.

In SWE-bench the tests that decide an instance arrive only with the test patch, at grading; the agent works on a tree
that holds the repository's other tests. Here the agent's tree is the base plus the test patch, and each test file
that holds a FAIL_TO_PASS test is rewritten without it (its function or method, decorators included, cut from the
source). Where a FAIL_TO_PASS id cannot be cut cleanly (a test not defined by a `def` in that file, a class left
empty, a file that no longer parses), the whole file is hidden: a hidden test must never leak, and a PASS_TO_PASS test
the agent cannot see costs only a little signal.

A parametrised test whose FAIL_TO_PASS ids are only some of its cases loses just those cases: the parameter sets of
its one `@pytest.mark.parametrize` (a literal list or tuple) that pytest would name by those ids are cut from the list
(and from a literal `ids=` list), and its other cases stay visible, as the repository's existing cases of a test
stay visible in SWE-bench when the test patch adds new ones. The ids are made as pytest makes them (`IdMaker`: an
explicit id, else the value for a str, int, float, bool, None or complex, else argname + index), from the source only,
never by running it. When they cannot be (a value from a variable, stacked or class-level parametrisation, a
`pytestmark` anywhere in the file, a decorator that is not a plain `pytest.mark.NAME`, ids that collide, one that
matches no case), the whole function is cut, as before; and so it is when the function's body holds a constant of a
cut case (a table keyed by the case: its data would stay in sight). A lone carriage return hides the file.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@functools.cache
def cut_digest() -> str:
    """What this module's cut hides, as the evaluation cache key holds it: the digest of its code (its syntax tree,
    so a comment or a reformat changes nothing), never a version number kept by hand."""
    return hashlib.sha256(ast.dump(ast.parse(Path(__file__).read_text(encoding="utf-8"))).encode()).hexdigest()


@dataclass(frozen=True)
class VisibleFile:
    path: str
    text: str | None  # None: hidden whole
    removed: tuple[str, ...]  # the test names cut out


def _split(nodeid: str) -> tuple[str, list[str], str | None]:
    """(file, [class?, function], the case id in brackets or None)."""
    path, _, rest = nodeid.partition("::")
    case = None
    if "[" in rest and rest.endswith("]"):
        rest, _, bracket = rest.partition("[")
        case = bracket[:-1]
    parts = rest.split("::") if rest else []
    return path, parts, case


def hidden_cases(fail_to_pass: list[str]) -> dict[str, dict[tuple[str, ...], set[str] | None]]:
    """{test file: {name path: the FAIL_TO_PASS case ids of that test, or None when the test itself is one}}."""
    out: dict[str, dict[tuple[str, ...], set[str] | None]] = defaultdict(dict)
    for nodeid in fail_to_pass:
        path, parts, case = _split(nodeid)
        key = tuple(parts)
        known = out[path].get(key, set())
        out[path][key] = None if case is None or known is None else known | {case}
    return dict(out)


# --- pytest's ids of a literal parameter list, from the source ------------------------------------------------------

_UNNAMEABLE = object()  # a value whose id pytest makes in a way not reproduced here (bytes, an enum, a class...)


def _value_id(node: ast.expr) -> str | None | object:
    """pytest's id of one parameter value (`IdMaker._idval_from_value`), before its escaping: the text for
    str/int/float/bool/None/complex literals, None (argname + index) for other literals and containers, _UNNAMEABLE
    for what it cannot tell."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNNAMEABLE  # a name, a call: pytest may name it by its __name__ or str(); never guessed
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int, float, complex)):
        return str(value)
    if isinstance(value, (tuple, list, dict, set, frozenset)):
        return None
    return _UNNAMEABLE  # bytes (escaped otherwise)


def _is_call_of(node: ast.expr, name: str) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Attribute) and func.attr == name) or (isinstance(func, ast.Name) and func.id == name)


def _argnames(node: ast.expr) -> tuple[list[str], bool] | None:
    """(the names, whether each case is the one value itself) as pytest parses them: a string of one name wraps
    each case; a list or tuple of names never does. A string ending in a comma: None (pytest versions differ)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if node.value.rstrip().endswith(","):
            return None
        names = [n.strip() for n in node.value.split(",") if n.strip()]
        return names, len(names) == 1
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts], False  # type: ignore[attr-defined]
    return None


def _escaped(text: str) -> str:
    return text.encode("unicode_escape").decode("ascii")  # pytest's `ascii_escaped` of a str


def case_ids(decorator: ast.Call) -> list[str] | None:
    """The ids pytest gives the cases of `@pytest.mark.parametrize(argnames, [literal list], ids=[...]?)`, in order;
    None when they cannot be told from the source or collide (pytest would then add counters)."""
    raw = raw_case_ids(decorator)
    return None if raw is None else [_escaped(r) for r in raw]


def raw_case_ids(decorator: ast.Call) -> list[str] | None:
    """`case_ids` before pytest escapes them: given as explicit ids, they name the same cases."""
    if len(decorator.args) != 2 or not isinstance(decorator.args[1], (ast.List, ast.Tuple)):
        return None  # a third positional is `indirect`, a fourth `ids`: not worked out here
    if any(kw.arg is None for kw in decorator.keywords):
        return None  # **options may carry ids
    parsed = _argnames(decorator.args[0])
    if not parsed or not parsed[0]:
        return None
    names, whole = parsed
    explicit: list[ast.expr] | None = None
    for kw in decorator.keywords:
        if kw.arg == "ids":
            if not isinstance(kw.value, (ast.List, ast.Tuple)):
                return None  # a callable or a variable
            explicit = list(kw.value.elts)
    cases = decorator.args[1].elts
    if explicit is not None and len(explicit) != len(cases):
        return None
    ids = []
    for idx, case in enumerate(cases):
        given = explicit[idx] if explicit is not None else None
        if isinstance(case, ast.Call) and _is_call_of(case, "param"):
            for kw in case.keywords:
                if kw.arg is None:
                    return None
                if kw.arg == "id" and not (isinstance(kw.value, ast.Constant) and kw.value.value is None):
                    given = kw.value  # pytest.param(id=None) leaves the id to `ids`, as no id does
            values = list(case.args)
        elif whole:
            values = [case]
        elif isinstance(case, (ast.Tuple, ast.List)):
            values = list(case.elts)
        else:
            return None
        if given is not None and not (isinstance(given, ast.Constant) and given.value is None):
            if not (isinstance(given, ast.Constant) and isinstance(given.value, str)):
                return None
            ids.append(given.value)
            continue
        if len(values) != len(names):
            return None
        parts = []
        for name, value in zip(names, values):
            made = _value_id(value)
            if made is _UNNAMEABLE:
                return None
            parts.append(f"{name}{idx}" if made is None else made)
        ids.append("-".join(parts))  # type: ignore[arg-type]
    return ids if len({_escaped(i) for i in ids}) == len(ids) else None


def _plain_mark(decorator: ast.expr) -> bool:
    """`@pytest.mark.NAME` or `@pytest.mark.NAME(...)` (or `mark.NAME`), NAME not parametrize: adds no case."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if not isinstance(target, ast.Attribute) or target.attr == "parametrize":
        return False
    owner = target.value
    return (isinstance(owner, ast.Attribute) and owner.attr == "mark") or (
        isinstance(owner, ast.Name) and owner.id == "mark"
    )


def _constants(nodes: list[ast.stmt]) -> set[object]:
    return {(type(n.value), n.value) for stmt in nodes for n in ast.walk(stmt) if isinstance(n, ast.Constant)}


def _telling(cases: list[ast.expr]) -> set[object]:
    """The constants of cut cases that would say something if the body held them: strings, numbers but 0, 1 and -1."""
    out: set[object] = set()
    for case in cases:
        for n in ast.walk(case):
            if not isinstance(n, ast.Constant) or isinstance(n.value, bool) or n.value is None:
                continue
            if isinstance(n.value, (int, float, complex)) and n.value in (0, 1, -1):
                continue
            out.add((type(n.value), n.value))
    return out


def _parametrize_calls(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.Call]:
    return [d for d in node.decorator_list if isinstance(d, ast.Call) and _is_call_of(d, "parametrize")]


def _span(node: ast.AST) -> tuple[int, int]:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]
    return start, node.end_lineno or node.lineno  # type: ignore[attr-defined]


def _cut_cases(
    node: ast.FunctionDef | ast.AsyncFunctionDef, cases: set[str], known: set[str], at: _Offsets
) -> tuple[list[_Edit], list[str]] | None:
    """The edits that cut the parameter sets named by `cases` (FAIL_TO_PASS case ids) from `node`'s parametrize list,
    and the ids cut; None when the whole function must go (see the module docstring). `known`: every case id the
    instance names for this test, which the ids made from the source must account for."""
    calls = _parametrize_calls(node)
    if len(calls) != 1 or not all(d is calls[0] or _plain_mark(d) for d in node.decorator_list):
        return None  # another decorator may be a parametrisation by another name
    call = calls[0]
    raw = raw_case_ids(call)
    if raw is None:
        return None
    ids = [_escaped(r) for r in raw]
    if not (cases | known) <= set(ids):
        return None
    keep = [i for i, case in enumerate(ids) if case not in cases]
    if not keep:
        return None
    cut = [e for i, e in enumerate(call.args[1].elts) if i not in keep]  # type: ignore[attr-defined]
    if _telling(cut) & _constants(node.body):
        return None  # the body holds a cut case's data (a table keyed by it): only the whole function hides it
    # the kept cases keep their ids: given explicitly, a case pytest named by its index is not renamed by the cut
    # (the next one down would otherwise take a FAIL_TO_PASS case's id)
    named = ("[" + ", ".join(repr(raw[i]) for i in keep) + "]").encode("utf-8")
    edits = [at.rewrite(call.args[1], keep)]  # type: ignore[arg-type]
    given = [kw.value for kw in call.keywords if kw.arg == "ids"]
    if given:
        edits.append((*at.span(given[0]), named))
    else:
        end = at.span(call.args[1])[1]
        edits.append((end, end, b", ids=" + named))
    return edits, sorted(cases)


_Edit = tuple[int, int, bytes]  # (start, end, replacement) in the file's UTF-8 bytes


class _Offsets:
    """Byte offsets of AST positions (`col_offset` counts UTF-8 bytes) in one file."""

    def __init__(self, data: bytes):
        self.data = data
        self.starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]

    def at(self, lineno: int, col: int) -> int:
        return self.starts[lineno - 1] + col

    def lines(self, first: int, last: int) -> _Edit:
        """Cut lines first..last (1-based, inclusive)."""
        end = self.starts[last] if last < len(self.starts) else len(self.data)
        return self.starts[first - 1], end, b""

    def span(self, node: ast.expr) -> tuple[int, int]:
        return self.at(node.lineno, node.col_offset), self.at(node.end_lineno or 0, node.end_col_offset or 0)

    def segment(self, node: ast.expr) -> bytes:
        start, end = self.span(node)
        return self.data[start:end]

    def rewrite(self, seq: ast.List | ast.Tuple, keep: list[int]) -> _Edit:
        """`seq` (a literal list or tuple) with only the elements at `keep`."""
        parts = [self.segment(e) for i, e in enumerate(seq.elts) if i in keep]
        opening, closing = (b"[", b"]") if isinstance(seq, ast.List) else (b"(", b",)" if len(parts) == 1 else b")")
        return *self.span(seq), opening + b", ".join(parts) + closing


def strip_tests(
    path: str,
    text: str,
    names: set[tuple[str, ...]] | dict[tuple[str, ...], set[str] | None],
    known: dict[tuple[str, ...], set[str]] | None = None,
) -> VisibleFile:
    """`text` without the tests named by `names` ((func,) or (Class, method)); hidden whole when that fails. Given
    as `hidden_cases` gives them ({name path: its FAIL_TO_PASS case ids}), a test only some of whose cases are
    FAIL_TO_PASS loses those cases only; `known` then holds each test's PASS_TO_PASS case ids."""
    wanted = names if isinstance(names, dict) else dict.fromkeys(names)
    if any(not n for n in wanted):  # a whole file is FAIL_TO_PASS
        return VisibleFile(path, None, ())
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return VisibleFile(path, None, ())
    if "\r" in text.replace("\r\n", ""):
        return VisibleFile(path, None, ())  # a lone CR ends a line for Python, not for these offsets
    at = _Offsets(text.encode("utf-8"))
    # a `pytestmark` anywhere (module or class, plain or annotated) may add ids that are not worked out here
    marked = any(
        isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Store) and "pytestmark" in ast.unparse(n)
        for n in ast.walk(tree)
    )
    edits: list[_Edit] = []
    removed: list[str] = []
    found: set[tuple[str, ...]] = set()

    def cut(node: ast.FunctionDef | ast.AsyncFunctionDef, key: tuple[str, ...], parametrized_class: bool) -> None:
        cases = wanted[key]
        partial = None
        if cases is not None and not marked and not parametrized_class:
            partial = _cut_cases(node, cases, (known or {}).get(key, set()), at)
        if partial is None:
            edits.append(at.lines(*_span(node)))
            removed.append("::".join(key))
        else:
            edits.extend(partial[0])
            removed.extend(f"{'::'.join(key)}[{case}]" for case in partial[1])
        found.add(key)

    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, defs) and (node.name,) in wanted:
            cut(node, (node.name,), False)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, defs) and (node.name, item.name) in wanted:
                    cut(item, (node.name, item.name), bool(_parametrize_calls(node)))
    if found != set(wanted):
        return VisibleFile(path, None, ())
    data = at.data
    for start, end, replacement in sorted(edits, reverse=True):
        data = data[:start] + replacement + data[end:]
    kept = data.decode("utf-8")
    try:
        ast.parse(kept)
    except SyntaxError:  # e.g. a class whose only methods were hidden
        return VisibleFile(path, None, ())
    return VisibleFile(path, kept, tuple(sorted(removed)))


def visible_tests(
    files: dict[str, str], fail_to_pass: list[str], pass_to_pass: Sequence[str] = ()
) -> list[VisibleFile]:
    """Each file of `files` ({path: text}) that holds a FAIL_TO_PASS test, as the agent may see it. `pass_to_pass`:
    the instance's PASS_TO_PASS ids, whose cases a partial cut must account for (without them, only FAIL_TO_PASS's)."""
    hidden = hidden_cases(fail_to_pass)
    passing = hidden_cases(list(pass_to_pass))
    return [
        strip_tests(path, files[path], names, {k: v or set() for k, v in passing.get(path, {}).items()})
        for path, names in sorted(hidden.items())
        if path in files
    ]
