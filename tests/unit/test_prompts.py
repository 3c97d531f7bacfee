"""The prompt and answer format shared by simulation, training and evaluation: what the policy sees, and how its
answer becomes the patch the harness applies."""

from __future__ import annotations

from pathlib import Path

from evals.factory.files import diff_file
from evals.harness.patching import apply_patch
from evals.harness.searchreplace import parse_edits, replace_once
from evals.prompts import ANSWER_FORMAT, answer_for_patch, extract_patch, render_prompt

BUGGY = (
    "def last(xs):\n    if len(xs) < 1:\n        return None\n    return xs[-2]\n\n\ndef first(xs):\n    return xs[0]\n"
)
FIXED = BUGGY.replace("xs[-2]", "xs[-1]")
GOLD = diff_file("pkg/seq.py", BUGGY, FIXED)


def apply_to(tmp_path: Path, patch: str) -> tuple[bool, str]:
    root = tmp_path / "copy"
    base = tmp_path / "base"
    for d in (root, base):
        (d / "pkg").mkdir(parents=True, exist_ok=True)
        (d / "pkg" / "seq.py").write_text(BUGGY)
    result = apply_patch(root, patch, base_dir=base)
    return result.applied, (root / "pkg" / "seq.py").read_text()


def test_prompt_shows_statement_files_with_paths_and_the_answer_format():
    prompt = render_prompt(
        {"repo": "o/seq", "problem_statement": "`last([1, 2])` returns 1, expected 2."}, {"pkg/seq.py": BUGGY}
    )
    assert "o/seq" in prompt and "`last([1, 2])` returns 1" in prompt
    assert "pkg/seq.py\n```python\n" + BUGGY + "```" in prompt
    assert prompt.rstrip().endswith(ANSWER_FORMAT.rstrip())


def test_gold_patch_as_an_answer_applies_with_the_harness_and_fixes_the_file(tmp_path):
    answer = answer_for_patch(GOLD, {"pkg/seq.py": BUGGY})
    assert answer == "pkg/seq.py\n<<<<<<< SEARCH\n    return xs[-2]\n=======\n    return xs[-1]\n>>>>>>> REPLACE\n"
    applied, text = apply_to(tmp_path, extract_patch(f"The bug is an index.\n```\n{answer}```\n"))
    assert applied and text == FIXED


def test_extract_patch_canonicalises_blocks_around_prose_and_fences():
    completion = (
        "Here is the fix:\n\n```python\npkg/seq.py\n<<<<<<< SEARCH\n    return xs[-2]\n=======\n"
        "    return xs[-1]\n>>>>>>> REPLACE\n```\nHope it helps."
    )
    assert extract_patch(completion) == (
        "pkg/seq.py\n<<<<<<< SEARCH\n    return xs[-2]\n=======\n    return xs[-1]\n>>>>>>> REPLACE\n"
    )


def test_extract_patch_accepts_a_unified_diff(tmp_path):
    patch = extract_patch(f"Apply this:\n```diff\n{GOLD}```")
    assert patch == GOLD
    applied, text = apply_to(tmp_path, patch)
    assert applied and text == FIXED
    assert extract_patch(GOLD) == GOLD


def test_no_patch_means_empty_string():
    assert extract_patch("I think the bug is in last(), good luck.") == ""
    assert extract_patch("") == ""
    assert extract_patch("pkg/seq.py\n<<<<<<< SEARCH\n    return xs[-2]\n=======\n") == ""  # never closed


def test_every_answer_block_is_a_unique_match_so_it_edits_the_intended_place():
    twice = "def a(x):\n    return x[-2]\n\n\ndef b(x):\n    return x[-2]\n"
    for fixed in (twice.replace("x[-2]", "x[-1]", 1), twice[::-1].replace("]2-[", "]1-[", 1)[::-1]):
        answer = answer_for_patch(diff_file("m.py", twice, fixed), {"m.py": twice})
        content = twice
        for edit in parse_edits(answer):
            assert content.count(edit.search) == 1
            content = replace_once(content, edit.search, edit.replace)
        assert content == fixed


# --- answer_for_patch on part of a file; the oracle window ------------------------------------------------------------

MODULE = (
    "import math\n\n\ndef area(r):\n    if r < 0:\n        raise ValueError(r)\n    return math.pi * r * r\n\n\n"
    "def scale(xs, k):\n    out = []\n    for x in xs:\n        out.append(x * k)\n    return out\n"
)


