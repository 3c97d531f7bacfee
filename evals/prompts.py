"""How a task is shown to the policy, and the answer format it must use: one place, used by the traffic simulator,
training and evaluation alike.

The prompt (`render_prompt`) is the problem statement and the file(s) the scaffold localised (the instance's
`prompt_files`), each with its path, then `ANSWER_FORMAT`. The answer is one or more search/replace edit blocks:

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

import re
from collections.abc import Mapping
from typing import Any

from evals.harness.searchreplace import Edit, SearchReplaceError, parse_edits, replace_once

SYSTEM_PROMPT = ("You are a careful software engineer. You read an issue and the code it concerns, find the cause of the "
                 "bug and answer with the smallest edit that fixes it, in the requested format.")

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

_FENCE_LANG = {".py": "python", ".md": "markdown", ".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}


def _field(instance: Any, name: str) -> str:
    value = instance.get(name) if isinstance(instance, Mapping) else getattr(instance, name, None)
    return str(value or "")


def render_prompt(instance: Any, files: Mapping[str, str]) -> str:
    """The prompt for `instance` (an Instance or a mapping with `repo`, `problem_statement`), showing `files`
    ({path: content}, in the order given)."""
    shown = []
    for path, content in files.items():
        lang = _FENCE_LANG.get(path[path.rfind("."):], "")
        body = content if content.endswith("\n") else content + "\n"
        shown.append(f"{path}\n```{lang}\n{body}```")
    return PROMPT_TEMPLATE.format(repo=_field(instance, "repo"),
                                  problem_statement=_field(instance, "problem_statement").strip(),
                                  files="\n\n".join(shown), answer_format=ANSWER_FORMAT)


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
    if start and "@@" in text[start.start():]:
        body = text[start.start():]
        return body if body.endswith("\n") else body + "\n"
    return ""


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


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
    """A unified diff written as the answer the policy should give. The blocks of each file are checked against
    `files` (the shown files at base): when a hunk's text is not a unique match, that file gets one block that
    replaces it whole."""
    edits = diff_to_edits(diff)
    out: list[Edit] = []
    for path in dict.fromkeys(e.path for e in edits):
        mine = [e for e in edits if e.path == path]
        content = files.get(path)
        if content is None:
            out += mine
            continue
        current, ok = content, True
        for n, e in enumerate(mine):
            e = mine[n] = _tighten(e, current)
            updated = replace_once(current, e.search, e.replace) if current.count(e.search) == 1 else None
            if updated is None:
                ok = False
                break
            current = updated
        if ok:
            out += mine
        else:
            whole = content
            for e in mine:
                whole = whole.replace(e.search, e.replace, 1)
            out.append(Edit(path, content, whole))
    return render_edits(out)


def _tighten(edit: Edit, content: str) -> Edit:
    """Drop context lines shared by SEARCH and REPLACE while SEARCH stays a unique, non-blank match."""
    old, new = edit.search.splitlines(keepends=True), edit.replace.splitlines(keepends=True)
    while len(old) > 1 and len(new) > 1 and old[0] == new[0] and \
            content.count("".join(old[1:])) == 1 and "".join(old[1:]).strip():
        old, new = old[1:], new[1:]
    while len(old) > 1 and len(new) > 1 and old[-1] == new[-1] and \
            content.count("".join(old[:-1])) == 1 and "".join(old[:-1]).strip():
        old, new = old[:-1], new[:-1]
    return Edit(edit.path, "".join(old), "".join(new))
