"""Patch application: git apply -> --3way -> patch --fuzz, search/replace blocks, and the checks that a patch
really changed the tree and never wrote outside the copy."""

import shutil

import pytest

from evals.harness.environment import GitSource, git_dir_of
from evals.harness.patching import apply_patch, diff_paths, safe_restore
from evals.harness.searchreplace import parse_edits, replace_once
from tests.harness_fixtures import CALC_BASE, CALC_FIX, commit, diff_against, init_repo, write_files


@pytest.fixture
def trees(tmp_path):
    base = tmp_path / "base"
    base.mkdir()
    write_files(base, CALC_BASE)
    copy = tmp_path / "copy"
    shutil.copytree(base, copy)
    return base, copy


def test_diff_paths_reads_headers_not_hunk_bodies():
    patch = (
        "diff --git a/x.py b/y.py\nsimilarity index 90%\nrename from x.py\nrename to y.py\n"
        "--- a/x.py\n+++ b/y.py\n@@ -1 +1 @@\n--- not a header\n+++ not a header either\n"
        "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+hi\n"
    )
    assert diff_paths(patch) == ["x.py", "y.py", "new.py"]


def test_git_apply_first(trees):
    base, copy = trees
    result = apply_patch(copy, diff_against(CALC_BASE, CALC_FIX), base_dir=base)
    assert result.applied and result.method == "git apply"
    assert "a / b" in (copy / "calc/ops.py").read_text()


def test_three_way_when_context_moved(tmp_path):
    repo = tmp_path / "repo"
    v1 = {"m.py": "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"}
    init_repo(repo, v1)
    patch = diff_against(v1, {"m.py": "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n"})
    head = commit(repo, {"m.py": "a = 1\nb = 2\nc = 33\nd = 4\ne = 5\n"}, "moves the context")
    base = tmp_path / "base"
    base.mkdir()
    write_files(base, {"m.py": "a = 1\nb = 2\nc = 33\nd = 4\ne = 5\n"})
    copy = tmp_path / "copy"
    shutil.copytree(base, copy)
    result = apply_patch(copy, patch, base_dir=base, source=GitSource(git_dir_of(repo), head))
    assert result.applied and result.method == "git apply --3way", result.log
    assert (copy / "m.py").read_text() == "a = 10\nb = 2\nc = 33\nd = 4\ne = 5\n"


def test_patch_fuzz_last(trees):
    base, copy = trees
    # Context that no longer matches exactly and no blob ids: only GNU patch's fuzz applies it.
    patch = (
        "--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -7,5 +7,5 @@\n"
        " \n \n def divide(a, b):\n-    return a // b\n+    return a / b\n # trailing context that is not there\n"
    )
    result = apply_patch(copy, patch, base_dir=base)
    assert result.applied and result.method == "patch --fuzz", result.log
    assert "a / b" in (copy / "calc/ops.py").read_text()


def test_exit_zero_but_nothing_changed_is_not_applied(trees):
    base, copy = trees
    patch = "--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -9,2 +9,2 @@\n def divide(a, b):\n-    return a // b\n+    return a // b\n"
    result = apply_patch(copy, patch, base_dir=base)
    assert not result.applied
    assert "changed nothing" in result.log


@pytest.mark.parametrize("patch", ["hello", "", "--- a/x\n+++ b/x\nno hunks\n"])
def test_garbage_is_reported_not_raised(trees, patch):
    base, copy = trees
    result = apply_patch(copy, patch, base_dir=base)
    assert not result.applied and result.error


@pytest.mark.parametrize("path", ["../evil.py", "/etc/evil.py", ".git/config", "a/../../evil.py"])
def test_unsafe_paths_are_refused(trees, path):
    base, copy = trees
    patch = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n"
    result = apply_patch(copy, patch, base_dir=base)
    assert not result.applied
    assert not (copy.parent / "evil.py").exists()


def test_failed_application_leaves_the_base(trees):
    base, copy = trees
    good = diff_against(CALC_BASE, CALC_FIX)
    bad = "--- a/calc/__init__.py\n+++ b/calc/__init__.py\n@@ -1,1 +1,1 @@\n-nothing like this\n+x\n"
    result = apply_patch(copy, good + bad, base_dir=base)
    assert not result.applied
    assert (copy / "calc/ops.py").read_text() == CALC_BASE["calc/ops.py"]


def test_safe_restore_replaces_a_model_symlink_instead_of_writing_through_it(trees, tmp_path):
    base, copy = trees
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(copy / "tests")
    (copy / "tests").symlink_to(outside)
    safe_restore(copy, base, "tests/test_ops.py")
    assert list(outside.iterdir()) == []
    assert (copy / "tests").is_dir() and not (copy / "tests").is_symlink()
    assert (copy / "tests/test_ops.py").read_text() == CALC_BASE["tests/test_ops.py"]


SR = """Here is the fix:

calc/ops.py
```python
<<<<<<< SEARCH
def divide(a, b):
    return a // b
=======
def divide(a, b):
    return a / b
>>>>>>> REPLACE
```
"""


def test_search_replace_exact(trees):
    base, copy = trees
    result = apply_patch(copy, SR, base_dir=base)
    assert result.applied and result.method == "search/replace" and result.paths == ("calc/ops.py",)
    assert "a / b" in (copy / "calc/ops.py").read_text()


def test_search_replace_whitespace_tolerant():
    content = "def f():\n    if x:\n        return 1   \n    return 2\n"
    # trailing whitespace differs
    assert replace_once(content, "        return 1\n", "        return 3\n") == content.replace(
        "return 1   ", "return 3"
    )
    # indentation differs uniformly: the replacement is re-indented the same way
    out = replace_once(content, "if x:\n    return 1\n", "if y:\n    return 4\n")
    assert out == "def f():\n    if y:\n        return 4\n    return 2\n"
    assert replace_once(content, "not there\n", "x\n") is None


def test_search_replace_new_file_and_reused_path(trees):
    base, copy = trees
    text = (
        "calc/extra.py\n<<<<<<< SEARCH\n=======\nX = 1\n>>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\nX = 1\n=======\nX = 2\n>>>>>>> REPLACE\n"
    )
    assert [e.path for e in parse_edits(text)] == ["calc/extra.py", "calc/extra.py"]
    result = apply_patch(copy, text, base_dir=base)
    assert result.applied
    assert (copy / "calc/extra.py").read_text() == "X = 2\n"


def test_search_replace_all_or_nothing(trees):
    base, copy = trees
    text = SR + "\ncalc/__init__.py\n<<<<<<< SEARCH\nnot there\n=======\nx\n>>>>>>> REPLACE\n"
    result = apply_patch(copy, text, base_dir=base)
    assert not result.applied and "not found" in result.error
    assert (copy / "calc/ops.py").read_text() == CALC_BASE["calc/ops.py"]


def test_search_replace_never_reads_through_a_symlink(trees, tmp_path):
    base, copy = trees
    secret = tmp_path / "host.txt"
    secret.write_text("host data\n")
    (copy / "calc/link.py").symlink_to(secret)
    text = "calc/link.py\n<<<<<<< SEARCH\nhost data\n=======\nmine\n>>>>>>> REPLACE\n"
    result = apply_patch(copy, text, base_dir=base)
    assert not result.applied
    assert secret.read_text() == "host data\n"