def test_answer_for_part_of_a_file_whose_hunk_context_falls_outside_it_is_a_real_edit():
    # checked: fails when answer_for_patch falls back to replacing the shown text with itself (SEARCH == REPLACE)
    buggy = MODULE.replace("x * k", "x + k")
    gold = diff_file("m.py", buggy, MODULE)  # 3 context lines reach into `for x in xs:` and beyond the window
    window = "        out.append(x + k)\n    return out\n"
    answer = answer_for_patch(gold, {"m.py": window})
    edits = parse_edits(answer)
    assert [(e.search, e.replace) for e in edits] == [("        out.append(x + k)\n", "        out.append(x * k)\n")]
    assert replace_once(buggy, edits[0].search, edits[0].replace) == MODULE


def test_answer_for_patch_never_returns_a_no_op_block():
    buggy = MODULE.replace("r < 0", "r <= 0")
    gold = diff_file("m.py", buggy, MODULE)
    for shown in ({"m.py": buggy}, {"m.py": buggy[:40]}, {"m.py": "def other():\n    pass\n"}, {}):
        answer = answer_for_patch(gold, shown)
        for edit in parse_edits(answer) if answer else []:
            assert edit.search != edit.replace, shown


def test_oracle_prompt_shows_the_buggy_function_with_path_and_line_numbers():
    # checked: fails when oracle_window takes the first function of the file instead of the enclosing one
    buggy = MODULE.replace("x * k", "x + k")
    inst = {"repo": "o/m", "problem_statement": "scale([1], 2) returns [3]", "patch": diff_file("m.py", buggy, MODULE)}
    prompt = render_prompt(inst, {"m.py": buggy}, context="oracle")
    assert "m.py (lines 10-14)" in prompt and "        out.append(x + k)\n" in prompt
    assert "def scale(xs, k):" in prompt and "def area" not in prompt
    assert "scale([1], 2) returns [3]" in prompt
    assert render_prompt(inst, {"m.py": buggy}) == render_prompt(inst, {"m.py": buggy}, context="file")
    assert "def area" in render_prompt(inst, {"m.py": buggy}, context="file")


def test_oracle_window_holds_the_buggy_line_for_every_mutation_of_a_seed_module():
    from evals.factory.mutate import find_mutations
    from evals.factory.seeds import load_seeds
    from evals.prompts import oracle_window

    seed = load_seeds(names=["textkit"])[0]
    for path in seed.modules():
        source = seed.source[path].decode()
        for mut in find_mutations(source, path)[::7]:
            buggy = mut.apply(source)
            window = oracle_window({"patch": diff_file(path, buggy, source)}, {path: buggy})
            assert window is not None and window.path == path
            rows = buggy.splitlines(keepends=True)
            assert window.text == "".join(rows[window.start - 1 : window.end])
            # the first buggy line (or, for a removed statement, the line it followed) is in the window
            assert window.start <= max(1, mut.line - (mut.replacement == "")) <= window.end, mut


def test_an_edit_naming_a_file_not_shown_goes_to_the_one_shown_file_that_holds_its_search_text(tmp_path):
    from evals.harness.searchreplace import Edit
    from evals.prompts import repoint, shown_code

    statement = "`last([1, 2])` returns 1.\n\n```python\nxs = [1, 2]\n```\n"  # a fenced block that is no file
    oracle = render_prompt(
        {"repo": "o/seq", "problem_statement": statement, "patch": GOLD}, {"pkg/seq.py": BUGGY}, context="oracle"
    )
    shown = shown_code(oracle)
    assert list(shown) == ["pkg/seq.py"] and "    return xs[-2]\n" in shown["pkg/seq.py"]
    whole = render_prompt({"repo": "o/seq", "problem_statement": statement}, {"pkg/seq.py": BUGGY, "pkg/b.py": "y\n"})
    assert shown_code(whole) == {"pkg/seq.py": BUGGY, "pkg/b.py": "y\n"}

    half_remembered = Edit("seq.py", "    return xs[-2]\n", "    return xs[-1]\n")
    (moved,) = repoint([half_remembered], shown)
    assert moved == Edit("pkg/seq.py", half_remembered.search, half_remembered.replace)
    assert apply_to(tmp_path, extract_patch(render_edits_of(moved))) == (True, FIXED)
    # left alone: a path that is shown, a SEARCH text no shown file holds, or one that two shown files hold
    right = Edit("pkg/seq.py", "    return xs[-2]\n", "    return xs[-1]\n")
    stray = Edit("seq.py", "    return ys[-2]\n", "    return ys[-1]\n")
    assert repoint([right, stray], shown) == [right, stray]
    twice = Edit("x.py", "y\n", "z\n")
    assert repoint([twice], {"a.py": "y\n", "b.py": "y\n"}) == [twice]


def render_edits_of(edit) -> str:
    from evals.prompts import render_edits

    return render_edits([edit])
