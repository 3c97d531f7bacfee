"""Keep the grader out of the model's reach: revert what a model patch did to tests and to pytest itself.

Reverted to base (new files removed), each recorded in the report's `reverted_files`:
- test files: `test_*.py`, `*_test.py`, anything under a `test/` or `tests/` folder, every `conftest.py`;
- pytest configuration: `pytest.ini`, and `tox.ini` / `setup.cfg` / `pyproject.toml` when their pytest section
  (`[pytest]`, `[tool:pytest]`, `[tool.pytest...]`) changed;
- pytest plugins: modules the base declares as plugins (`pytest_plugins` in a conftest, `-p` in addopts);
- Python start-up hooks and plugin metadata: `sitecustomize.py`, `usercustomize.py`, `*.pth`, `*.dist-info/`,
  `*.egg-info/` (entry points could load a plugin).
Then the files the test patch touches are reset to base (new ones removed) before it is applied, as SWE-bench does.
Library folders named `testing/` are not test folders here (numpy.testing, pandas._testing are library code).
"""

from __future__ import annotations

import ast
import configparser
import functools
import os
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from evals.harness.patching import file_state, safe_restore
from evals.harness.paths import UnsafePath

_CONFIG_SECTIONS = {"tox.ini": "pytest", "setup.cfg": "tool:pytest"}


@dataclass(frozen=True)
class Reverted:
    path: str
    reason: str


def is_test_path(rel: str) -> bool:
    p = PurePosixPath(rel)
    name = p.name
    if name == "conftest.py":
        return True
    if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
        return True
    return any(part in ("test", "tests") for part in p.parts)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8") if path.is_file() and not path.is_symlink() else None
    except (OSError, UnicodeDecodeError):
        return None


def _ini_section(text: str | None, section: str) -> object:
    if text is None:
        return None
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return ("unparsable", text)
    return dict(parser.items(section)) if parser.has_section(section) else None


def _toml_pytest(text: str | None) -> object:
    if text is None:
        return None
    try:
        return tomllib.loads(text).get("tool", {}).get("pytest")
    except tomllib.TOMLDecodeError:
        return ("unparsable", text)


def _config_changed(rel: str, base: Path, copy: Path) -> bool:
    name = PurePosixPath(rel).name
    before, after = _read(base / rel), _read(copy / rel)
    if name == "pyproject.toml":
        return _toml_pytest(before) != _toml_pytest(after)
    return _ini_section(before, _CONFIG_SECTIONS[name]) != _ini_section(after, _CONFIG_SECTIONS[name])


@functools.lru_cache(maxsize=64)
def declared_plugins(base_dir: Path) -> frozenset[str]:
    """Relative paths of the modules the base loads as pytest plugins (conftest `pytest_plugins`, addopts `-p`)."""
    modules: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(base_dir):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
        if "conftest.py" in filenames:
            try:
                tree = ast.parse(Path(dirpath, "conftest.py").read_bytes())
            except (SyntaxError, ValueError, OSError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and any(
                    getattr(t, "id", None) == "pytest_plugins" for t in node.targets
                ):
                    try:
                        value = ast.literal_eval(node.value)
                    except ValueError:
                        continue
                    modules.update([value] if isinstance(value, str) else [v for v in value if isinstance(v, str)])
    addopts: list[str] = []
    for name, section in (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        sec = _ini_section(_read(base_dir / name), section)
        if isinstance(sec, dict):
            addopts += shlex.split(sec.get("addopts", ""))
    toml = _toml_pytest(_read(base_dir / "pyproject.toml"))
    if isinstance(toml, dict):
        opts = toml.get("ini_options", {}).get("addopts", "")
        addopts += shlex.split(opts) if isinstance(opts, str) else [str(o) for o in opts]
    for i, opt in enumerate(addopts):
        if opt == "-p" and i + 1 < len(addopts):
            modules.add(addopts[i + 1])
        elif opt.startswith("-p") and len(opt) > 2:
            modules.add(opt[2:])
    paths: set[str] = set()
    for mod in modules:
        if mod.startswith("no:"):
            continue
        stem = mod.replace(".", "/")
        paths.update({f"{stem}.py", f"{stem}/__init__.py", f"src/{stem}.py", f"src/{stem}/__init__.py"})
    return frozenset(paths)


def _reason(rel: str, base: Path, copy: Path) -> str | None:
    p = PurePosixPath(rel)
    name = p.name
    if name == "conftest.py":
        return "conftest.py"
    if is_test_path(rel):
        return "test file"
    if name == "pytest.ini":
        return "pytest configuration"
    if name in ("tox.ini", "setup.cfg", "pyproject.toml") and _config_changed(rel, base, copy):
        return "pytest configuration"
    if name in ("sitecustomize.py", "usercustomize.py") or name.endswith(".pth"):
        return "python start-up hook"
    if any(part.endswith((".dist-info", ".egg-info")) for part in p.parts[:-1]):
        return "plugin metadata"
    if rel in declared_plugins(base):
        return "pytest plugin"
    return None


def protect_grader(
    copy: Path, base: Path, model_paths: list[str] | tuple[str, ...], test_patch_paths: list[str] | tuple[str, ...] = ()
) -> list[Reverted]:
    """Revert the model's changes to protected files; reset the test patch's files. Returns what was reverted."""
    reverted: list[Reverted] = []
    for rel in model_paths:
        reason = "file of the test patch" if rel in test_patch_paths else _reason(rel, base, copy)
        if reason is None or file_state(copy, rel) == file_state(base, rel):
            continue
        safe_restore(copy, base, rel)
        reverted.append(Reverted(rel, reason))
    for rel in test_patch_paths:
        try:
            safe_restore(copy, base, rel)
        except UnsafePath:
            continue
    return reverted
