"""Tiny SWE-style instances built at test time: a git repository with a base commit (and a 'future' commit holding
the fix, which the harness must never expose), a gold patch and a test patch, all as real unified diffs.

    from tests.harness_fixtures import calc_instance, diff_against
    tiny = calc_instance(tmp_path)                  # Instance + repos dir + gold patch
    hostile = diff_against(tiny.base_files, {"calc/ops.py": "..."})
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evals.harness.instance import Instance
from postgame.settings.harness import HarnessSettings

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "postgame",
    "GIT_AUTHOR_EMAIL": "postgame@example.invalid",
    "GIT_COMMITTER_NAME": "postgame",
    "GIT_COMMITTER_EMAIL": "postgame@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def _git(repo: Path, *args: str) -> str:
    r = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "core.fileMode=false", *args],
        cwd=repo,
        env={**os.environ, **_GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return r.stdout


class Link(str):
    """A symlink to this target, where a file's text would go."""


def write_files(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        p = root / rel
        if text is None:
            if p.is_symlink() or p.exists():
                p.unlink()
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, Link):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            p.symlink_to(str(text))
        else:
            p.write_text(text)


def commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    write_files(repo, files)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return _git(repo, "rev-parse", "HEAD").strip()


def init_repo(repo: Path, files: dict[str, str], message: str = "base") -> str:
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    return commit(repo, files, message)


def diff_against(base_files: dict[str, str], changes: dict[str, str | None]) -> str:
    """A `git diff` (a/ b/ prefixes) turning `base_files` into `base_files` + `changes` (None deletes)."""
    with tempfile.TemporaryDirectory(prefix="postgame-diff-") as d:
        repo = Path(d) / "r"
        init_repo(repo, base_files)
        write_files(repo, changes)
        _git(repo, "add", "-A")
        return _git(repo, "diff", "--cached", "--no-color", "--no-ext-diff")


@dataclass
class TinyInstance:
    instance: Instance
    repos_dir: Path
    gold: str
    base_files: dict[str, str]
    repo_dir: Path


CALC_BASE = {
    "calc/__init__.py": "",
    "calc/ops.py": (
        "def add(a, b):\n    return a + b\n\n\n"
        "def sub(a, b):\n    return a - b\n\n\n"
        "def divide(a, b):\n    return a // b\n"
    ),
    "tests/test_ops.py": (
        "from calc.ops import add, sub\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    assert sub(5, 3) == 2\n"
    ),
}
CALC_FIX = {"calc/ops.py": CALC_BASE["calc/ops.py"].replace("a // b", "a / b")}
CALC_TESTS = {
    "tests/test_ops.py": CALC_BASE["tests/test_ops.py"].replace(
        "from calc.ops import add, sub", "from calc.ops import add, divide, sub"
    )
    + "\n\ndef test_divide():\n    assert divide(7, 2) == 3.5\n\n\ndef test_divide_exact():\n    assert divide(6, 3) == 2\n",
}
CALC_F2P = ["tests/test_ops.py::test_divide"]
CALC_P2P = ["tests/test_ops.py::test_add", "tests/test_ops.py::test_divide_exact", "tests/test_ops.py::test_sub"]


def calc_instance(
    root: Path,
    *,
    instance_id: str = "acme__calc-1",
    repo: str = "acme/calc",
    base_files: dict[str, str] | None = None,
    **extra,
) -> TinyInstance:
    """The calc instance: `divide` floors (bug), test patch adds test_divide (F2P); add/sub/divide_exact are P2P."""
    base_files = dict(base_files or CALC_BASE)
    repos_dir = root / "repos"
    repo_dir = repos_dir / repo.replace("/", "__")
    base_commit = init_repo(repo_dir, base_files)
    commit(repo_dir, {**CALC_FIX, **CALC_TESTS}, "the future: fix divide")  # must stay invisible to the run
    fields = dict(
        instance_id=instance_id,
        repo=repo,
        base_commit=base_commit,
        problem_statement="divide() floors: 7/2 gives 3",
        patch=diff_against(base_files, CALC_FIX),
        test_patch=diff_against(base_files, CALC_TESTS),
        FAIL_TO_PASS=CALC_F2P,
        PASS_TO_PASS=CALC_P2P,
    )
    fields.update(extra)
    return TinyInstance(Instance(**fields), repos_dir, fields["patch"], base_files, repo_dir)


def with_code(tiny: TinyInstance, code: str, path: str = "calc/__init__.py", *, fix: bool = False) -> str:
    """A model patch that puts `code` at the top of `path` (and applies the real fix too when `fix`)."""
    changes: dict[str, str | None] = dict(CALC_FIX) if fix else {}
    changes[path] = code + changes.get(path, tiny.base_files.get(path, ""))
    return diff_against(tiny.base_files, changes)


def in_function(tiny: TinyInstance, body: str, function: str = "add") -> str:
    """A model patch that runs `body` first thing in calc.ops.<function> (add is called by a passing test, so -rA
    shows what it prints; divide by the FAIL_TO_PASS test)."""
    indented = "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    head = f"def {function}(a, b):\n"
    ops = tiny.base_files["calc/ops.py"].replace(head, head + indented, 1)
    return diff_against(tiny.base_files, {"calc/ops.py": ops})


def in_add(tiny: TinyInstance, body: str) -> str:
    return in_function(tiny, body, "add")


def quick_settings(**overrides) -> HarnessSettings:
    """Small limits for the hostile suite: generous enough for a loaded 2-core machine, tight for bombs."""
    values = dict(timeout_s=60, memory_mb=1024, max_processes=64, tmp_size_mb=64)
    values.update(overrides)
    return HarnessSettings(**values)
