"""The tests an agent may see: the instance's tests with every FAIL_TO_PASS test taken out.

In SWE-bench the tests that decide an instance arrive only with the test patch, at grading; the agent works on a tree
that holds the repository's other tests. Here the agent's tree is the base plus the test patch, and each test file
that holds a FAIL_TO_PASS test is rewritten without it (its function or method, decorators included, cut from the
source). Where a FAIL_TO_PASS id cannot be cut cleanly (a test not defined by a `def` in that file, a class left
empty, a file that no longer parses), the whole file is hidden: a hidden test must never leak, and a PASS_TO_PASS test
the agent cannot see costs only a little signal.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass


@dataclass(frozen=True)
class VisibleFile:
    path: str
    text: str | None  # None: hidden whole
    removed: tuple[str, ...]  # the test names cut out


def _split(nodeid: str) -> tuple[str, list[str]]:
    path, _, rest = nodeid.partition("::")
    parts = [p.split("[", 1)[0] for p in rest.split("::")] if rest else []
    return path, parts


def hidden_by_file(fail_to_pass: list[str]) -> dict[str, set[tuple[str, ...]]]:
    """{test file: {(class?, function) name paths}} of the FAIL_TO_PASS ids (parametrisation dropped)."""
    out: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for nodeid in fail_to_pass:
        path, parts = _split(nodeid)
        out[path].add(tuple(parts))
    return dict(out)


def _span(node: ast.AST) -> tuple[int, int]:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]
    return start, node.end_lineno or node.lineno  # type: ignore[attr-defined]


def strip_tests(path: str, text: str, names: set[tuple[str, ...]]) -> VisibleFile:
    """`text` without the tests named by `names` ((func,) or (Class, method)); hidden whole when that fails."""
    if any(not n for n in names):  # a whole file is FAIL_TO_PASS
        return VisibleFile(path, None, ())
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return VisibleFile(path, None, ())
    cuts: list[tuple[int, int]] = []
    found: set[tuple[str, ...]] = set()
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, defs) and (node.name,) in names:
            cuts.append(_span(node))
            found.add((node.name,))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, defs) and (node.name, item.name) in names:
                    cuts.append(_span(item))
                    found.add((node.name, item.name))
    if found != names:
        return VisibleFile(path, None, ())
    lines = text.splitlines(keepends=True)
    drop = {i for start, end in cuts for i in range(start - 1, end)}
    kept = "".join(line for i, line in enumerate(lines) if i not in drop)
    try:
        ast.parse(kept)
    except SyntaxError:  # e.g. a class whose only methods were hidden
        return VisibleFile(path, None, ())
    return VisibleFile(path, kept, tuple(sorted("::".join(n) for n in names)))


def visible_tests(files: dict[str, str], fail_to_pass: list[str]) -> list[VisibleFile]:
    """Each file of `files` ({path: text}) that holds a FAIL_TO_PASS test, as the agent may see it."""
    hidden = hidden_by_file(fail_to_pass)
    return [strip_tests(path, files[path], names) for path, names in sorted(hidden.items()) if path in files]
