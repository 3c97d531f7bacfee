"""How a task is shown to the policy, and the answer format it must use: one place, used by the traffic simulator,
training and evaluation alike.

The prompt (`render_prompt`) has two settings (`policy.prompt_context`):
- `file`: the problem statement and the file(s) the scaffold localised (the instance's `prompt_files`), each with its
  path, then `ANSWER_FORMAT`;
- `oracle` (SWE-bench's "oracle" retrieval, the embedded default): the problem statement, the answer format, then
  only the code window the failing tests reach (`oracle_window`: the function that holds the lines the gold patch
  changes, with its path and line numbers). A small model can act on that; a real checkpoint can read whole files.

The answer is one or more search/replace edit blocks (one for an oracle prompt):

    path/to/file.py
    <<<<<<< SEARCH
    lines copied exactly from the file
    =======
    the lines that replace them
    >>>>>>> REPLACE

`extract_patch(completion)` turns a completion into the patch the harness applies: the edit blocks it contains,
re-written in the canonical form above (the harness's `evals.harness.searchreplace` parses them: path on the last
non-empty line before the block, code fences allowed around it), else a unified diff found in the completion
(```diff fence or bare `diff --git` / `--- a/` headers), else "" (an empty patch: graded unresolved).
`answer_for_patch(diff, files)` writes a unified diff (a gold patch) as such an answer, for demonstrations.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from evals.harness.searchreplace import Edit, SearchReplaceError, parse_edits, replace_once

SYSTEM_PROMPT = (
    "You are a careful software engineer. You read an issue and the code it concerns, find the cause of the "
    "bug and answer with the smallest edit that fixes it, in the requested format."
)

ANSWER_FORMAT = """\
Answer with the edits that fix the issue, as one or more blocks of this exact form:

path/to/file.py
<<<<<<< SEARCH
lines copied exactly from the file, enough to be unique
=======
the lines that replace them
>>>>>>> REPLACE

The line before each block is the file's path as shown above. Change only what the fix needs."""

PROMPT_TEMPLATE = """\
You are fixing a bug in the repository {repo}.

Issue:
{problem_statement}

{files}

{answer_format}
"""

ORACLE_ANSWER_FORMAT = """\
Answer with one block: the file's path, then <<<<<<< SEARCH, the lines to change copied exactly from the code \
below, =======, the fixed lines, >>>>>>> REPLACE."""

ORACLE_TEMPLATE = """\
You are fixing a bug in the repository {repo}.

Issue:
{problem_statement}

{answer_format}

{path} (lines {start}-{end})
```{lang}
{code}```
The fix goes in {path}.
"""

PromptContext = Literal["oracle", "file"]
PROMPT_CONTEXTS: tuple[str, ...] = ("oracle", "file")
MAX_WINDOW_LINES = 20

