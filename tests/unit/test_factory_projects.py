"""`postgame factory add` on small real git repositories built here: the environment comes from the repository's own
declarations (a local wheel, installed offline in the sandbox), the suite runs at base through the harness, tests
failing at base are recorded and excluded, and a repository it cannot handle leaves one clear line and nothing in the
store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.factory.projects import add_project, list_projects, registered_seeds, remove_project
from evals.factory.repometa import RepoUnsupported
from postgame.settings.factory import FactorySettings
from postgame.store import LocalStore
from tests.harness_fixtures import commit, init_repo, quick_settings
from tests.unit.test_harness_repoenv import DEP, make_wheel

CORE = f"from {DEP} import clamp\n\n\ndef clamp_all(xs, lo, hi):\n    return [clamp(x, lo, hi) for x in xs]\n"
SUITE = (
    "from clampy.core import clamp_all\n\n\n"
    "def test_inside():\n    assert clamp_all([1, 2], 0, 5) == [1, 2]\n\n\n"
    "def test_clamps():\n    assert clamp_all([9, -3], 0, 5) == [5, 0]\n\n\n"
    "def test_broken_at_base():\n    assert clamp_all([], 0, 5) == [None]\n"
)
ONE_PLUS_ONE = "\n\ndef test_one_plus_one():\n    assert add(1, 1) == 2\n"


def pyproject(*test_deps: str) -> str:
    deps = ", ".join(f'"{d}"' for d in test_deps)
    return f'[project]\nname = "clampy"\nversion = "1"\n[project.optional-dependencies]\ntest = ["pytest", {deps}]\n'


def src_repo(root: Path, **over: str) -> Path:
    files = {
        "pyproject.toml": pyproject(DEP),
        "src/clampy/__init__.py": "",
        "src/clampy/core.py": CORE,
        "tests/test_core.py": SUITE,
        **over,
    }
    init_repo(root, {k: v for k, v in files.items() if v is not None})
    return root


@pytest.fixture
def world(tmp_path):
    wheels = make_wheel(tmp_path / "wheels").parent
    settings = FactorySettings(own={"pip_download_args": ["--no-index", f"--find-links={wheels}"], "timeout_s": 60})
    store = LocalStore(tmp_path / "store")

    def add(source: Path, **kw):
        return add_project(str(source), settings, quick_settings(), store, cache_dir=tmp_path / "cache", **kw)

    return settings, store, add


def stored(store: LocalStore) -> list[str]:
    return sorted(o.key for o in store.list("tasks/projects/"))


needs_bwrap = pytest.mark.sandbox("bwrap")  # an environment of its own runs only in bubblewrap


@needs_bwrap
def test_src_layout_with_a_test_dependency_registers_and_excludes_what_fails_at_base(tmp_path, world):
    settings, store, add = world
    project = add(src_repo(tmp_path / "clampy"))
    assert (project.name, project.layout, project.packages) == ("clampy", "src", ["src/clampy"])
    assert project.pinned == [f"{DEP.replace('_', '-')}==1.0"]  # from the test extra; pytest itself left out
    assert "-o pythonpath=src" in project.test_cmd
    assert project.passing == 2 and project.failing_at_base == ["tests/test_core.py::test_broken_at_base"]
    assert "1 excluded (1 failing, 0 flaky at base)" in project.summary()
    assert [p.name for p in list_projects(settings, store)] == ["clampy"]

    (seed,) = registered_seeds(settings, store, tmp_path / "cache")
    assert seed.modules() == ["src/clampy/__init__.py", "src/clampy/core.py"] and seed.env_spec == project.env_spec
    assert list(seed.tests) == ["tests/test_core.py"] and "tests/test_core.py" not in seed.source

    with pytest.raises(RepoUnsupported, match="already registered"):
        add(tmp_path / "clampy")
    assert remove_project(settings, store, "clampy") == 3  # record, snapshot, bundle: nothing is left
    assert stored(store) == [] and list_projects(settings, store) == []


@needs_bwrap
def test_a_dependency_that_does_not_install_is_named_and_nothing_is_registered(tmp_path, world):
    _, store, add = world
    with pytest.raises(RepoUnsupported, match=r"^a dependency does not install: pgtest-not-on-any-index"):
        add(src_repo(tmp_path / "clampy", **{"pyproject.toml": pyproject(DEP, "pgtest-not-on-any-index")}))
    assert stored(store) == []


@needs_bwrap
def test_a_suite_that_fails_at_base_is_refused(tmp_path, world):
    _, store, add = world
    broken = "def test_a():\n    assert False\n\n\ndef test_b():\n    raise RuntimeError\n"
    with pytest.raises(RepoUnsupported, match=r"^no test passes at base \(2 failing or flaky\)"):
        add(src_repo(tmp_path / "clampy", **{"tests/test_core.py": broken}))
    assert stored(store) == []


@needs_bwrap
def test_tests_that_flake_at_base_are_recorded_apart_and_excluded(tmp_path, world):
    """Ten coin-flip tests over three baseline runs: each changes its result between runs with probability 3/4, so
    some (all but ~1e-6 of the time) are named flaky; the others read as failing or passing, which is what they did."""
    settings, store, _ = world
    coins = [f"tests/test_core.py::test_coin_{i}" for i in range(10)]
    flips = "".join(f"\n\ndef test_coin_{i}():\n    assert os.urandom(1)[0] < 128\n" for i in range(10))
    repo = src_repo(tmp_path / "clampy", **{"tests/test_core.py": "import os\n" + SUITE + flips})
    three_runs = settings.model_copy(update={"validation_runs": 3})
    project = add_project(str(repo), three_runs, quick_settings(), store, cache_dir=tmp_path / "cache")
    assert project.flaky_at_base and set(project.flaky_at_base) <= set(coins)
    assert "tests/test_core.py::test_broken_at_base" in project.failing_at_base
    assert not set(project.flaky_at_base) & set(project.failing_at_base)
    excluded = len(project.flaky_at_base) + len(project.failing_at_base)
    assert project.passing == 2 + 10 + 1 - excluded  # every test is passing, failing or flaky: none is lost
    assert f"{len(project.flaky_at_base)} flaky at base" in project.summary()


def test_a_repository_with_no_tests_is_refused(tmp_path, world):
    _, store, add = world
    with pytest.raises(RepoUnsupported, match=r"^no tests found"):
        add(src_repo(tmp_path / "clampy", **{"tests/test_core.py": None}))
    assert stored(store) == []


def test_flat_layout_tests_inside_the_package_no_dependencies(tmp_path, world):
    settings, store, add = world
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='calc')\n",
        "calc/__init__.py": "",
        "calc/ops.py": "def add(a, b):\n    return a + b\n",
        "calc/tests/__init__.py": "",
        "calc/tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    }
    init_repo(tmp_path / "calc", files)
    project = add(tmp_path / "calc", name="mycalc")
    assert (project.layout, project.tests, project.tests_inside_package) == ("flat", ["calc/tests/"], True)
    assert project.env_spec is None and project.passing == 1  # nothing to install: the harness's interpreter
    (seed,) = registered_seeds(settings, store, tmp_path / "cache")
    assert seed.modules() == ["calc/__init__.py", "calc/ops.py"]  # never the tests inside it


def test_the_commands_as_a_person_uses_them(monkeypatch, capsys, cli_home, tmp_path):
    from tests.support import postgame_inprocess

    files = {
        "calc/__init__.py": "",
        "calc/ops.py": "def add(a, b):\n    return a - b\n",
        "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
    }
    repo = tmp_path / "calc"
    init_repo(repo, files)
    fixed = {"calc/ops.py": files["calc/ops.py"].replace("a - b", "a + b")}
    commit(repo, {**fixed, "tests/test_ops.py": files["tests/test_ops.py"] + ONE_PLUS_ONE}, "fix add")
    code, out, err = postgame_inprocess(monkeypatch, capsys, "factory", "add", str(repo), "--json")
    assert code == 0, err
    assert json.loads(out)["name"] == "calc" and json.loads(out)["passing"] == 2

    code, out, err = postgame_inprocess(monkeypatch, capsys, "factory", "mine", "calc", "--json")
    assert code == 0, err
    mined = json.loads(out)
    assert {"project", "commits_examined", "kept", "instance_ids", "dropped"} <= set(mined)
    assert (mined["commits_examined"], mined["kept"]) == (2, 1), mined

    init_repo(tmp_path / "bare", {"calc/__init__.py": ""})
    code, _, err = postgame_inprocess(monkeypatch, capsys, "factory", "add", str(tmp_path / "bare"))
    assert code != 0 and "no tests found" in err and "nothing was registered" in err
    code, out, _ = postgame_inprocess(monkeypatch, capsys, "factory", "projects", "--json")
    assert [p["name"] for p in json.loads(out)] == ["calc"]
    code, out, _ = postgame_inprocess(monkeypatch, capsys, "factory", "remove", "calc")
    assert code == 0 and "removed project calc" in out
    code, _, err = postgame_inprocess(monkeypatch, capsys, "factory", "remove", "calc")
    assert code != 0 and "no project 'calc' registered" in err
