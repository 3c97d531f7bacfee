"""One test run: fresh copy of the base -> model patch -> grader protected -> test patch -> tests in the sandbox.

`run_tests` is what `evaluate` grades and what the task factory uses to discover FAIL_TO_PASS / PASS_TO_PASS (it works
with empty lists). It never raises for anything an instance or a patch contains: problems come back in the TestRun,
`infra_error` set only for what is not the model's doing (missing repository, sandbox that does not start, a test
patch that does not apply, disk errors).
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from evals.harness import sandbox
from evals.harness.constants import SANDBOX_ENV, SANDBOX_TESTBED, SANDBOX_TOOLS
from evals.harness.environment import EnvironmentMissing, base_tree, fresh_copy
from evals.harness.instance import Instance
from evals.harness.patching import apply_patch, patch_paths
from evals.harness.protect import protect_grader
from evals.harness.repoenv import EnvBuildError, EnvCache, default_cache, ensure_env
from evals.harness.results import parse_records
from postgame.settings.harness import HarnessSettings


class UnsupportedTestCommand(ValueError):
    pass


@dataclass
class TestRun:
    __test__ = False  # not a pytest test class

    instance_id: str
    statuses: dict[str, str] = field(default_factory=dict)
    patch_applied: bool = False
    apply_error: str | None = None
    timed_out: bool = False
    reverted_files: list[str] = field(default_factory=list)
    sandbox: str = "none"
    infra_error: str | None = None
    seconds: float = 0.0
    log: str = ""
    returncode: int | None = None
    tampering: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)


def pytest_args(instance: Instance, test_files: list[str]) -> list[str]:
    """pytest arguments: the instance's `test_cmd` (a pytest command) or `-rA` over the test patch's test files."""
    if instance.test_cmd:
        words = shlex.split(instance.test_cmd)
        exe = os.path.basename(words[0]) if words else ""
        if exe.startswith("python") and words[1:3] == ["-m", "pytest"]:
            return words[3:]
        if exe in ("pytest", "py.test"):
            return words[1:]
        raise UnsupportedTestCommand(
            f"test_cmd {instance.test_cmd!r} is not a pytest command (python -m pytest ... / pytest ...)"
        )
    return ["-rA", *test_files]


_SHM = Path("/dev/shm")
_SHM_MIN_FREE = 1 << 30
_work_root_lock = threading.Lock()
_work_root: list[Path | None] = []


def work_root(settings: HarnessSettings) -> Path | None:
    """Where a run's copy is made: `eval.work_dir`, else /dev/shm when it is a tmpfs with >= 1 GiB free, else the
    system temp folder. On a busy disk creating and deleting a repository's files costs ~0.3-0.5 s a run; on tmpfs
    ~0.05 s. What a run writes there is memory, charged to the run's memory cgroup where one is available."""
    if settings.work_dir is not None:
        return Path(settings.work_dir)
    with _work_root_lock:
        if not _work_root:
            _work_root.append(_SHM if _is_roomy_tmpfs(_SHM) else None)
    return _work_root[0]


def _is_roomy_tmpfs(path: Path) -> bool:
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
        st = os.statvfs(path)
    except OSError:
        return False
    tmpfs = any(line.split()[1:3] == [str(path), "tmpfs"] for line in mounts if len(line.split()) > 2)
    return tmpfs and st.f_bavail * st.f_frsize >= _SHM_MIN_FREE and os.access(path, os.W_OK | os.X_OK)


def _test_files(copy: Path, test_patch_paths: list[str]) -> list[str]:
    """The test patch's Python test files that exist once it is applied (SWE-bench's test directives)."""
    return [
        p
        for p in test_patch_paths
        if p.endswith(".py") and os.path.basename(p) != "conftest.py" and (copy / p).is_file()
    ]


