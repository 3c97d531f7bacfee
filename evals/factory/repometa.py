"""What a repository says about itself: its layout, its suite, its dependencies, and what the factory cannot handle.

    meta = read_repo(root)        # RepoMeta: layout, test folders, requirements by where they were declared

Everything is read from files, nothing is imported or run. Dependencies come from every kind of declaration a Python
project uses: `pyproject.toml` (PEP 621 `dependencies` and the test-like `optional-dependencies`, PEP 735
`dependency-groups` with `include-group`), `setup.cfg` (`install_requires`, test-like `extras_require`,
`tests_require`), `setup.py` (the same keywords as literals in the `setup(...)` call), `requirements*.txt`,
`test_requirements.txt` / `test-requirements.txt` / `requirements/*.txt` (following `-r`), and `tox.ini`'s
`[testenv] deps`. pytest itself and its own dependencies are left out (the harness brings pytest; a pinned old
pluggy would break it), and so are tools that no test imports (linters, coverage, tox, docs builders).
Extras and groups count as test-like by name (test, tests, testing, dev, ...).

Layouts: `src/` (`src/<pkg>/__init__.py`), flat (`<pkg>/__init__.py` at the root, or top-level modules), tests in
`tests/`, `test/` or inside the package (`<pkg>/tests/`, `<pkg>/test/`). A compiled extension (C/C++/Cython/Rust
sources in the package, `ext_modules` in setup.py, a compiling build backend) is named, not built.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

TEST_LIKE = ("test", "tests", "testing", "test-requirements", "dev", "develop", "development", "all")
# The harness's own test runner and its dependencies: never installed into a repository's environment.
PYTEST_OWN = {"pytest", "pluggy", "iniconfig", "packaging", "exceptiongroup", "tomli", "colorama", "pygments"}
# Tools no test imports: installing them only costs time (and old pins of them may not build).
NOT_FOR_TESTS = {
    "pytest-cov",
    "coverage",
    "codecov",
    "tox",
    "nox",
    "pre-commit",
    "mypy",
    "ruff",
    "black",
    "isort",
    "flake8",
    "pylint",
    "twine",
    "build",
    "wheel",
    "setuptools-scm",
    "virtualenv",
    "sphinx",
    "mkdocs",
    "check-manifest",
    "bump2version",
    "pyupgrade",
    "flynt",
    "pytest-codspeed",
}
COMPILED_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".pyx", ".rs")
COMPILING_BACKENDS = ("maturin", "setuptools-rust", "setuptools_rust", "scikit-build", "meson", "cython", "cffi")
SKIP_DIRS = {"docs", "doc", "examples", "example", "scripts", "benchmarks", "bench", "tools", "build", "dist", "site"}


class RepoUnsupported(Exception):
    """The repository cannot become a project; the message names what is missing, in one line."""


@dataclass
class RepoMeta:
    layout: str  # "src" | "flat"
    packages: list[str]  # folders (or top-level module files) that hold the code: where bugs go
    tests: list[str]  # path prefixes of the suite (folders end with "/")
    tests_inside_package: bool
    requirements: list[str]  # one pip requirement each, deduplicated, in declaration order
    declared_in: dict[str, list[str]] = field(default_factory=dict)  # file (or file:section) -> what it declared
    left_out: list[str] = field(default_factory=list)  # requirements dropped (pytest's own, tools)
    version_files: list[str] = field(default_factory=list)  # files a build backend generates (e.g. _version.py)
    python_requires: str = ""

    @property
    def pythonpath(self) -> str | None:
        return "src" if self.layout == "src" else None


def _name(req: str) -> str | None:
    try:
        return canonicalize_name(Requirement(req).name)
    except InvalidRequirement:
        return None


def _applies(req: str) -> bool:
    try:
        r = Requirement(req)
    except InvalidRequirement:
        return False
    return r.marker is None or r.marker.evaluate({"extra": ""})


def _is_test_like(name: str) -> bool:
    return canonicalize_name(name) in TEST_LIKE or canonicalize_name(name).startswith("test")


# ---------------------------------------------------------------------------------------------------------------------
# Declarations, one reader per kind.


def _pyproject(root: Path, project_name: list[str]) -> dict[str, list[str]]:
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out: dict[str, list[str]] = {}
    project = data.get("project", {})
    if project.get("name"):
        project_name.append(project["name"])
    if project.get("dependencies"):
        out["pyproject.toml:project.dependencies"] = list(project["dependencies"])
    for extra, reqs in project.get("optional-dependencies", {}).items():
        if _is_test_like(extra):
            out[f"pyproject.toml:project.optional-dependencies.{extra}"] = list(reqs)
    groups = data.get("dependency-groups", {})

    def expand(group: str, seen: tuple[str, ...] = ()) -> list[str]:
        reqs: list[str] = []
        for item in groups.get(group, []):
            if isinstance(item, dict) and "include-group" in item and item["include-group"] not in seen:
                reqs += expand(item["include-group"], (*seen, group))
            elif isinstance(item, str):
                reqs.append(item)
        return reqs

    for group in groups:
        if _is_test_like(group):
            out[f"pyproject.toml:dependency-groups.{group}"] = expand(group)
    return out


def _setup_cfg(root: Path, project_name: list[str]) -> dict[str, list[str]]:
    path = root / "setup.cfg"
    if not path.is_file():
        return {}
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read_string(path.read_text(encoding="utf-8"))
    out: dict[str, list[str]] = {}
    if cfg.has_option("metadata", "name"):
        project_name.append(cfg.get("metadata", "name"))

    def lines(text: str) -> list[str]:
        return [line.strip() for line in text.replace(";", "\n;").splitlines() if line.strip() and line[0] != ";"]

    for key in ("install_requires", "tests_require"):
        if cfg.has_option("options", key):
            out[f"setup.cfg:options.{key}"] = lines(cfg.get("options", key))
    if cfg.has_section("options.extras_require"):
        for extra, text in cfg.items("options.extras_require"):
            if _is_test_like(extra):
                out[f"setup.cfg:options.extras_require.{extra}"] = lines(text)
    return out


def _setup_py(root: Path, project_name: list[str]) -> dict[str, list[str]]:
    path = root / "setup.py"
    if not path.is_file():
        return {}
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return {}
    out: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "setup"):
            continue
        for kw in node.keywords:
            try:
                value = ast.literal_eval(kw.value)
            except ValueError:
                continue
            if kw.arg == "name" and isinstance(value, str):
                project_name.append(value)
            elif kw.arg in ("install_requires", "tests_require") and isinstance(value, (list, tuple)):
                out[f"setup.py:{kw.arg}"] = [str(v) for v in value]
            elif kw.arg == "extras_require" and isinstance(value, dict):
                for extra, reqs in value.items():
                    if _is_test_like(extra):
                        out[f"setup.py:extras_require.{extra}"] = [reqs] if isinstance(reqs, str) else list(reqs)
    return out


def _requirements_file(root: Path, path: Path, seen: set[Path]) -> list[str]:
    if path in seen or not path.is_file():
        return []
    seen.add(path)
    reqs: list[str] = []
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement")):
            reqs += _requirements_file(root, path.parent / line.split(None, 1)[-1].split("=", 1)[-1], seen)
        elif not line.startswith("-") and not line.startswith(".") and "://" not in line:
            reqs.append(line)
    return reqs


REQUIREMENT_FILES = (
    "requirements.txt",
    "requirements-dev.txt",
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements_dev.txt",
    "requirements_test.txt",
    "test_requirements.txt",
    "test-requirements.txt",
    "dev-requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/dev.txt",
    "requirements/testing.txt",
)


def _requirements(root: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    seen: set[Path] = set()
    for rel in REQUIREMENT_FILES:
        reqs = _requirements_file(root, root / rel, seen)
        if reqs:
            out[rel] = reqs
    return out


def _tox(root: Path) -> dict[str, list[str]]:
    path = root / "tox.ini"
    if not path.is_file():
        return {}
    cfg = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        cfg.read_string(path.read_text(encoding="utf-8"))
    except configparser.Error:
        return {}
    if not cfg.has_option("testenv", "deps"):
        return {}
    reqs: list[str] = []
    for raw in cfg.get("testenv", "deps").splitlines():
        line = re.sub(r"^[\w,{}-]+:\s*", "", raw.strip())  # factor-conditional lines: `py311: foo`
        if not line or line.startswith("#") or "{" in line:
            continue
        if line.startswith("-r"):
            reqs += _requirements_file(root, root / line[2:].strip().replace("{toxinidir}/", ""), set())
        elif not line.startswith("-"):
            reqs.append(line)
    return {"tox.ini:testenv.deps": reqs} if reqs else {}


def declared_requirements(root: Path) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """(requirements to install, {where: as declared}, left out): every kind of declaration, in a fixed order.
    A requirement on the project itself (`name[test]`) stands for its extras, which are read already."""
    names: list[str] = []
    declared: dict[str, list[str]] = {}
    for reader in (_pyproject, _setup_cfg, _setup_py):
        declared.update(reader(root, names))
    declared.update(_requirements(root))
    declared.update(_tox(root))
    own = {canonicalize_name(n) for n in names}
    wanted: dict[str, str] = {}
    left_out: list[str] = []
    for reqs in declared.values():
        for req in reqs:
            name = _name(req)
            if name is None or not _applies(req) or name in own:
                continue
            if name in PYTEST_OWN or name in NOT_FOR_TESTS or name.startswith("sphinx") or name.startswith("flake8"):
                if req not in left_out:
                    left_out.append(req)
                continue
            text = str(Requirement(req)).split(";")[0].strip()
            if name not in wanted or ("==" in text and "==" not in wanted[name]):  # a lock file's pin wins
                wanted[name] = text
    return list(wanted.values()), declared, left_out


# ---------------------------------------------------------------------------------------------------------------------
# Layout.


def _is_test_path(rel: str) -> bool:
    parts = rel.split("/")
    return any(p in ("tests", "test", "testing") for p in parts[:-1]) or parts[-1].startswith("test_")


def detect_layout(root: Path) -> tuple[str, list[str], list[str], bool]:
    """(layout, packages, test prefixes, tests inside the package). Raises RepoUnsupported without code or tests."""
    src = root / "src"
    base, layout = (src, "src") if src.is_dir() and any(src.glob("*/__init__.py")) else (root, "flat")
    prefix = "src/" if layout == "src" else ""
    packages = sorted(
        f"{prefix}{p.parent.name}"
        for p in base.glob("*/__init__.py")
        if p.parent.name not in SKIP_DIRS | {"tests", "test", "testing"} and not p.parent.name.startswith(".")
    )
    if not packages:  # top-level modules: `foo.py` beside setup.py
        packages = sorted(
            f"{prefix}{p.name}"
            for p in base.glob("*.py")
            if not p.name.startswith(("test", "setup", "conftest", "noxfile", "fabfile", "_"))
        )
    if not packages:
        raise RepoUnsupported(f"no Python package or module found at {'src/' if layout == 'src' else 'the root'}")
    tests: list[str] = []
    for name in ("tests", "test", "testing"):
        if (root / name).is_dir() and any((root / name).rglob("test*.py")):
            tests.append(f"{name}/")
    inside = False
    for pkg in packages:
        for name in ("tests", "test"):
            if (root / pkg / name).is_dir() and any((root / pkg / name).rglob("test*.py")):
                tests.append(f"{pkg}/{name}/")
                inside = True
    tests += sorted(p.name for p in root.glob("test_*.py"))
    if not tests:
        raise RepoUnsupported("no tests found (looked for tests/, test/, <package>/tests/, test_*.py at the root)")
    if (root / "conftest.py").is_file():
        tests.append("conftest.py")
    return layout, packages, tests, inside


def compiled_extension(root: Path, packages: list[str]) -> str | None:
    """What makes this repository need a compiler, or None."""
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*")) if (root / pkg).is_dir() else []:
            if path.suffix in COMPILED_SUFFIXES:
                return f"a compiled extension ({path.relative_to(root)})"
    if (root / "Cargo.toml").is_file():
        return "a compiled extension (Cargo.toml: Rust)"
    setup_py = root / "setup.py"
    if setup_py.is_file() and re.search(r"\bext_modules\s*=", setup_py.read_text(encoding="utf-8", errors="replace")):
        return "a compiled extension (setup.py declares ext_modules)"
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        build = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("build-system", {})
        for req in [*build.get("requires", []), build.get("build-backend", "")]:
            if any(b in req.lower() for b in COMPILING_BACKENDS):
                return f"a compiled extension (build-system needs {req!r})"
    return None


def version_files(root: Path) -> list[str]:
    """Files a VCS-version build hook writes at install time (hatch-vcs `version-file`, setuptools-scm
    `write_to`/`version_file`): the package imports them, and a checkout lacks them."""
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return []
    tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
    found = [
        tool.get("hatch", {}).get("build", {}).get("hooks", {}).get("vcs", {}).get("version-file"),
        tool.get("setuptools_scm", {}).get("write_to"),
        tool.get("setuptools_scm", {}).get("version_file"),
    ]
    return [f for f in found if isinstance(f, str) and not (root / f).exists()]


def read_repo(root: Path) -> RepoMeta:
    """The repository's layout and requirements; RepoUnsupported names the first thing that stops it."""
    layout, packages, tests, inside = detect_layout(root)
    compiled = compiled_extension(root, packages)
    if compiled:
        raise RepoUnsupported(f"{compiled}: only pure-Python repositories can be built without a compiler")
    requirements, declared, left_out = declared_requirements(root)
    python_requires = ""
    if (root / "pyproject.toml").is_file():
        python_requires = (
            tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
            .get("project", {})
            .get("requires-python", "")
        )
    return RepoMeta(
        layout, packages, tests, inside, requirements, declared, left_out, version_files(root), python_requires
    )
