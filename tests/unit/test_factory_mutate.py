"""Mutation operators: each makes the bug it is named for, edits only the span it names, and never touches what must
stay intact (docstrings, f-strings, raise/assert, module-level code)."""

from __future__ import annotations

import ast

import pytest

from evals.factory.mutate import OPERATORS, find_mutations, get_operator

SOURCE = '''\
"""Module docstring with a < b and 1 + 2."""

LIMIT = 10


def clamp(values, lo, hi=3):
    """Docstring: x < y, return 1."""
    out = []
    for i in range(len(values)):
        v = values[i]
        if v < lo and v != 0:
            v = lo
        total = v + 1
        out.append(min(v, hi))
    if not out:
        raise ValueError(f"empty {len(values) + 1}")
    return out[1:-1]


def pair(a, b):
    return a, b


def is_small(x):
    return x <= 2
'''


def mutated(operator: str) -> set[str]:
    """The first changed line of every mutation the operator makes in SOURCE."""
    out = set()
    for m in find_mutations(SOURCE, "pkg/mod.py", [operator]):
        new = m.apply(SOURCE)
        changed = [line for line, old in zip(new.splitlines(), SOURCE.splitlines()) if line != old]
        out.add(changed[0].strip() if changed else "")
    return out


def test_registry_lists_the_named_operators():
    assert set(OPERATORS) == {
        "flip_comparison",
        "flip_arithmetic",
        "flip_boolean",
        "off_by_one_range",
        "off_by_one_slice",
        "off_by_one_index",
        "negate_condition",
        "remove_statement",
        "swap_statements",
        "change_constant",
        "swap_arguments",
        "wrong_return",
    }


def test_config_knows_every_registered_operator():
    from postgame.settings.factory import OPERATOR_NAMES

    assert set(OPERATOR_NAMES) == set(OPERATORS)


def test_unknown_operator_error_lists_valid_names():
    with pytest.raises(KeyError, match="valid names: .*flip_comparison"):
        get_operator("flip_everything")


def test_flip_comparison():
    got = mutated("flip_comparison")
    assert "if v <= lo and v != 0:" in got
    assert "if v < lo and v == 0:" in got
    assert "return x < 2" in got


def test_flip_arithmetic_and_boolean():
    assert "total = v - 1" in mutated("flip_arithmetic")
    assert "if v < lo or v != 0:" in mutated("flip_boolean")


def test_off_by_one_range_slice_index():
    assert "for i in range(len(values) + 1):" in mutated("off_by_one_range")
    assert "for i in range(len(values) - 1):" in mutated("off_by_one_range")
    assert {"return out[2:-1]", "return out[0:-1]", "return out[1:-2]", "return out[1:0]"} <= mutated(
        "off_by_one_slice"
    )
    assert {"v = values[i + 1]", "v = values[i - 1]"} <= set(mutated("off_by_one_index"))


def test_negate_condition_and_wrong_return():
    assert "if not (v < lo and v != 0):" in mutated("negate_condition")
    assert "if out:" in mutated("negate_condition")
    returns = mutated("wrong_return")
    assert {"return b, a", "return not x <= 2", "return values"} <= returns


def test_change_constant_and_swap_arguments():
    consts = mutated("change_constant")
    assert "def clamp(values, lo, hi=4):" in consts and "total = v + 2" in consts
    assert "out.append(min(hi, v))" in mutated("swap_arguments")


def test_remove_and_swap_statements_keep_blocks_valid():
    for m in find_mutations(SOURCE, "pkg/mod.py", ["remove_statement", "swap_statements"]):
        ast.parse(m.apply(SOURCE))  # a block left empty gets `pass`
    removed = {m.original.strip() for m in find_mutations(SOURCE, "pkg/mod.py", ["remove_statement"])}
    assert "total = v + 1" in removed and "v = lo" in removed
    swapped = [m for m in find_mutations(SOURCE, "pkg/mod.py", ["swap_statements"])]
    assert any("out.append(min(v, hi))\n        total = v + 1" in m.apply(SOURCE) for m in swapped)


def test_docstrings_fstrings_raise_and_module_level_are_never_touched():
    for m in find_mutations(SOURCE, "pkg/mod.py"):
        line = SOURCE.splitlines()[m.line - 1]
        assert '"""' not in line, m
        # a whole `raise` may be removed (a missing check is a realistic bug); nothing inside it is edited
        assert "raise" not in line or m.operator == "remove_statement", m
        assert not line.startswith("LIMIT"), m


def test_every_mutation_parses_and_changes_the_program():
    base = ast.dump(ast.parse(SOURCE))
    muts = find_mutations(SOURCE, "pkg/mod.py")
    assert len({m.apply(SOURCE) for m in muts}) == len(muts)  # deduplicated by resulting text
    for m in muts:
        assert ast.dump(ast.parse(m.apply(SOURCE))) != base


def test_positions_are_bytes_so_non_ascii_lines_mutate_cleanly():
    src = 'def f(s):\n    t = "é→ü" + s\n    return len(t) > 3\n'
    muts = {m.apply(src) for m in find_mutations(src, "m.py", ["flip_comparison", "flip_arithmetic"])}
    assert 'def f(s):\n    t = "é→ü" - s\n    return len(t) > 3\n' in muts
    assert 'def f(s):\n    t = "é→ü" + s\n    return len(t) >= 3\n' in muts


def test_mutation_key_is_stable_and_describes_the_edit():
    m = find_mutations(SOURCE, "pkg/mod.py", ["flip_boolean"])[0]
    again = find_mutations(SOURCE, "pkg/mod.py", ["flip_boolean"])[0]
    assert m.key == again.key and len(m.key) == 10
    assert m.describe() == {
        "operator": "flip_boolean",
        "path": "pkg/mod.py",
        "line": 11,
        "original": "and",
        "replacement": "or",
        "key": m.key,
    }


def test_while_loop_bodies_are_left_alone_but_their_condition_is_not():
    src = "def f(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"
    muts = find_mutations(src, "m.py")
    assert all(m.line != 4 for m in muts)  # `i += 1` untouched: a hang is a timeout, not a task
    assert any(m.line == 3 and m.operator == "flip_comparison" for m in muts)
    assert any(m.line == 3 and m.operator == "remove_statement" for m in muts)  # the whole loop may go
