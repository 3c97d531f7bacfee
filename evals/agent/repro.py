"""The issue's own reproduction: what its statement says to run and what it says it expected.

    repro = reproduction(instance.problem_statement)   # None when the statement states nothing checkable
    argv = repro_argv(python, repro, test_files)       # the runner, to run in the sandbox over a candidate's tree
    reproduced(output)                                 # True: every stated expectation holds; False; None: unknown

A coding agent reproduces the issue before it fixes it and runs the reproduction again after (SWE-agent's
`reproduce.py`; Agentless generates a reproduction test from the issue and keeps the candidate patches that pass it).
The scaffold does the same for the policy, from the statement alone: its first ```python block is the setup, and
each claim of the form "`EXPR` returns `A`, but I expected `X`" (or "raises …; I expected `X`", "should raise `E`",
"gives `A`, but I expected at most `X`", "should be true here") is an expectation checked after it. The setup runs
in a namespace seeded with the visible test modules' own definitions when it uses a name it does not define (an
issue's example may call the helper that builds its data, `roads()`), never the hidden tests. An expectation the
statement gives only in part (a value cut short with "...") is not checked; a statement with no code block or no
checkable claim gives None, and the scaffold goes on without it (a human's free-form issue usually states nothing
this reads).
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from dataclasses import dataclass

_CODE = re.compile(r"```python\n(.*?)```", re.S)
_V = r"`([^`]*)`"
_OPS = {
    "anything but": "!=",
    "a value below": "<",
    "at most": "<=",
    "a value above": ">",
    "at least": ">=",
    "one of": "in",
    "nothing in": "not in",
}
# (pattern, kind): the sentence shapes an issue states an expectation in; groups name expr, expected, op
_CLAIMS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"{_V} returns `[^`]*`, but I expected {_V}\."), "equals"),
    (re.compile(rf"I get `[^`]*` from {_V}; the expected result is {_V}\."), "equals"),
    (re.compile(rf"Expected {_V} to give {_V}, got `[^`]*` instead\."), "equals"),
    (re.compile(rf"{_V} does not give {_V}\."), "equals"),
    (re.compile(rf"{_V} gives `[^`]*`, but I expected ({'|'.join(_OPS)}) {_V}\."), "compare"),
    (re.compile(rf"{_V} (?:raises|fails with) `[^`]*`\. I expected {_V}\."), "equals"),
    (re.compile(rf"{_V} (?:raises|fails with) {_V}\. I expected it to work\."), "works"),
    (re.compile(rf"{_V} should raise {_V}, but it returns without an error\."), "raises"),
    (re.compile(rf"{_V} should be true here, but it is not"), "true"),
    (re.compile(rf"{_V} should be false here, but it is not"), "false"),
]


@dataclass(frozen=True)
class Claim:
    expr: str
    kind: str  # equals | compare | works | raises | true | false
    expected: str = ""
    op: str = ""


@dataclass(frozen=True)
class Reproduction:
    setup: str
    claims: tuple[Claim, ...]


def _whole(text: str) -> bool:
    return not text.endswith("...")


def reproduction(statement: str) -> Reproduction | None:
    """The statement's setup code and the expectations it states, or None when it states none this can check."""
    code = _CODE.search(statement)
    if code is None:
        return None
    claims: list[Claim] = []
    for pattern, kind in _CLAIMS:
        for m in pattern.finditer(statement):
            groups = m.groups()
            if kind == "compare":
                claim = Claim(groups[0], kind, groups[2], _OPS[groups[1]])
            elif kind in ("equals", "raises"):
                claim = Claim(groups[0], kind, groups[1])
            elif kind == "works":  # it should not fail as reported: the exception's class is the expectation
                claim = Claim(groups[0], kind, groups[1].split(":")[0].strip())
            else:
                claim = Claim(groups[0], kind)
            if _whole(claim.expr) and _whole(claim.expected) and claim not in claims:
                claims.append(claim)
    return Reproduction(_setup(code.group(1), claims), tuple(claims)) if claims else None


def _normal(expr: str) -> str | None:
    try:
        return ast.unparse(ast.parse(expr, mode="eval"))
    except SyntaxError:
        return None


