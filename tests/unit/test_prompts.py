"""The prompt and answer format shared by simulation, training and evaluation: what the policy sees, and how its
answer becomes the patch the harness applies."""

from __future__ import annotations

from pathlib import Path

from evals.factory.files import diff_file
from evals.harness.patching import apply_patch
from evals.harness.searchreplace import parse_edits, replace_once
from evals.prompts import ANSWER_FORMAT, answer_for_patch, extract_patch, render_prompt

BUGGY = "def last(xs):\n    if len(xs) < 1:\n        return None\n    return xs[-2]\n\n\ndef first(xs):\n    return xs[0]\n"
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
    prompt = render_prompt({"repo": "o/seq", "problem_statement": "`last([1, 2])` returns 1, expected 2."},
                           {"pkg/seq.py": BUGGY})
    assert "o/seq" in prompt and "`last([1, 2])` returns 1" in prompt
    assert "pkg/seq.py\n```python\n" + BUGGY + "```" in prompt
    assert prompt.rstrip().endswith(ANSWER_FORMAT.rstrip())


def test_gold_patch_as_an_answer_applies_with_the_harness_and_fixes_the_file(tmp_path):
    answer = answer_for_patch(GOLD, {"pkg/seq.py": BUGGY})
    assert answer == "pkg/seq.py\n<<<<<<< SEARCH\n    return xs[-2]\n=======\n    return xs[-1]\n>>>>>>> REPLACE\n"
    applied, text = apply_to(tmp_path, extract_patch(f"The bug is an index.\n```\n{answer}```\n"))
    assert applied and text == FIXED


def test_extract_patch_canonicalises_blocks_around_prose_and_fences():
    completion = ("Here is the fix:\n\n```python\npkg/seq.py\n<<<<<<< SEARCH\n    return xs[-2]\n=======\n"
                  "    return xs[-1]\n>>>>>>> REPLACE\n```\nHope it helps.")
    assert extract_patch(completion) == ("pkg/seq.py\n<<<<<<< SEARCH\n    return xs[-2]\n=======\n    return xs[-1]\n"
                                         ">>>>>>> REPLACE\n")


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
