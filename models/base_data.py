"""What the base policy learns from: local code, and examples made from it with no test run.

- `pretraining_corpus`: the Python standard library's source that ships with the interpreter (a capped, sorted
  subset) and the *train-split* seed projects; never an eval or holdout project.
- `synthetic_repairs`: the factory's mutation operators applied to that code; the answer is known (the block that
  restores the original lines), so no test runs. Every (file, mutation) that is the bug of an indomain, eval or holdout
  instance is left out (`held_out_bugs`); so is, with `train_split: withheld`, every train-split bug (`train_bugs`),
  and of the seed projects' other mutants only a share is kept (`project_repair_share`, `drilled`).
- `gold_repairs`: the train-split instances with their real problem statements and gold answers (`train_split:
  shown` only). `repair_data` assembles the repair stage's examples by these rules.
- `copy_example` / `edit_example`: the curriculum's first steps (copy a span; copy a line and edit one token).

Every prompt is rendered by `evals.prompts.render_prompt` (oracle context), exactly as traffic and evaluation render
it; every answer by `evals.prompts.answer_for_patch`.
"""

from __future__ import annotations

import ast
import hashlib
import random
import re
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from evals.factory.files import diff_file
from evals.factory.mutate import Mutation, find_mutations
from evals.factory.seeds import SeedProject
from evals.prompts import answer_for_patch, render_prompt
from postgame.config import BootstrapSettings

STDLIB_SKIP = {
    "test",
    "tests",
    "idlelib",
    "lib2to3",
    "site-packages",
    "turtledemo",
    "__pycache__",
    "ensurepip",
    "tkinter",
    "pydoc_data",
    "encodings",
}
STDLIB_REPO = "python/stdlib"


@dataclass(frozen=True)
class SourceFile:
    """One file of the pre-training corpus: `project` is a seed project's name, or `stdlib`."""

    project: str
    repo: str
    path: str
    text: str


@dataclass(frozen=True)
class Example:
    """A prompt and the completion the policy should write after it (the loss is on the completion)."""

    prompt: str
    completion: str
    kind: str  # copy | edit | repair | gold
    source: tuple[str, str, str] = ("", "", "")  # (project, path, mutation key) of a repair


def stdlib_files(settings: BootstrapSettings) -> list[SourceFile]:
    """The standard library's modules (tests, GUI, vendored and data packages left out), smallest-first within the cap,
    as a sorted, reproducible subset."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(part in STDLIB_SKIP for part in rel.parts) or path.stat().st_size > settings.stdlib_max_file_bytes:
            continue
        try:
            text = path.read_text(encoding="utf-8")
            ast.parse(text)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        found.append(SourceFile("stdlib", STDLIB_REPO, rel.as_posix(), text))
    return found[: settings.stdlib_max_files]


def seed_files(seeds: list[SeedProject]) -> list[SourceFile]:
    """The seed projects' Python files (package and tests)."""
    return [
        SourceFile(s.name, s.repo, path, data.decode())
        for s in seeds
        for path, data in sorted({**s.source, **s.tests}.items())
        if path.endswith(".py")
    ]


def pretraining_corpus(train_seeds: list[SeedProject], settings: BootstrapSettings) -> list[SourceFile]:
    """The standard library subset and the train-split seed projects: the only code the base reads."""
    return stdlib_files(settings) + seed_files(train_seeds)


def held_out_bugs(records: list[dict]) -> set[tuple[str, str, str]]:
    """(project, path, mutation key) of every synthetic instance outside the train split: bugs the base must never be
    shown. A bug mined from a project's history has no mutation key: it is a real fix, never one of the corpus's
    mutants."""
    return {
        (r["seed_project"], r["mutation"]["path"], r["mutation"]["key"])
        for r in records
        if r["split"] != "train" and "key" in r["mutation"]
    }


def train_bugs(records: list[dict]) -> set[tuple[str, str, str]]:
    """(project, path, mutation key) of every synthetic train-split instance: the pool the demo's traffic serves."""
    return {
        (r["seed_project"], r["mutation"]["path"], r["mutation"]["key"])
        for r in records
        if r["split"] == "train" and "key" in r["mutation"]
    }


