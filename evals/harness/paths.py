"""Relative paths inside a run's copy, checked before anything reads or writes them (shared by `patching` and
`searchreplace`, so neither imports the other for them).

A path a patch names must stay inside the copy: not absolute, no `..`, nothing under `.git`, no `~`. A folder on the
way that is a symlink could lead out of the copy onto the host: `through_symlink` says so before anything follows it.
"""

from __future__ import annotations

from pathlib import Path


class UnsafePath(ValueError):
    """A path that would leave the copy (absolute, `..`, `.git`, `~`)."""


def check_rel(rel: str) -> str:
    """`rel` as a POSIX relative path; raises UnsafePath when it could leave the copy."""
    p = Path(rel)
    if p.is_absolute() or ".." in p.parts or ".git" in p.parts or not p.parts or rel.startswith("~"):
        raise UnsafePath(f"unsafe path {rel!r}")
    return p.as_posix()


def through_symlink(copy_dir: Path, rel: str) -> bool:
    """Whether a folder on the way to `rel` is a symlink (reading through it could reach the host)."""
    cur = copy_dir
    for part in Path(rel).parts[:-1]:
        cur = cur / part
        if cur.is_symlink():
            return True
    return False
