"""What `postgame factory add` reads from a repository's own files: its layout (flat, src/, tests inside the package),
its requirements from every kind of declaration, and the one line that says why a repository cannot be a project."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.factory.repometa import RepoUnsupported, declared_requirements, read_repo
from tests.harness_fixtures import write_files

PKG = {"acme/__init__.py": "", "acme/core.py": "def f():\n    return 1\n"}
TESTS = {"tests/test_core.py": "from acme.core import f\n\n\ndef test_f():\n    assert f() == 1\n"}


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    write_files(tmp_path, files)
    return tmp_path


def test_flat_layout(tmp_path):
    meta = read_repo(repo(tmp_path, {**PKG, **TESTS, "docs/conf.py": ""}))
    assert (meta.layout, meta.packages, meta.tests, meta.pythonpath) == ("flat", ["acme"], ["tests/"], None)
    assert not meta.tests_inside_package


def test_src_layout(tmp_path):
    files = {f"src/{k}": v for k, v in PKG.items()}
    meta = read_repo(repo(tmp_path, {**files, **TESTS, "conftest.py": ""}))
    assert (meta.layout, meta.packages, meta.pythonpath) == ("src", ["src/acme"], "src")
    assert meta.tests == ["tests/", "conftest.py"]  # the root conftest is the suite's, protected like it


def test_tests_inside_the_package(tmp_path):
    meta = read_repo(
        repo(tmp_path, {**PKG, "acme/test/__init__.py": "", "acme/test/test_core.py": "def test_x(): pass\n"})
    )
    assert (meta.packages, meta.tests, meta.tests_inside_package) == (["acme"], ["acme/test/"], True)


def test_no_tests_is_one_clear_line(tmp_path):
    with pytest.raises(RepoUnsupported, match=r"^no tests found \(looked for tests/"):
        read_repo(repo(tmp_path, PKG))


def test_no_package_is_one_clear_line(tmp_path):
    with pytest.raises(RepoUnsupported, match="no Python package or module found"):
        read_repo(repo(tmp_path, {**TESTS, "README.md": "hi"}))


@pytest.mark.parametrize(
    "files, why",
    [
        ({"acme/_speedups.c": "int x;"}, r"compiled extension \(acme/_speedups.c\)"),
        ({"setup.py": "from setuptools import setup\nsetup(ext_modules=[])\n"}, "ext_modules"),
        ({"pyproject.toml": '[build-system]\nrequires = ["maturin>=1"]\n'}, "maturin"),
    ],
)
def test_a_compiled_extension_is_named(tmp_path, files, why):
    with pytest.raises(RepoUnsupported, match=why):
        read_repo(repo(tmp_path, {**PKG, **TESTS, **files}))


PYPROJECT = """
[project]
name = "acme"
dependencies = ["attrs>=22", "tomli; python_version < '3.0'"]
[project.optional-dependencies]
test = ["freezegun", "pytest>=7", "pytest-cov"]
docs = ["sphinx-theme-x"]
[dependency-groups]
lint = ["ruff-plugin-x"]
testing = ["hypothesis==6.100.0", {include-group = "base"}, "acme[test]"]
base = ["six"]
"""
SETUP_CFG = """
[metadata]
name = acme
[options]
install_requires =
    boltons>=20
tests_require = mock
[options.extras_require]
tests = pyfakefs
"""
SETUP_PY = """from setuptools import setup
setup(name="acme", install_requires=["face>=20"], extras_require={"testing": ["responses"], "yaml": ["PyYAML"]})
"""


@pytest.mark.parametrize(
    "files, wanted, where",
    [
        (
            {"pyproject.toml": PYPROJECT},
            ["attrs>=22", "freezegun", "hypothesis==6.100.0", "six"],
            "pyproject.toml:dependency-groups.testing",
        ),
        ({"setup.cfg": SETUP_CFG}, ["boltons>=20", "mock", "pyfakefs"], "setup.cfg:options.extras_require.tests"),
        ({"setup.py": SETUP_PY}, ["face>=20", "responses"], "setup.py:extras_require.testing"),
        ({"requirements.txt": "# pins\nidna==3.7  # why\n-e .\n--index-url x\n"}, ["idna==3.7"], "requirements.txt"),
        (
            {"test_requirements.txt": "-r requirements-dev.txt\nsortedcontainers\n", "requirements-dev.txt": "toolz\n"},
            ["toolz", "sortedcontainers"],
            "test_requirements.txt",
        ),
        (
            {"tox.ini": "[testenv]\ndeps =\n    pytest\n    py311: wcwidth\n    {posargs}\n"},
            ["wcwidth"],
            "tox.ini:testenv.deps",
        ),
    ],
    ids=["pyproject-pep621-pep735", "setup.cfg", "setup.py", "requirements.txt", "test_requirements.txt", "tox.ini"],
)
def test_each_kind_of_declaration(tmp_path, files, wanted, where):
    reqs, declared, _ = declared_requirements(repo(tmp_path, files))
    assert sorted(reqs) == sorted(wanted)
    assert where in declared


def test_pytest_its_own_dependencies_and_tools_are_left_out(tmp_path):
    lock = "pytest==7.4.4\npluggy==1.2.0\ncoverage==7.2.7\ntox==4.8.0\nattrs==24.2.0\n"
    reqs, _, left_out = declared_requirements(repo(tmp_path, {"requirements.txt": lock, "setup.py": SETUP_PY}))
    assert "attrs==24.2.0" in reqs and not any(r.startswith(("pytest", "pluggy", "coverage", "tox")) for r in reqs)
    assert "pluggy==1.2.0" in left_out  # an old pluggy first on sys.path would break the harness's pytest


def test_a_lock_files_pin_wins_over_a_range(tmp_path):
    reqs, _, _ = declared_requirements(repo(tmp_path, {"setup.py": SETUP_PY, "requirements.txt": "face==24.0.0\n"}))
    assert "face==24.0.0" in reqs and "face>=20" not in reqs