def _tail(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            data = f.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    return text if size <= limit else f"[... {size - limit} bytes cut ...]\n{text}"


def run_tests(
    instance: Instance,
    patch: str,
    *,
    repos_dir: str | Path | None,
    settings: HarnessSettings,
    apply_test_patch: bool = True,
    envs: EnvCache | None = None,
) -> TestRun:
    """One sandboxed run. `envs` keeps per-repository environments (instances with `env_spec`); default: the
    process-wide cache under `settings.cache_dir`, without a store."""
    start = time.monotonic()
    run = TestRun(instance.instance_id)
    notes: list[str] = []
    try:
        repos = Path(repos_dir) if repos_dir else None
        _run_tests(instance, patch or "", repos, settings, apply_test_patch, run, notes, envs)
    except (EnvironmentMissing, EnvBuildError) as exc:
        run.infra_error = str(exc)
    except OSError as exc:
        run.infra_error = f"harness I/O error: {exc}"
    except Exception as exc:  # noqa: BLE001 - a harness bug must not kill the batch; it is ours, not the model's
        run.infra_error = f"harness error: {type(exc).__name__}: {exc}"
    run.seconds = time.monotonic() - start
    if run.infra_error:
        notes.append(f"INFRASTRUCTURE ERROR: {run.infra_error}")
    run.log = "\n".join(notes) + ("\n" + run.log if run.log else "")
    return run


def _run_tests(
    instance: Instance,
    patch: str,
    repos_dir: Path | None,
    settings: HarnessSettings,
    apply_test_patch: bool,
    run: TestRun,
    notes: list[str],
    envs: EnvCache | None,
) -> None:
    mode, note = sandbox.choose_mode(settings)
    notes.append(note)
    if mode is None:
        run.infra_error = note
        return
    run.sandbox = mode
    base, source = base_tree(instance, repos_dir, settings.cache_dir)
    env_dir = None
    if instance.env_spec is not None:
        if mode != "bwrap":
            run.infra_error = (
                f"instance {instance.instance_id!r} has an env_spec: per-repository environments need "
                f"the bwrap sandbox, and this run is in {mode} mode"
            )
            return
        env_dir = ensure_env(instance, base, settings, envs or default_cache(settings), notes)
    workdir = Path(tempfile.mkdtemp(prefix="postgame-run-", dir=work_root(settings)))
    try:
        copy = fresh_copy(base, workdir / "testbed")
        model_paths: tuple[str, ...] = ()
        run.patch_applied = True
        if patch.strip():
            applied = apply_patch(copy, patch, base_dir=base, source=source)
            notes.append(applied.log or f"patch: {applied.method or applied.error}")
            if not applied.applied:
                run.patch_applied, run.apply_error = False, applied.error
                return
            notes.append(f"model patch applied with {applied.method}")
            model_paths = applied.paths
        test_paths = patch_paths(instance.test_patch) if apply_test_patch and instance.test_patch.strip() else []
        reverted = protect_grader(copy, base, model_paths, test_paths)
        run.reverted_files = [r.path for r in reverted]
        notes += [f"reverted {r.path} ({r.reason})" for r in reverted]
        if test_paths:
            applied = apply_patch(copy, instance.test_patch, base_dir=base, source=source)
            if not applied.applied:
                run.infra_error = f"test_patch does not apply to the base: {applied.error}"
                return
        try:
            args = pytest_args(instance, _test_files(copy, test_paths))
        except UnsupportedTestCommand as exc:
            run.infra_error = str(exc)
            return
        _execute(mode, copy, workdir, args, settings, run, notes, env_dir)
    finally:
        if settings.keep_workdir:
            notes.append(f"kept the run's folder: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def _execute(
    mode: sandbox.Mode,
    copy: Path,
    workdir: Path,
    args: list[str],
    settings: HarnessSettings,
    run: TestRun,
    notes: list[str],
    env_dir: Path | None = None,
) -> None:
    root = SANDBOX_TESTBED if mode == "bwrap" else str(copy)
    tools = SANDBOX_TOOLS if mode == "bwrap" else str(sandbox.TOOLS_DIR)
    home = workdir / "home"
    home.mkdir()
    results_path, output_path = workdir / "results.jsonl", workdir / "output.txt"
    results_fd = os.open(results_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    output_fd = os.open(output_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    token = secrets.token_hex(16)
    token_fd, token_w = os.pipe()
    os.write(token_w, token.encode())
    os.close(token_w)
    limits = sandbox.rlimits(settings, with_nproc=mode == "bwrap" or os.geteuid() != 0)
    pytest_argv = ["--rootdir", root, "-p", "no:cacheprovider", *args]
    python = f"{SANDBOX_ENV}/bin/python" if env_dir is not None else sys.executable
    argv = [
        python,
        "-I",
        "-B",
        f"{tools}/pg_launch.py",
        "--fd",
        str(results_fd),
        "--token-fd",
        str(token_fd),
        "--root",
        root,
        "--limits",
        json.dumps(limits),
        "--",
        *pytest_argv,
    ]
    run.command = ["python", "-m", "pytest", *pytest_argv]
    notes.append("$ " + shlex.join(run.command))
    try:
        binds: tuple[sandbox.Bind, ...] = ((str(env_dir), SANDBOX_ENV, False),) if env_dir is not None else ()
        result = sandbox.run(
            argv,
            mode=mode,
            copy_dir=copy,
            home_dir=home,
            stdout_fd=output_fd,
            pass_fds=(results_fd, token_fd),
            settings=settings,
            binds=binds,
            bin_dir=f"{SANDBOX_ENV}/bin" if env_dir is not None else None,
        )
    finally:
        for fd in (results_fd, output_fd, token_fd):
            os.close(fd)
    run.timed_out, run.returncode = result.timed_out, result.returncode
    parsed = parse_records(results_path.read_bytes(), token)
    run.log = "---- test output ----\n" + _tail(output_path, settings.max_log_kb * 1024)
    notes.append(f"exit code {result.returncode}; {result.seconds:.2f}s; cgroup: {','.join(result.cgroup) or 'none'}")
    if result.timed_out:
        notes.append(f"TIMED OUT after {settings.timeout_s}s: the whole process tree was killed")
    if not parsed.started:  # nothing of the repository had run yet: not the model's doing
        last = next((line for line in reversed(run.log.splitlines()) if line.strip()), "")
        run.infra_error = f"the test runner did not start in the sandbox (exit code {result.returncode}): {last}"
        return
    if not parsed.finished:
        notes.append(
            "pytest did not reach its end (timed out, killed, crashed or exited early): every test counts as failed"
        )
    for nodeid, text in parsed.collect_errors.items():
        notes.append(f"collection error in {nodeid}: {text.strip().splitlines()[-1] if text.strip() else ''}")
    for nodeid, labels in parsed.failed_subtests.items():
        more = f" (+{len(labels) - 5})" if len(labels) > 5 else ""
        notes.append(f"failed subtests of {nodeid}: {'; '.join(labels[:5])}{more}")
    if parsed.tampering:
        run.tampering = parsed.tampering
        notes += [f"TAMPERING: {t}; every result is void" for t in parsed.tampering]
    run.statuses = parsed.statuses
