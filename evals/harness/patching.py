"""Applying patches to a run's copy, and keeping the grader out of the model's reach.

Model patches are unified diffs (`git apply` -> `git apply --3way` -> `patch --batch --forward --fuzz=5`, like
SWE-bench) or search/replace edit blocks (`searchreplace.py`). After each attempt the files the patch names are
compared with what they were: GNU patch can exit 0 and change nothing, which is a failure to apply. A patch that does
not apply is reported with the reason; nothing here raises on bad model input.

All writes into the copy go through `safe_restore`/`safe_write`, which never follow a symlink the model created:
the harness runs as a user that could otherwise be tricked into writing on the host.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evals.harness.environment import GitSource
from evals.harness.paths import UnsafePath, check_rel, through_symlink
from evals.harness.searchreplace import SearchReplaceError, apply_edits, is_search_replace, parse_edits

__all__ = [
    "ApplyResult",
    "UnsafePath",
    "apply_patch",
    "check_rel",
    "diff_paths",
    "file_state",
    "patch_paths",
    "safe_restore",
    "safe_write",
    "through_symlink",
]


@dataclass(frozen=True)
class ApplyResult:
    applied: bool
    method: str | None  # "git apply" | "git apply --3way" | "patch --fuzz" | "search/replace"
    error: str | None
    paths: tuple[str, ...]  # files the patch names (relative)
    log: str = ""


def _unquote(path: str) -> str:
    if len(path) >= 2 and path[0] == path[-1] == '"':
        body = path[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        return body.encode("latin-1", "replace").decode("utf-8", "replace")
    return path


def _strip_prefix(path: str) -> str | None:
    path = _unquote(path.split("\t")[0].strip())
    if path == "/dev/null":
        return None
    return path[2:] if path[:2] in ("a/", "b/") else path


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_GIT_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$")  # binary and mode-only sections have no ---/+++ lines


def diff_paths(patch: str) -> list[str]:
    """Paths a unified diff names (old and new sides), hunk bodies skipped so '--- x' content is not a header."""
    paths: list[str] = []
    lines = patch.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _HUNK.match(line)
        if m:
            old = int(m.group(1)) if m.group(1) is not None else 1
            new = int(m.group(2)) if m.group(2) is not None else 1
            i += 1
            while i < len(lines) and (old > 0 or new > 0):
                body = lines[i]
                if body.startswith("-"):
                    old -= 1
                elif body.startswith("+"):
                    new -= 1
                elif body.startswith("\\"):
                    pass
                else:
                    old -= 1
                    new -= 1
                i += 1
            continue
        g = _GIT_HEADER.match(line)
        for p in g.groups() if g else ():
            if p not in paths:
                paths.append(p)
        for prefix in ("--- ", "+++ ", "rename from ", "rename to ", "copy from ", "copy to "):
            if line.startswith(prefix):
                p = (
                    _strip_prefix(line[len(prefix) :])
                    if prefix in ("--- ", "+++ ")
                    else _unquote(line[len(prefix) :].strip())
                )
                if p and p not in paths:
                    paths.append(p)
        i += 1
    return paths


def patch_paths(patch: str) -> list[str]:
    if is_search_replace(patch):
        try:
            return list(dict.fromkeys(e.path for e in parse_edits(patch)))
        except SearchReplaceError:
            return []
    return diff_paths(patch)


def _mode(path: Path) -> int:
    try:
        return path.lstat().st_mode & 0o777 if path.is_file() and not path.is_symlink() else 0o644
    except OSError:
        return 0o644


def _real_parent(copy_dir: Path, rel: str) -> Path:
    """The parent folder of `rel` in the copy, made of real folders only (model symlinks on the way are removed)."""
    cur = copy_dir
    for part in Path(rel).parts[:-1]:
        cur = cur / part
        if cur.is_symlink() or (cur.exists() and not cur.is_dir()):
            cur.unlink()
        if not cur.exists():
            cur.mkdir()
    return cur


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def safe_write(copy_dir: Path, rel: str, data: bytes, mode: int = 0o644) -> None:
    target = _real_parent(copy_dir, check_rel(rel)) / Path(rel).name
    _remove(target)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def safe_restore(copy_dir: Path, base_dir: Path, rel: str) -> None:
    """Make `rel` in the copy what it is in the base (removed if the base has no such file)."""
    rel = check_rel(rel)
    src = base_dir / rel
    if src.is_symlink():
        target = _real_parent(copy_dir, rel) / Path(rel).name
        _remove(target)
        os.symlink(os.readlink(src), target)
    elif src.is_file():
        safe_write(copy_dir, rel, src.read_bytes(), src.stat().st_mode & 0o777)
    else:
        if through_symlink(copy_dir, rel):  # never look at, let alone delete, what a model link points to
            _real_parent(copy_dir, rel)
        target = copy_dir / rel
        if target.is_symlink() or target.exists():
            _remove(target)


def file_state(copy_dir: Path, rel: str) -> tuple | None:
    """What a file is, without following a symlink: to tell whether a patch really changed it."""
    p = copy_dir / rel
    if through_symlink(copy_dir, rel):
        return ("through-link",)
    try:
        st = p.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    if p.is_symlink():
        return ("link", os.readlink(p))
    if p.is_dir():
        return ("dir",)
    return ("file", st.st_mode & 0o111, p.read_bytes())


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[bool, str]:
    # No repository above or in the copy is ever discovered, and no user/system git config applies.
    full_env = {
        **os.environ,
        "GIT_CEILING_DIRECTORIES": str(cwd.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LC_ALL": "C",
        **(env or {}),
    }
    try:
        r = subprocess.run(
            cmd, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    return r.returncode == 0, (r.stdout + r.stderr).strip()


def _three_way(copy_dir: Path, patch_file: Path, source: GitSource, scratch: Path) -> tuple[bool, str]:
    # A private index and object store on top of the repository's objects: the repository is never written.
    env = {
        "GIT_DIR": str(source.git_dir),
        "GIT_WORK_TREE": str(copy_dir),
        "GIT_INDEX_FILE": str(scratch / "index"),
        "GIT_OBJECT_DIRECTORY": str(scratch / "objects"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(Path(source.git_dir).resolve() / "objects"),
    }
    (scratch / "objects").mkdir(exist_ok=True)
    ok, out = _run(["git", "-c", "safe.directory=*", "read-tree", source.commit], copy_dir, env)
    if ok:
        _run(["git", "-c", "safe.directory=*", "update-index", "-q", "--refresh"], copy_dir, env)
        ok, out = _run(
            ["git", "-c", "safe.directory=*", "apply", "--verbose", "--3way", str(patch_file)], copy_dir, env
        )
    return ok, out


def apply_patch(copy_dir: Path, patch: str, *, base_dir: Path, source: GitSource | None = None) -> ApplyResult:
    """Apply a model (or test) patch to the copy. Never raises on bad input: the result says what happened."""
    if is_search_replace(patch):
        try:
            edits = parse_edits(patch)
            paths = tuple(dict.fromkeys(e.path for e in edits))
            apply_edits(copy_dir, edits, write=lambda root, rel, data: safe_write(root, rel, data, _mode(root / rel)))
        except (SearchReplaceError, UnsafePath) as exc:
            for rel in patch_paths(patch):
                try:
                    safe_restore(copy_dir, base_dir, rel)
                except UnsafePath:
                    pass
            return ApplyResult(False, None, f"search/replace: {exc}", tuple(patch_paths(patch)))
        return ApplyResult(True, "search/replace", None, paths)

    paths = tuple(diff_paths(patch))
    if not paths:
        return ApplyResult(False, None, "not a unified diff or search/replace edit (no file headers found)", ())
    try:
        for rel in paths:
            check_rel(rel)
    except UnsafePath as exc:
        return ApplyResult(False, None, str(exc), paths)
    before = {rel: file_state(copy_dir, rel) for rel in paths}
    log: list[str] = []
    with tempfile.TemporaryDirectory(prefix="postgame-apply-") as tmp:
        scratch = Path(tmp)
        patch_file = scratch / "patch.diff"
        patch_file.write_text(
            patch if patch.endswith("\n") else patch + "\n", encoding="utf-8", errors="surrogateescape"
        )
        attempts: list[tuple[str, Callable[[], tuple[bool, str]]]] = [
            (
                "git apply",
                lambda: _run(["git", "apply", "--verbose", "--whitespace=nowarn", str(patch_file)], copy_dir),
            ),
        ]
        if source is not None:
            attempts.append(("git apply --3way", lambda: _three_way(copy_dir, patch_file, source, scratch)))
        attempts.append(
            (
                "patch --fuzz",
                lambda: _run(
                    [
                        "patch",
                        "--batch",
                        "--forward",
                        "--fuzz=5",
                        "-p1",
                        "--unified",
                        "--no-backup-if-mismatch",
                        "--reject-file=-",
                        "-i",
                        str(patch_file),
                    ],
                    copy_dir,
                ),
            )
        )
        for method, attempt in attempts:
            ok, out = attempt()
            log.append(f"$ {method}: {'ok' if ok else 'failed'}\n{out}")
            if ok and any(file_state(copy_dir, rel) != before[rel] for rel in paths):
                return ApplyResult(True, method, None, paths, "\n".join(log))
            if ok:
                log.append(f"{method} exited 0 but changed nothing")
            for rel in paths:  # undo a partial application before the next attempt
                safe_restore(copy_dir, base_dir, rel)
    last = log[-1].splitlines()[-1] if log else ""
    return ApplyResult(False, None, f"patch does not apply ({last})", paths, "\n".join(log))
