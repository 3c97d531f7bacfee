"""Which model changes are reverted before grading: tests, conftest, pytest configuration and plugins."""

import shutil

import pytest

from evals.harness.protect import declared_plugins, is_test_path, protect_grader
from tests.harness_fixtures import write_files


@pytest.mark.parametrize(
    "path,expected",
    [
        ("tests/test_a.py", True),
        ("test_a.py", True),
        ("pkg/a_test.py", True),
        ("tests/data/x.json", True),
        ("pkg/tests/helpers.py", True),
        ("test/util.py", True),
        ("conftest.py", True),
        ("pkg/sub/conftest.py", True),
        ("pkg/a.py", False),
        ("pkg/testing/utils.py", False),
        ("pkg/contest.py", False),
        ("testsuite.py", False),
    ],
)
def test_is_test_path(path, expected):
    assert is_test_path(path) is expected


BASE = {
    "pkg/__init__.py": "",
    "pkg/plug.py": "def pytest_configure(config):\n    pass\n",
    "tests/conftest.py": "pytest_plugins = ['pkg.plug']\n",
    "tests/test_a.py": "def test_a():\n    pass\n",
    "pyproject.toml": "[project]\nname = 'x'\n\n[tool.pytest.ini_options]\naddopts = '-q'\n",
    "setup.cfg": "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n",
}


@pytest.fixture
def trees(tmp_path):
    base = tmp_path / "base"
    base.mkdir()
    write_files(base, BASE)
    copy = tmp_path / "copy"
    shutil.copytree(base, copy)
    return base, copy


def test_declared_plugins_found(trees):
    base, _ = trees
    assert "pkg/plug.py" in declared_plugins(base)


@pytest.mark.parametrize(
    "changes,reverted",
    [
        ({"tests/test_a.py": "def test_a():\n    assert True\n"}, ["tests/test_a.py"]),
        ({"tests/test_new.py": "x = 1\n"}, ["tests/test_new.py"]),
        ({"conftest.py": "x = 1\n"}, ["conftest.py"]),
        ({"pkg/conftest.py": "x = 1\n"}, ["pkg/conftest.py"]),
        ({"pytest.ini": "[pytest]\naddopts = -p evil\n"}, ["pytest.ini"]),
        ({"pyproject.toml": BASE["pyproject.toml"].replace("-q", "-p evil")}, ["pyproject.toml"]),
        ({"pyproject.toml": BASE["pyproject.toml"].replace("name = 'x'", "name = 'y'")}, []),
        ({"setup.cfg": BASE["setup.cfg"].replace("addopts = -q", "addopts = -p evil")}, ["setup.cfg"]),
        ({"setup.cfg": BASE["setup.cfg"].replace("name = x", "name = y")}, []),
        ({"tox.ini": "[pytest]\naddopts = -p evil\n"}, ["tox.ini"]),
        ({"tox.ini": "[tox]\nenvlist = py311\n"}, []),
        ({"pkg/plug.py": "def pytest_runtest_makereport(item, call):\n    pass\n"}, ["pkg/plug.py"]),
        ({"sitecustomize.py": "import os\n"}, ["sitecustomize.py"]),
        ({"evil.pth": "import os\n"}, ["evil.pth"]),
        ({"evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = evil\n"}, ["evil-1.0.dist-info/entry_points.txt"]),
        ({"pkg/__init__.py": "VALUE = 1\n"}, []),
    ],
)
def test_protect_grader(trees, changes, reverted):
    base, copy = trees
    write_files(copy, changes)
    result = protect_grader(copy, base, list(changes))
    assert [r.path for r in result] == reverted
    for rel in reverted:
        assert (copy / rel).exists() == (base / rel).exists()
        if (base / rel).exists():
            assert (copy / rel).read_bytes() == (base / rel).read_bytes()


def test_test_patch_files_are_reset_and_model_changes_to_them_recorded(trees):
    base, copy = trees
    write_files(copy, {"tests/test_a.py": "changed\n", "tests/test_b.py": "new\n"})
    result = protect_grader(copy, base, ["tests/test_a.py"], ["tests/test_a.py", "tests/test_b.py"])
    assert [(r.path, r.reason) for r in result] == [("tests/test_a.py", "file of the test patch")]
    assert (copy / "tests/test_a.py").read_text() == BASE["tests/test_a.py"]
    assert not (copy / "tests/test_b.py").exists()
