"""Search/replace edit blocks, the format many coding agents emit instead of diffs:

    path/to/file.py
    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE

The path is the last non-empty line before the block that is not a ``` fence (a block without one reuses the
previous path). Matching is exact first, then tolerant of trailing whitespace, then of a uniform change of
indentation (the replacement is re-indented the same way). The first match is replaced. An empty SEARCH creates the
file, or appends to it. Every block must match, or nothing is written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evals.harness.paths import check_rel, through_symlink

_START = re.compile(r"^<{5,9} SEARCH\s*$")
_MID = re.compile(r"^={5,9}\s*$")
_END = re.compile(r"^>{5,9} REPLACE\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


class SearchReplaceError(ValueError):
    pass


@dataclass(frozen=True)
class Edit:
    path: str
    search: str
    replace: str


def is_search_replace(text: str) -> bool:
    return any(_START.match(line) for line in text.splitlines())


def _clean_path(line: str) -> str:
    path = line.strip().strip("`*").strip()
    for prefix in ("# ", "File: ", "file: ", "Path: ", "path: "):
        if path.startswith(prefix):
            path = path[len(prefix) :].strip()
    return path.rstrip(":").strip()


def parse_edits(text: str) -> list[Edit]:
    lines = text.splitlines()
    edits: list[Edit] = []
    path: str | None = None
    last_end = -1
    i = 0
    while i < len(lines):
        if not _START.match(lines[i]):
            i += 1
            continue
        for j in range(i - 1, last_end, -1):
            if lines[j].strip() and not _FENCE.match(lines[j]):
                path = _clean_path(lines[j])
                break
        if not path:
            raise SearchReplaceError(f"edit block at line {i + 1} names no file")
        k = i + 1
        while k < len(lines) and not _MID.match(lines[k]):
            k += 1
        m = k + 1
        while m < len(lines) and not _END.match(lines[m]):
            m += 1
        if m >= len(lines):
            raise SearchReplaceError(f"edit block at line {i + 1} for {path} is not closed (======= / >>>>>>> REPLACE)")
        search, replace = lines[i + 1 : k], lines[k + 1 : m]
        edits.append(Edit(path, "".join(s + "\n" for s in search), "".join(r + "\n" for r in replace)))
        last_end = i = m
        i += 1
    if not edits:
        raise SearchReplaceError("no edit blocks found")
    return edits


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _find_lines(hay: list[str], needle: list[str], key: Callable[[str], str]) -> int:
    keys = [key(n) for n in needle]
    for start in range(len(hay) - len(needle) + 1):
        if all(key(hay[start + n]) == keys[n] for n in range(len(needle))):
            return start
    return -1


def replace_once(content: str, search: str, replace: str) -> str | None:
    """`content` with the first match of `search` replaced, or None when nothing matches."""
    if search == "":
        return content + ("" if not content or content.endswith("\n") else "\n") + replace
    if search in content:
        return content.replace(search, replace, 1)
    hay, needle, new = content.splitlines(keepends=True), search.splitlines(), replace.splitlines()
    while needle and not needle[-1].strip():
        needle.pop()
    if not needle:
        return None
    start = _find_lines(hay, needle, lambda s: s.rstrip())
    shift = None
    if start < 0:
        start = _find_lines(hay, needle, lambda s: s.strip())
        if start < 0:
            return None
        first = next(n for n in range(len(needle)) if needle[n].strip())
        have, want = _indent(hay[start + first]), _indent(needle[first])
        shift = (have, want)
    if shift is not None:
        have, want = shift
        out = []
        for line in new:
            if line.strip() and line.startswith(want):
                line = have + line[len(want) :]
            out.append(line)
        new = out
    tail = hay[start + len(needle) - 1]
    newline = "\n" if tail.endswith("\n") else ""
    body = "\n".join(new) + (newline if new else "")
    return "".join(hay[:start]) + body + "".join(hay[start + len(needle) :])


def apply_edits(root: Path, edits: list[Edit], *, write: Callable[[Path, str, bytes], None]) -> None:
    """Apply every edit in memory, then write them all with `write(root, rel, data)`; raise if any fails."""
    contents: dict[str, str | None] = {}
    for n, edit in enumerate(edits, start=1):
        rel = check_rel(edit.path)
        if rel not in contents:
            p = root / rel
            if through_symlink(root, rel) or p.is_symlink() or (p.exists() and not p.is_file()):
                raise SearchReplaceError(f"block {n}: {rel} is not a regular file")
            try:
                contents[rel] = p.read_text(encoding="utf-8") if p.exists() else None
            except UnicodeDecodeError:
                raise SearchReplaceError(f"block {n}: {rel} is not UTF-8 text") from None
        current = contents[rel]
        if current is None:
            if edit.search.strip():
                raise SearchReplaceError(f"block {n}: {rel} does not exist")
            contents[rel] = edit.replace
            continue
        updated = replace_once(current, edit.search, edit.replace)
        if updated is None:
            raise SearchReplaceError(f"block {n}: SEARCH text not found in {rel}")
        contents[rel] = updated
    for rel, text in contents.items():
        assert text is not None
        write(root, rel, text.encode("utf-8"))
