"""Per-repository environments: a repository whose tests import a package the harness's environment lacks is graded
right once its `env_spec` names that package; the environment is built once (sandboxed, offline: a wheel made here),
reused by the next instance, fetched from the store by a cache that lacks it, and a failed build is an
infrastructure error that names the instance and the failing command."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import zipfile
from pathlib import Path

import pytest

from evals.harness import Instance, evaluate
from evals.harness.instance import EnvSpec
from evals.harness.repoenv import EnvCache, env_key
from evals.harness.testrun import run_tests
from postgame.store import LocalStore
from tests.harness_fixtures import commit, diff_against, init_repo, quick_settings

DEP = "pgtest_tinymath"  # the package only the repository's environment has
BASE = {
    "clampy/__init__.py": "",
    "clampy/core.py": f"from {DEP} import clamp\n\n\ndef clamp_all(xs, lo, hi):\n"
    "    return [clamp(x, lo, hi) for x in xs][:-1]\n",
    "tests/__init__.py": "",
    "tests/test_core.py": "from clampy.core import clamp_all\n\n\ndef test_inside():\n"
    "    assert clamp_all([1, 2, 9], 0, 5)[:2] == [1, 2]\n",
}
GOLD = {"clampy/core.py": BASE["clampy/core.py"].replace("for x in xs][:-1]", "for x in xs]")}
TESTS = {
    "tests/test_core.py": BASE["tests/test_core.py"] + "\n\ndef test_every_item():\n"
    "    assert clamp_all([1, 9, -3], 0, 5) == [1, 5, 0]\n"
}
F2P, P2P = ["tests/test_core.py::test_every_item"], ["tests/test_core.py::test_inside"]


def make_wheel(folder: Path) -> Path:
    """A pure-Python wheel, zipped by hand: no build backend, no index, no network."""
    files = {
        f"{DEP}/__init__.py": "def clamp(x, lo, hi):\n    return max(lo, min(hi, x))\n",
        f"{DEP}-1.0.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {DEP}\nVersion: 1.0\n",
        f"{DEP}-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: postgame-test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files[f"{DEP}-1.0.dist-info/RECORD"] = "\n".join(record + [f"{DEP}-1.0.dist-info/RECORD,,"]) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{DEP}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return wheel


def instances(root: Path, spec: dict | None) -> list[Instance]:
    repo = root / "repos" / "acme__clampy"
    base_commit = init_repo(repo, BASE)
    commit(repo, {**GOLD, **TESTS}, "the future: keep the last item")
    common = {
        "repo": "acme/clampy",
        "base_commit": base_commit,
        "patch": diff_against(BASE, GOLD),
        "test_patch": diff_against(BASE, TESTS),
        "FAIL_TO_PASS": F2P,
        "PASS_TO_PASS": P2P,
        "env_spec": spec,
    }
    return [Instance(instance_id=f"acme__clampy-{n}", **common) for n in (1, 2)]


needs_bwrap = pytest.mark.sandbox("bwrap")  # per-repository environments run only in bubblewrap


@needs_bwrap
def test_env_built_once_cached_reused_and_graded_right(tmp_path):
    assert importlib.util.find_spec(DEP) is None  # really not in the harness's environment
    spec = {"pip_packages": [str(make_wheel(tmp_path / "wheels"))]}
    first, second = instances(tmp_path, spec)
    repos, settings = tmp_path / "repos", quick_settings(timeout_s=120)
    envs = EnvCache(tmp_path / "envs", LocalStore(tmp_path / "store"))

    gold = evaluate(first, first.patch, repos_dir=repos, settings=settings, envs=envs)
    assert gold.status == "resolved", gold.log
    assert len(envs.built) == 1 and envs.fetched == []
    again = evaluate(second, second.patch, repos_dir=repos, settings=settings, envs=envs)
    assert again.status == "resolved", again.log
    assert len(envs.built) == 1  # reused, not rebuilt
    assert "environment" in again.log and "cached" in again.log

    base_only = run_tests(second, "", repos_dir=repos, settings=settings, envs=envs)  # the test patch alone
    assert base_only.statuses == {F2P[0]: "FAILED", P2P[0]: "PASSED"}, base_only.log
    assert evaluate(second, "", repos_dir=repos, settings=settings, envs=envs).status == "unresolved"

    stored = [o.key for o in LocalStore(tmp_path / "store").list("eval/envs/")]
    assert len([k for k in stored if k.endswith(".tar.gz")]) == 1 and len(stored) == 2
    elsewhere = EnvCache(tmp_path / "envs-2", LocalStore(tmp_path / "store"))  # another machine: same store
    fetched = evaluate(first, first.patch, repos_dir=repos, settings=settings, envs=elsewhere)
    assert fetched.status == "resolved", fetched.log
    assert elsewhere.built == [] and elsewhere.fetched == envs.built


def test_without_env_spec_the_dependency_is_missing(tmp_path):  # today's behaviour, and why the spec is needed
    first, _ = instances(tmp_path, None)
    result = evaluate(first, first.patch, repos_dir=tmp_path / "repos", settings=quick_settings())
    assert result.status == "unresolved" and result.error is None
    assert DEP in result.log


@needs_bwrap
def test_a_failed_build_is_an_infrastructure_error(tmp_path):
    first, _ = instances(tmp_path, {"install": "echo installing; exit 7"})
    envs = EnvCache(tmp_path / "envs")
    result = evaluate(
        first, first.patch, repos_dir=tmp_path / "repos", settings=quick_settings(timeout_s=120), envs=envs
    )
    assert result.status == "error" and result.reward is None, result.log
    assert "acme__clampy-1" in result.error and "`/bin/sh -c 'echo installing; exit 7'` exited 7" in result.error
    assert "installing" in result.error  # the log tail
    assert envs.built == [] and not list((tmp_path / "envs").glob("[0-9a-f]*[!k]"))  # nothing half-built is kept


def test_key_depends_on_the_checkout_only_with_an_install_command(tmp_path):
    wheel = make_wheel(tmp_path)
    plain = EnvSpec(pip_packages=[str(wheel)])
    assert env_key(plain, "a/b@1") == env_key(plain, "c/d@2")
    installs = EnvSpec(pip_packages=[str(wheel)], install="pip install -e .")
    assert env_key(installs, "a/b@1") != env_key(installs, "a/b@2")
    before = env_key(plain, "")
    wheel.write_bytes(wheel.read_bytes() + b"\0")  # a local package's content is part of the key
    assert env_key(plain, "") != before


def test_python_must_match(tmp_path):
    first, _ = instances(tmp_path, {"python": "2.7"})
    result = evaluate(first, first.patch, repos_dir=tmp_path / "repos", settings=quick_settings())
    assert result.status == "error" and "env_spec.python '2.7'" in result.error
