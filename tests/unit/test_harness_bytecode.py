"""The sandboxed test runner's bytecode: the sandbox runs Python with -B over a read-only venv, and a
`pip install --no-compile` writes none, so unless the harness writes it every run compiles pytest again (~0.17 s of a
0.3 s run; BENCHMARKS.md, "Session 36: the sandboxed test runner's bytecode")."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

from evals.harness import sandbox
from evals.harness.constants import SANDBOX_TOOLS
from evals.harness.testrun import run_tests
from tests.harness_fixtures import calc_instance, diff_against, quick_settings

# Counts the sources an import compiles (importlib raises the audit event "compile" for each one it reads as text).
_COUNT_COMPILES = textwrap.dedent(
    """
    import sys
    compiled = []
    sys.addaudithook(lambda event, args: compiled.append(args[1]) if event == "compile" and args[1] != "<string>" else None)
    sys.path.insert(0, sys.argv[1])
    import alpha
    print(len(compiled))
    """
)


def _compiles_on_import(folder) -> int:
    done = subprocess.run(
        [sys.executable, "-I", "-B", "-c", _COUNT_COMPILES, str(folder)], capture_output=True, text=True, check=True
    )
    return int(done.stdout.split()[-1])


def test_written_bytecode_is_what_an_import_takes_and_a_changed_source_is_compiled_again(tmp_path):
    source = tmp_path / "alpha.py"
    source.write_text("VALUE = 1\n")
    assert _compiles_on_import(tmp_path) == 1  # -B: nothing written, so the next import compiles again
    assert _compiles_on_import(tmp_path) == 1

    assert sandbox.compile_sources([source]) == 1
    assert _compiles_on_import(tmp_path) == 0
    assert sandbox.compile_sources([source]) == 0  # current: left alone

    source.write_text("VALUE = 22\n")  # another size (and mtime): stale
    assert sandbox.compile_sources([source]) == 1
    assert _compiles_on_import(tmp_path) == 0


def test_bytecode_it_cannot_write_is_left_unwritten_and_the_run_goes_on(tmp_path):
    source = tmp_path / "alpha.py"
    source.write_text("VALUE = 1\n")
    (tmp_path / "__pycache__").write_text("")  # a file where the folder would go: no write succeeds, root's neither
    assert sandbox.compile_sources([source]) == 0
    assert _compiles_on_import(tmp_path) == 1


def _distribution(site, name: str, requires: list[str]) -> None:
    (site / name).mkdir()
    (site / name / "__init__.py").write_text("")
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    )
    (info / "RECORD").write_text(f"{name}/__init__.py,,\n{name}-1.0.dist-info/METADATA,,\n")


def test_the_runner_sources_follow_the_requirements_and_leave_extras_out(tmp_path, monkeypatch):
    _distribution(tmp_path, "alpha", ["beta>=1", 'gamma; extra == "docs"', 'delta; python_version < "3"'])
    _distribution(tmp_path, "beta", [])
    _distribution(tmp_path, "gamma", [])
    _distribution(tmp_path, "delta", [])
    monkeypatch.syspath_prepend(str(tmp_path))
    sources = sandbox.runner_sources(("alpha",))
    assert {p for p in sources if tmp_path in p.parents} == {
        tmp_path / "alpha/__init__.py",
        tmp_path / "beta/__init__.py",
    }
    assert set(sandbox.TOOLS_DIR.glob("*.py")) <= set(sources)  # the launcher's plugin, read by every run


_LIST_MODULES = """
import json
import sys


def test_modules():
    files = sorted(m.__file__ for m in list(sys.modules.values()) if (getattr(m, "__file__", None) or "").endswith(".py"))
    begin, end = "-".join(["MODULES", "BEGIN"]), "-".join(["MODULES", "END"])  # not as they are in this source
    assert not files, begin + json.dumps(files) + end
"""


def test_every_module_a_sandboxed_run_imports_from_the_venv_is_a_runner_source(tmp_path):
    """What the sandboxed pytest imports (the real harness run, through the launcher) outside the stdlib and the
    copy is among `runner_sources()`, and the harness wrote its bytecode before the run: a run compiles none of it."""
    for tool in sandbox.TOOLS_DIR.glob("*.py"):  # only sandboxed runs read these: their bytecode comes from the harness
        Path(importlib.util.cache_from_source(str(tool))).unlink(missing_ok=True)
    sandbox.compile_runner.cache_clear()
    tiny = calc_instance(tmp_path / "calc")
    instance = tiny.instance.model_copy(
        update={"test_patch": diff_against(tiny.base_files, {"tests/test_modules.py": _LIST_MODULES})}
    )
    run = run_tests(instance, "", repos_dir=tiny.repos_dir, settings=quick_settings())
    assert "MODULES-BEGIN" in run.log, run.log
    text = run.log[run.log.index("MODULES-BEGIN") + len("MODULES-BEGIN") : run.log.index("MODULES-END")]
    inside = {f"{SANDBOX_TOOLS}/{p.name}": str(p) for p in sandbox.TOOLS_DIR.glob("*.py")}  # the tools' bind
    imported = {os.path.realpath(inside.get(f, f)) for f in json.loads(text)}
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    outside = {f for f in imported if not f.startswith(stdlib + os.sep) and "/testbed/" not in f}  # not the copy's
    sources = {os.path.realpath(p) for p in sandbox.runner_sources()}
    assert any("_pytest" in f for f in outside)  # the check sees the runner
    assert outside <= sources, sorted(outside - sources)
    stale = [f for f in outside if not sandbox._current(Path(f), Path(importlib.util.cache_from_source(f)))]
    assert not stale  # the run found them compiled (it runs with -B: it could not have written them)


def test_what_goes_wrong_writing_the_bytecode_never_stops_a_run(monkeypatch):
    def unreadable_metadata(*args, **kwargs):
        raise ValueError("Requires-Dist: not a requirement")

    def hung(*args, **kwargs):
        raise subprocess.TimeoutExpired("python", 60)

    monkeypatch.setattr(sandbox, "runner_sources", unreadable_metadata)
    sandbox.compile_runner.cache_clear()
    try:
        assert sandbox.compile_runner() == 0
    finally:
        sandbox.compile_runner.cache_clear()
    monkeypatch.setattr(sandbox.subprocess, "run", hung)
    assert sandbox.startup_sources() == []
