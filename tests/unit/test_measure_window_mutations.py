"""`find_mutations(..., lines=(first, last))`, the random-single-edit baseline's candidates, is exactly what it finds
on the whole module filtered to those lines, in the same order: only the costly parse check is limited to them.
Checked on every function of three shipped seeds' modules (real code, not a fixture); the module-wide context an
operator reads (loop counters named anywhere in the module: csvlite/mapping.py line 65) is what a search of the
window's own code alone got wrong."""

from __future__ import annotations

import ast
from pathlib import Path

from evals.factory.mutate import find_mutations

SEEDS = Path(__file__).resolve().parents[2] / "evals" / "seeds"


def windows(content: str):
    for node in ast.walk(ast.parse(content)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.lineno, node.end_lineno or node.lineno


def test_the_window_search_is_the_whole_module_search_filtered_on_every_function():
    modules = sorted(p for seed in ("csvlite", "tinyparse", "textkit") for p in (SEEDS / seed / seed).glob("*.py"))
    assert len(modules) >= 12
    checked = 0
    for module in modules:
        content, path = module.read_text(), module.relative_to(SEEDS).as_posix()
        every = find_mutations(content, path)
        for start, end in windows(content):
            assert find_mutations(content, path, lines=(start, end)) == [m for m in every if start <= m.line <= end], (
                f"{path}:{start}-{end}"
            )
            checked += 1
    assert checked > 50