def _setup(code: str, claims: list[Claim]) -> str:
    """The code block without its last lines that only show a claimed expression (`EXPR` or `print(EXPR)`): the
    claim evaluates it, and evaluating it twice would run a stateful call twice or raise before the check."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return code
    claimed = {_normal(c.expr) for c in claims} - {None}
    lines = code.splitlines()
    while body and isinstance(body[-1], ast.Expr):
        value = body[-1].value
        if isinstance(value, ast.Call) and ast.unparse(value.func) == "print" and len(value.args) == 1:
            value = value.args[0]
        if ast.unparse(value) not in claimed:
            break
        lines = lines[: body[-1].lineno - 1]
        body = body[:-1]
    return "\n".join(lines) + "\n"


# Run inside the sandbox by the task's own interpreter, from the tree's root. Prints one JSON line last.
_RUNNER = r"""
import json, os, sys
sys.path.insert(0, os.getcwd())
spec = json.loads(sys.argv[1])
ns = {"__name__": "postgame_repro"}
for path in spec["tests"]:
    try:
        src = open(path, encoding="utf-8").read()
        mod = {"__name__": "postgame_repro_" + str(abs(hash(path))), "__file__": os.path.abspath(path)}
        exec(compile(src, path, "exec"), mod)
        ns.update({k: v for k, v in mod.items() if not k.startswith("__")})
    except BaseException:
        pass
def verdict(ok, why=""):
    print("\n" + json.dumps({"reproduced": ok, "why": why}))
    sys.exit(0)
try:
    exec(compile(spec["setup"], "<issue>", "exec"), ns)
except BaseException as exc:
    verdict(False, "setup: " + type(exc).__name__)
checked = 0
for c in spec["claims"]:
    try:
        got = eval(compile(c["expr"], "<claim>", "eval"), ns)
    except BaseException as exc:
        tb = exc.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        if isinstance(exc, NameError) and tb.tb_frame.f_code.co_filename == "<claim>":
            continue  # a name the issue itself never defines (a test's parameter): this claim cannot be checked
        if c["kind"] in ("raises", "works") and (type(exc).__name__ == c["expected"].split(".")[-1]) == (c["kind"] == "raises"):
            checked += 1
            continue
        verdict(False, c["expr"] + " raised " + type(exc).__name__)
    checked += 1
    try:
        if c["kind"] == "raises":
            ok = False
        elif c["kind"] == "works":
            ok = True
        elif c["kind"] == "true":
            ok = bool(got)
        elif c["kind"] == "false":
            ok = not got
        else:
            want = eval(c["expected"], ns)
            ok = {"": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
                  "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
                  "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}[c["op"]](got, want)
            ok = bool(ok)
    except BaseException as exc:
        verdict(None, "expected value: " + type(exc).__name__)
    if not ok:
        verdict(False, c["expr"])
verdict(True if checked else None, "" if checked else "no claim could be checked")
"""


def needs_tests(repro: Reproduction) -> bool:
    """Does the example use a name it neither imports nor assigns (a helper of the test modules, `roads()`)? Only
    then are the visible test modules run into its namespace: importing them (pytest with them) is most of a run's
    cost. True when the code cannot be read."""
    try:
        setup = ast.parse(repro.setup)
        values = [c.expr for c in repro.claims] + [c.expected for c in repro.claims if c.kind in ("equals", "compare")]
        used = [ast.parse(v, mode="eval") for v in values]
    except SyntaxError:
        return True
    bound = set(dir(builtins))
    for node in ast.walk(setup):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    loaded = {n.id for tree in [setup, *used] for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return bool(loaded - bound)


def repro_argv(python: str, repro: Reproduction, test_files: list[str]) -> list[str]:
    """The command that checks `repro` over a tree (run from its root): the runner and its spec as arguments; the
    visible test modules only when the example needs one of their names (`needs_tests`)."""
    spec = {
        "setup": repro.setup,
        "tests": sorted(test_files) if needs_tests(repro) else [],
        "claims": [{"expr": c.expr, "kind": c.kind, "expected": c.expected, "op": c.op} for c in repro.claims],
    }
    return [python, "-B", "-c", _RUNNER, json.dumps(spec)]


def reproduced(output: str) -> bool | None:
    """The runner's verdict from its output: True when every expectation held, False when one did not, None when
    it could not tell (no verdict line: a crash, a timeout, output cut short)."""
    for line in reversed(output.splitlines()):
        line = line.strip()
        if line.startswith("{") and '"reproduced"' in line:
            try:
                value = json.loads(line)["reproduced"]
            except (ValueError, KeyError):
                return None
            return value if isinstance(value, bool) else None
    return None
