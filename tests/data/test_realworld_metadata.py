"""The real-world validation set's metadata (evals/realworld/metadata.jsonl) is well-formed, and materialising splits a
fix into gold and test patch: no network, no mirrors (the last test builds its own tiny git repository).

    PYTHONPATH=$PWD .venv/bin/python -m pytest -q tests/data/test_realworld_metadata.py

What each check guards: the set keeps the size and the variety issue 9 asks for (>= 20 instances, >= 8 repositories,
every test style); every record can be materialised by pinned commit (full hashes, a test file split, a pytest
command the harness accepts) and graded (non-empty FAIL_TO_PASS, no test both failing and passing, every test id in
a file the test command runs); dependencies are named the way the harness's `env_spec` reads them.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import shlex
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("realworld_script", ROOT / "scripts" / "realworld.py")
realworld = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = realworld  # dataclasses look their module up there
_spec.loader.exec_module(realworld)

HEX40 = re.compile(r"^[0-9a-f]{40}$")
REQUIRED = {
    "instance_id": str,
    "repo": str,
    "clone_url": str,
    "base_commit": str,
    "fix_commit": str,
    "created_at": str,
    "style": str,
    "summary": str,
    "problem_statement": str,
    "test_files": list,
    "FAIL_TO_PASS": list,
    "PASS_TO_PASS": list,
}
OPTIONAL = {"test_cmd": str, "env_spec": dict}
PINNED = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!-]+$")


def _files_run(record: dict) -> set[str]:
    """The files the harness's pytest run collects: test_cmd's paths, else the test patch's .py test files."""
    if record.get("test_cmd"):  # paths: words that are neither options nor option values such as pythonpath=src
        return {w for w in shlex.split(record["test_cmd"])[3:] if not w.startswith("-") and "=" not in w}
    return {p for p in record["test_files"] if p.endswith(".py") and not p.endswith("conftest.py")}


def record_problems(rec: dict) -> list[str]:
    iid = rec.get("instance_id", "?")
    out = [f"{iid}: missing {k}" for k in REQUIRED if k not in rec]
    out += [f"{iid}: unknown field {k}" for k in rec if k not in REQUIRED and k not in OPTIONAL]
    out += [
        f"{iid}: {k} is not a {t.__name__}"
        for k, t in {**REQUIRED, **OPTIONAL}.items()
        if k in rec and not isinstance(rec[k], t)
    ]
    if out:
        return out
    owner_name = rec["repo"].split("/")
    if len(owner_name) != 2 or not all(owner_name):
        out.append(f"{iid}: repo {rec['repo']!r} is not owner/name")
    if rec["clone_url"] != f"https://github.com/{rec['repo']}.git":
        out.append(f"{iid}: clone_url {rec['clone_url']!r} is not the repo's GitHub URL")
    if not iid.startswith(rec["repo"].replace("/", "__") + "-"):
        out.append(f"{iid}: id does not start with {rec['repo'].replace('/', '__')}-")
    for key in ("base_commit", "fix_commit"):
        if not HEX40.match(rec[key]):
            out.append(f"{iid}: {key} {rec[key]!r} is not a full 40-hex commit")
    if rec["base_commit"] == rec["fix_commit"]:
        out.append(f"{iid}: base_commit == fix_commit")
    try:
        datetime.fromisoformat(rec["created_at"])
    except ValueError:
        out.append(f"{iid}: created_at {rec['created_at']!r} is not ISO 8601")
    if rec["style"] not in realworld.STYLES:
        out.append(f"{iid}: style {rec['style']!r} not in {realworld.STYLES}")
    if not rec["summary"].strip() or "\n" in rec["summary"]:
        out.append(f"{iid}: summary must be one non-empty line")
    if len(rec["problem_statement"].strip()) < 40:
        out.append(f"{iid}: problem_statement is too short to state a problem")
    if not rec["test_files"]:
        out.append(f"{iid}: no test_files (the test patch would be empty)")
    f2p, p2p = rec["FAIL_TO_PASS"], rec["PASS_TO_PASS"]
    if not f2p:
        out.append(f"{iid}: FAIL_TO_PASS is empty")
    if not all(isinstance(t, str) and t for t in f2p + p2p):
        out.append(f"{iid}: a test id is not a non-empty string")
    elif len(set(f2p)) != len(f2p) or len(set(p2p)) != len(p2p) or set(f2p) & set(p2p):
        out.append(f"{iid}: duplicate test ids, or a test in both FAIL_TO_PASS and PASS_TO_PASS")
    else:
        run = _files_run(rec)
        stray = [t for t in f2p + p2p if t.split("::", 1)[0] not in run]
        if stray:
            out.append(f"{iid}: tests outside the files the test command runs, e.g. {stray[0]}")
    if rec.get("test_cmd") is not None:
        words = shlex.split(rec["test_cmd"])
        if words[:3] != ["python", "-m", "pytest"] or "-rA" not in words:
            out.append(f"{iid}: test_cmd {rec['test_cmd']!r} is not `python -m pytest -rA ...`")
        missing = [
            p for p in rec["test_files"] if p.endswith(".py") and not p.endswith("conftest.py") and p not in words
        ]
        if missing:
            out.append(f"{iid}: test_cmd does not run the test patch's files {missing}")
    spec = rec.get("env_spec")
    if spec is not None:
        if set(spec) - {"pip_packages", "install"} or not isinstance(spec.get("pip_packages", []), list):
            out.append(f"{iid}: env_spec has keys other than pip_packages (list) and install")
        elif not all(isinstance(p, str) and PINNED.match(p) for p in spec.get("pip_packages", [])):
            out.append(f"{iid}: env_spec.pip_packages must be pinned requirements (name==version)")
    if rec["style"] == "dependencies" and not (spec or {}).get("pip_packages"):
        out.append(f"{iid}: style dependencies without env_spec.pip_packages")
    return out