_FENCE_LANG = {".py": "python", ".md": "markdown", ".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}


def _field(instance: Any, name: str) -> str:
    value = instance.get(name) if isinstance(instance, Mapping) else getattr(instance, name, None)
    return str(value or "")


@dataclass(frozen=True)
class Window:
    """Lines `start`..`end` (1-based, inclusive) of `path` at base: the code an oracle prompt shows."""

    path: str
    start: int
    end: int
    text: str


def changed_lines(diff: str) -> dict[str, list[int]]:
    """{path: 1-based lines of the old file that a unified diff removes or inserts before}, in diff order."""
    out: dict[str, list[int]] = {}
    path, line = "", 0
    for row in diff.splitlines():
        if row.startswith("+++ "):
            target = row[4:].strip().split("\t")[0]
            path = target[2:] if target.startswith("b/") else target
            continue
        if row.startswith(("--- ", "diff --git", "index ")):
            continue
        hunk = _HUNK_START.match(row)
        if hunk:
            line = int(hunk.group(1))
            continue
        if not path or line == 0 or row.startswith("\\"):
            continue
        if row.startswith("-"):
            out.setdefault(path, []).append(line)
            line += 1
        elif row.startswith("+"):
            out.setdefault(path, []).append(max(1, line - 1))  # the line it follows: inside the function
        else:
            line += 1
    return out


def oracle_window(instance: Any, files: Mapping[str, str]) -> Window | None:
    """The code the failing tests reach: the innermost function (decorators included) of the shown file that holds
    the first line the instance's gold `patch` changes; lines around it when no function does; at most
    `MAX_WINDOW_LINES` lines, centred on the change. None when the patch touches no shown file."""
    for path, lines in changed_lines(_field(instance, "patch")).items():
        content = files.get(path)
        if content is None or not lines:
            continue
        rows = content.splitlines(keepends=True)
        first, last = min(lines), max(lines)
        span = _enclosing_function(content, first, last)
        start, end = span if span else (first - 12, last + 12)
        if end - start + 1 > MAX_WINDOW_LINES:
            start = max(start, first - MAX_WINDOW_LINES // 2)
            end = min(end, start + MAX_WINDOW_LINES - 1)
        start, end = max(1, start), min(len(rows), end)
        if start > end:
            continue
        return Window(path, start, end, "".join(rows[start - 1 : end]))
    return None


def _enclosing_function(content: str, first: int, last: int) -> tuple[int, int] | None:
    try:
        tree = ast.parse(content)
    except SyntaxError:
        return None
    best: tuple[int, int] | None = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno or node.lineno
            if start <= first and last <= end and (best is None or end - start < best[1] - best[0]):
                best = (start, end)
    return best


def render_prompt(instance: Any, files: Mapping[str, str], *, context: PromptContext = "file") -> str:
    """The prompt for `instance` (an Instance or a mapping with `repo`, `problem_statement` and, for an oracle
    prompt, the gold `patch`), showing `files` ({path: content at base}, in the order given) whole, or only the
    oracle window of them (`context="oracle"`; whole files when the patch locates no window)."""
    if context not in PROMPT_CONTEXTS:
        raise ValueError(f"prompt context {context!r} unknown; valid: {', '.join(PROMPT_CONTEXTS)}")
    window = oracle_window(instance, files) if context == "oracle" else None
    if window is not None:
        lang = _FENCE_LANG.get(window.path[window.path.rfind(".") :], "")
        return ORACLE_TEMPLATE.format(
            repo=_field(instance, "repo"),
            problem_statement=_field(instance, "problem_statement").strip(),
            answer_format=ORACLE_ANSWER_FORMAT,
            path=window.path,
            start=window.start,
            end=window.end,
            lang=lang,
            code=window.text,
        )
    shown = []
    for path, content in files.items():
        lang = _FENCE_LANG.get(path[path.rfind(".") :], "")
        body = content if content.endswith("\n") else content + "\n"
        shown.append(f"{path}\n```{lang}\n{body}```")
    return PROMPT_TEMPLATE.format(
        repo=_field(instance, "repo"),
        problem_statement=_field(instance, "problem_statement").strip(),
        files="\n\n".join(shown),
        answer_format=ANSWER_FORMAT,
    )


def render_edits(edits: list[Edit]) -> str:
    """Edit blocks in the canonical form (each SEARCH / REPLACE ends with a newline or is empty)."""
    out = []
    for e in edits:
        out.append(f"{e.path}\n<<<<<<< SEARCH\n{e.search}=======\n{e.replace}>>>>>>> REPLACE\n")
    return "\n".join(out)


_DIFF_FENCE = re.compile(r"```(?:diff|patch)[^\n]*\n(.*?)```", re.S)
_DIFF_START = re.compile(r"^(diff --git |--- (a/|/dev/null))", re.M)


def extract_patch(completion: str) -> str:
    """The patch in a completion: canonical edit blocks, else a unified diff, else ""."""
    text = completion or ""
    if "<<<<<<< SEARCH" in text or re.search(r"^<{5,9} SEARCH", text, re.M):
        try:
            return render_edits(parse_edits(text))
        except SearchReplaceError:
            return ""
    fenced = _DIFF_FENCE.search(text)
    if fenced and "@@" in fenced.group(1):
        body = fenced.group(1)
        return body if body.endswith("\n") else body + "\n"
    start = _DIFF_START.search(text)
    if start and "@@" in text[start.start() :]:
        body = text[start.start() :]
        return body if body.endswith("\n") else body + "\n"
    return ""


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")
_HUNK_START = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


# A file the prompt shows: its path alone on a line (with "(lines A-B)" for an oracle window), then a fenced block.
_SHOWN = re.compile(r"^([\w.-]*[./][\w./-]*)(?: \(lines \d+-\d+\))?\n```[^\n]*\n(.*?)^```", re.M | re.S)


def shown_code(prompt: str) -> dict[str, str]:
    """{path: code} of every file (or oracle window) `render_prompt` showed in `prompt`."""
    return {m.group(1): m.group(2) for m in _SHOWN.finditer(prompt)}


def repoint(edits: list[Edit], shown: Mapping[str, str]) -> list[Edit]:
    """`edits` with each one whose path names no shown file pointed at the one shown file whose code holds its
    SEARCH text: a small model half-remembers paths (it wrote `graphlib.py` and `csv.py` for `graphlib2/paths.py`
    and `intervals/stats.py` for the unseen projects' files), so its edit of the code it was shown would not apply.
    Aider's edit-block coder does the like: an edit that does not apply to the file it names is tried on the other
    files in the chat (aider/coders/editblock_coder.py, `apply_edits`). An edit whose SEARCH text no shown file, or
    several, hold is left as it is."""
    out = []
    for e in edits:
        if e.path not in shown and e.search.strip():
            homes = [path for path, code in shown.items() if e.search in code]
            if len(homes) == 1:
                e = Edit(homes[0], e.search, e.replace)
        out.append(e)
    return out


def diff_to_edits(diff: str) -> list[Edit]:
    """Each hunk of a unified diff as an edit (SEARCH = its old lines, REPLACE = its new lines)."""
    edits: list[Edit] = []
    path = ""
    old: list[str] | None = None
    new: list[str] = []

    def flush() -> None:
        if old is not None:
            edits.append(Edit(path, "".join(old), "".join(new)))

    for line in diff.splitlines(keepends=True):
        if line.startswith("+++ "):
            flush()
            old = None
            target = line[4:].strip().split("\t")[0]
            path = target[2:] if target.startswith("b/") else target
        elif line.startswith(("--- ", "diff --git", "index ", "new file", "deleted file")):
            flush()
            old = None
        elif _HUNK.match(line):
            flush()
            old, new = [], []
        elif old is not None and line.startswith("\\"):
            continue
        elif old is not None:
            tag, body = line[:1], line[1:] if line[:1] in "+- " else line
            if tag in (" ", "-"):
                old.append(body)
            if tag in (" ", "+"):
                new.append(body)
    flush()
    return edits


def answer_for_patch(diff: str, files: Mapping[str, str]) -> str:
    """A unified diff written as the answer the policy should give.

    Each hunk is checked against `files` (the shown text at base: whole files or only part of one): its SEARCH is
    cut to the lines the hunk changes plus as much of its context as the shown text holds and needs to be a unique
    match. A hunk whose changed lines are not in the shown text cannot be written as a block and is left out, so the
    answer never holds a no-op block (SEARCH == REPLACE). When the fitted blocks of a file do not apply one after
    another, that file gets one block that replaces the shown text whole."""
    edits = diff_to_edits(diff)
    out: list[Edit] = []
    for path in dict.fromkeys(e.path for e in edits):
        mine = [e for e in edits if e.path == path]
        content = files.get(path)
        if content is None:
            out += [e for e in mine if e.search != e.replace]
            continue
        fitted = [f for f in (_fit(e, content) for e in mine) if f is not None]
        current, ok = content, True
        for e in fitted:
            updated = replace_once(current, e.search, e.replace) if current.count(e.search) == 1 else None
            if updated is None:
                ok = False
                break
            current = updated
        if ok:
            out += fitted
        elif current != content:
            out.append(Edit(path, content, current))
    return render_edits([e for e in out if e.search != e.replace])


def _fit(edit: Edit, content: str) -> Edit | None:
    """The hunk cut to its changed lines, then grown back by its own context lines (one at a time, alternating after
    and before) until SEARCH is a unique, non-blank match in `content`; None when no cut of it is."""
    old, new = edit.search.splitlines(keepends=True), edit.replace.splitlines(keepends=True)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    if head == len(old) == len(new):
        return None  # the hunk changes nothing
    lo, hi = head, len(old) - tail  # old[lo:hi] are the changed lines; new[lo:len(new) - tail] replace them
    n_lo, n_hi = head, len(new) - tail
    while True:
        search = "".join(old[lo:hi])
        if search.strip() and content.count(search) == 1:
            return Edit(edit.path, search, "".join(new[n_lo:n_hi]))
        grow_after = hi < len(old) and (hi - (len(old) - tail) <= head - lo or lo == 0)
        if grow_after:
            hi, n_hi = hi + 1, n_hi + 1
        elif lo > 0:
            lo, n_lo = lo - 1, n_lo - 1
        else:
            return None