def drilled(key: tuple[str, str, str], share: float) -> bool:
    """Whether a seed project's mutant (project, path, mutation key) is among the `project_repair_share` the base
    repairs: a fixed draw from the key's hash, so the same share keeps the same mutants on every machine."""
    if share >= 1.0:
        return True
    return int(hashlib.sha256(":".join(key).encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def repair_data(
    corpus: list[SourceFile], records: list[dict], seeds: dict[str, SeedProject], settings: BootstrapSettings
) -> tuple[list[Example], list[Example], int]:
    """The repair stage's examples and how many bugs were left out: (synthetic repairs, gold, left out). Held-out
    bugs never appear; with `train_split: withheld` neither do the train split's bugs, mutant or gold, so the
    traffic's tasks are new to the base as production work is to a deployed model."""
    excluded = held_out_bugs(records)
    gold: list[Example] = []
    statements: dict = {}
    if settings.train_split == "withheld":
        excluded |= train_bugs(records)
    else:
        gold, statements = gold_repairs(records, seeds)
    return synthetic_repairs(corpus, excluded, settings, statements), gold, len(excluded)


def _statement(function: str, module: str, rng: random.Random) -> str:
    title = rng.choice(
        [
            f"`{function}` returns the wrong result",
            f"Wrong result from `{function}`",
            f"Unexpected output from `{function}`",
        ]
    )
    body = rng.choice(
        [
            f"`{function}` in `{module}` does not behave as documented.",
            f"Calling `{function}` from `{module}` gives a result its tests do not expect.",
            f"A test of `{module}` fails in `{function}`.",
        ]
    )
    return f"{title}\n\n{body}\n"


def _function_at(tree: ast.Module, line: int) -> str:
    best, size = "", 10**9
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            if (node.end_lineno or 0) - node.lineno < size:
                best, size = node.name, (node.end_lineno or 0) - node.lineno
    return best


def repair_example(
    file: SourceFile, mut: Mutation, statement: str | None, rng: random.Random, kind: str = "repair"
) -> Example | None:
    """The oracle prompt for `file` with `mut` applied, and the block that restores the original lines."""
    buggy = mut.apply(file.text)
    gold = diff_file(file.path, buggy, file.text)
    if statement is None:
        module = file.path.removesuffix(".py").replace("/", ".")
        statement = _statement(_function_at(ast.parse(file.text), mut.line) or module, module, rng)
    instance = {"repo": file.repo, "problem_statement": statement, "patch": gold}
    answer = answer_for_patch(gold, {file.path: buggy})
    if not answer:
        return None
    return Example(
        render_prompt(instance, {file.path: buggy}, context="oracle"), answer, kind, (file.project, file.path, mut.key)
    )


def function_mutations(file: SourceFile, rng: random.Random, per_file: int) -> list[Mutation]:
    """Up to `per_file` mutations of a large file, one per function in a seeded order. Each function is mutated on
    its own (checking every mutant of a whole stdlib module is too slow), under an `if 1:` header when indented, and
    the edit is mapped back to the file's offsets."""
    tree = ast.parse(file.text)
    data = file.text.encode()
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
    functions = [
        n
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and (n.end_lineno or n.lineno) - n.lineno <= 60
    ]
    rng.shuffle(functions)
    out: list[Mutation] = []
    for fn in functions:
        first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
        a = starts[first - 1]
        b = starts[fn.end_lineno] if fn.end_lineno is not None and fn.end_lineno < len(starts) else len(data)
        chunk = data[a:b].decode()
        header = "if 1:\n" if chunk[:1] in (" ", "\t") else ""
        try:
            found = find_mutations(header + chunk, file.path)
        except SyntaxError:
            continue
        if not found:
            continue
        m = found[rng.randrange(len(found))]
        shift = a - len(header.encode())
        out.append(
            Mutation(
                m.operator,
                file.path,
                m.start + shift,
                m.end + shift,
                first + m.line - 1 - header.count("\n"),
                m.original,
                m.replacement,
            )
        )
        if len(out) >= per_file:
            break
    return out


def synthetic_repairs(
    corpus: list[SourceFile],
    excluded: set[tuple[str, str, str]],
    settings: BootstrapSettings,
    statements: dict[tuple[str, str, str], str] | None = None,
) -> list[Example]:
    """Repairs of mutants of the corpus: the `project_repair_share` of the seed projects' mutants (never an
    `excluded` one), and up to `stdlib_mutations_per_file` per standard library module. `statements` gives real
    problem statements for (project, path, key) where a train instance has one."""
    statements = statements or {}
    out: list[Example] = []
    for file in corpus:
        rng = random.Random(f"{settings.seed}:{file.project}:{file.path}")
        if file.project == "stdlib":
            muts = function_mutations(file, rng, settings.stdlib_mutations_per_file)
        elif "/" in file.path and not file.path.startswith("tests/"):
            keys = ((m, (file.project, file.path, m.key)) for m in find_mutations(file.text, file.path))
            muts = [m for m, key in keys if key not in excluded and drilled(key, settings.project_repair_share)]
        else:
            continue
        for mut in muts:
            key = (file.project, file.path, mut.key)
            if key in excluded:
                continue
            try:
                example = repair_example(file, mut, statements.get(key), rng)
            except (SyntaxError, ValueError):
                continue
            if example is not None:
                out.append(example)
    return out


def gold_repairs(records: list[dict], seeds: dict[str, SeedProject]) -> tuple[list[Example], dict]:
    """Train-split instances as examples (real statement, gold answer) and {(project, path, key): statement}."""
    out, statements = [], {}
    found: dict[tuple[str, str], dict[str, Mutation]] = {}
    for rec in records:
        if rec["split"] != "train" or rec["seed_project"] not in seeds:
            continue
        seed, m = seeds[rec["seed_project"]], rec["mutation"]
        file = SourceFile(seed.name, seed.repo, m["path"], seed.source[m["path"]].decode())
        if (seed.name, file.path) not in found:
            found[(seed.name, file.path)] = {x.key: x for x in find_mutations(file.text, file.path)}
        mut = found[(seed.name, file.path)].get(m["key"])
        if mut is None:
            continue
        statements[(seed.name, m["path"], m["key"])] = rec["problem_statement"]
        example = repair_example(file, mut, rec["problem_statement"], random.Random(0), kind="gold")
        if example is not None:
            out.append(example)
    return out, statements


# ---------------------------------------------------------------------------------------------------------------------
# The curriculum's first steps

COPY_PROMPT = "Copy these lines exactly:\n```python\n{span}```\n"
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|==|!=|<=|>=|[-+*/%<>]")
_SWAPS = {
    "+": "-",
    "-": "+",
    "*": "/",
    "/": "*",
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "==": "!=",
    "!=": "==",
    "True": "False",
    "False": "True",
    "and": "or",
    "or": "and",
    "0": "1",
    "1": "2",
    "2": "1",
}


def _lines(file: SourceFile) -> list[str]:
    return file.text.splitlines(keepends=True)


def copy_example(file: SourceFile, rng: random.Random) -> Example | None:
    """Copy a span of 1-6 lines: the skill every SEARCH block needs."""
    lines = _lines(file)
    if len(lines) < 8:
        return None
    start = rng.randrange(len(lines) - 6)
    span = "".join(lines[start : start + rng.randint(1, 6)])
    if not span.strip():
        return None
    return Example(COPY_PROMPT.format(span=span), span, "copy")


def edit_example(file: SourceFile, rng: random.Random) -> Example | None:
    """Copy one line of a function and change one token of it, as an oracle-style SEARCH/REPLACE answer."""
    tree = ast.parse(file.text)
    functions = [
        n
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and 3 <= (n.end_lineno or n.lineno) - n.lineno <= 40
    ]
    if not functions:
        return None
    fn = functions[rng.randrange(len(functions))]
    lines = _lines(file)
    body = [
        i for i in range(fn.lineno, fn.end_lineno or fn.lineno) if lines[i].strip() and file.text.count(lines[i]) == 1
    ]
    if not body:
        return None
    i = body[rng.randrange(len(body))]
    tokens = [m for m in _TOKEN.finditer(lines[i]) if m.group(0) in _SWAPS or rng.random() < 0.15]
    if not tokens:
        return None
    tok = tokens[rng.randrange(len(tokens))]
    new = _SWAPS.get(tok.group(0)) or tok.group(0) + "_"
    edited = lines[i][: tok.start()] + new + lines[i][tok.end() :]
    patch = diff_file(file.path, file.text, file.text.replace(lines[i], edited, 1))
    statement = f"Change `{tok.group(0)}` to `{new}` in the line `{lines[i].strip()}`.\n"
    instance = {"repo": file.repo, "problem_statement": statement, "patch": patch}
    answer = answer_for_patch(patch, {file.path: file.text})
    if not answer:
        return None
    return Example(render_prompt(instance, {file.path: file.text}, context="oracle"), answer, "edit")