def set_problems(records: list[dict]) -> list[str]:
    out = [p for rec in records for p in record_problems(rec)]
    ids = [r.get("instance_id") for r in records]
    if len(set(ids)) != len(ids):
        out.append("instance ids are not unique")
    if len(records) < 20:
        out.append(f"only {len(records)} instances (>= 20 required)")
    repos = {r.get("repo") for r in records}
    if len(repos) < 8:
        out.append(f"only {len(repos)} repositories (>= 8 required)")
    missing = set(realworld.STYLES) - {r.get("style") for r in records}
    if missing:
        out.append(f"no instance of style(s) {sorted(missing)}")
    fixes = [r.get("fix_commit") for r in records]
    if len(set(fixes)) != len(fixes):
        out.append("a fix commit is used twice")
    return out


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return realworld.load_metadata()


def test_metadata_is_well_formed(records):
    assert set_problems(records) == []


def test_every_repository_has_one_clone_url_and_a_readme_row(records):
    readme = (ROOT / "evals" / "realworld" / "README.md").read_text(encoding="utf-8")
    for repo in {r["repo"] for r in records}:
        assert f"`{repo}`" in readme, f"{repo} has no row in evals/realworld/README.md"
        assert len({r["clone_url"] for r in records if r["repo"] == repo}) == 1


@pytest.mark.parametrize(
    "breakage, expected",
    [
        (lambda rs: rs[0].update(base_commit=rs[0]["base_commit"][:12]), "full 40-hex"),
        (lambda rs: rs[1].update(FAIL_TO_PASS=[]), "FAIL_TO_PASS is empty"),
        (lambda rs: rs.append(copy.deepcopy(rs[2])), "not unique"),
        (lambda rs: [r.update(style="pytest") for r in rs if r["style"] == "doctest"], "no instance of style"),
        (
            lambda rs: [
                r.update(repo="a/b", clone_url="https://github.com/a/b.git", instance_id="a__b-" + r["instance_id"])
                for r in rs[:-7]
            ],
            "repositories",
        ),
        (lambda rs: rs[3].update(PASS_TO_PASS=rs[3]["PASS_TO_PASS"] + rs[3]["FAIL_TO_PASS"][:1]), "in both"),
        (lambda rs: rs[4].update(env_spec={"pip_packages": ["tokenize-rt"]}), "pinned"),
        (lambda rs: rs[5].update(FAIL_TO_PASS=["elsewhere/test_x.py::test_y"]), "outside the files"),
    ],
    ids=lambda v: v.replace(" ", "-") if isinstance(v, str) else "",
)
def test_the_checks_catch_a_broken_set(records, breakage, expected):
    broken = copy.deepcopy(records)
    breakage(broken)
    assert any(expected in p for p in set_problems(broken)), set_problems(broken)


def _git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(cwd),
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def mirror(tmp_path: Path) -> tuple[Path, str, str]:
    """A local mirror `<owner>+<name>/repo` holding a base commit and a fix touching source and tests."""
    work = tmp_path / "mirrors" / "acme+calc" / "repo"
    (work / "calc").mkdir(parents=True)
    (work / "tests").mkdir()
    _git(work, "init", "-q")
    (work / "calc" / "ops.py").write_text("def add(a, b):\n    return a - b\n")
    (work / "tests" / "test_ops.py").write_text("from calc.ops import add\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "base")
    base = _git(work, "rev-parse", "HEAD")
    (work / "calc" / "ops.py").write_text("def add(a, b):\n    return a + b\n")
    test = "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    (work / "tests" / "test_ops.py").write_text(test)
    _git(work, "commit", "-qam", "fix add")
    return tmp_path / "mirrors", base, _git(work, "rev-parse", "HEAD")


def test_materialising_splits_the_fix_into_gold_and_test_patch(mirror, tmp_path):
    mirrors, base, fix = mirror
    meta = {
        "instance_id": "acme__calc-1",
        "repo": "acme/calc",
        "base_commit": base,
        "fix_commit": fix,
        "created_at": "2026-01-01T00:00:00+00:00",
        "style": "pytest",
        "problem_statement": "add subtracts",
        "test_files": ["tests/test_ops.py"],
        "FAIL_TO_PASS": ["tests/test_ops.py::test_add"],
        "PASS_TO_PASS": [],
    }
    dest = tmp_path / "repos" / "acme__calc"
    realworld.clone("acme/calc", "https://github.com/acme/calc.git", [base, fix], dest, mirrors)
    inst = realworld.build_instance(meta, dest)
    assert "calc/ops.py" in inst["patch"] and "tests/test_ops.py" not in inst["patch"]
    assert "tests/test_ops.py" in inst["test_patch"] and "calc/ops.py" not in inst["test_patch"]
    assert json.loads(inst["FAIL_TO_PASS"]) == ["tests/test_ops.py::test_add"]
    assert inst["environment_setup_commit"] == base and "env_spec" not in inst
    with pytest.raises(realworld.RealWorldError, match="not the parent"):
        realworld.build_instance({**meta, "base_commit": fix, "fix_commit": fix}, dest)
    with pytest.raises(realworld.RealWorldError, match="no git repository"):
        realworld.clone("acme/other", "https://github.com/acme/other.git", [base], tmp_path / "x", mirrors)
