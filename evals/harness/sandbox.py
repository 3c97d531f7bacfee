"""Run a command on model-written code, contained.

Two modes, chosen once per process (`probe()`), and named in every report as `sandbox`:

- `bwrap` (bubblewrap >= 0.8): every namespace unshared (no network: loopback is the sandbox's own), a user
  namespace with nested namespaces disabled, all capabilities dropped, an unprivileged uid, `--die-with-parent`,
  `--new-session`. The view of the system is read-only: `/usr` (+ the `/bin`, `/lib*` links), the Python that runs
  the harness (its prefix and venv, bound at the same paths), the harness's own tools folder, a synthetic `/etc`
  (passwd, group, hosts). Writable: only the instance's copy at `/testbed`, a size-capped private `/tmp` and
  `/dev/shm`. The environment is cleared (no host variables, `HOME=/tmp`). Host files such as `~/.aws` do not exist.
- `rlimits` (fallback, where user namespaces are forbidden): the same resource limits, a new session, a cleared
  environment and the timeout; no file-system, network or secret isolation. Use it for trusted code only.

In both modes: resource limits set inside (address space, CPU seconds, file size, open files, and the process
count where the kernel honours it), a pids + memory cgroup per run when this process may create one, and a
wall-clock timeout that kills the whole tree: the process group, the pid namespace (bwrap) and the cgroup.

What it does NOT protect against, said plainly:
- kernel exploits: this is namespaces + rlimits, not a VM; a kernel bug is an escape;
- as root without a usable pids cgroup, a fork bomb (root ignores RLIMIT_NPROC, even in a user namespace);
- in `rlimits` mode: reading any file the harness user can read, the network, and processes that `setsid()` away
  when no cgroup is available;
- CPU or disk bandwidth starvation of neighbours (no cpu/io cgroup), and /proc information about the host's CPUs;
- filling the copy's file system: RLIMIT_FSIZE caps each file, not the total. By default the copy is on /dev/shm
  (tmpfs), where what a run writes is memory charged to its memory cgroup when one is available; on a disk
  (`eval.work_dir`, or no roomy tmpfs) nothing caps the total;
- tampering with pytest from inside the test process itself (see `inside/pg_results.py`).
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import logging
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evals.harness import cgroups
from evals.harness.constants import SANDBOX_TESTBED, SANDBOX_TOOLS, SANDBOX_UID, SANDBOX_USER
from postgame.settings.harness import HarnessSettings

log = logging.getLogger(__name__)
Mode = Literal["bwrap", "rlimits"]
TOOLS_DIR = Path(__file__).resolve().parent / "inside"
_MB = 1 << 20


@dataclass(frozen=True)
class SandboxRun:
    returncode: int | None
    timed_out: bool
    seconds: float
    cgroup: list[str]  # controllers used ("pids", "memory"); empty = none available


@dataclass(frozen=True)
class Probe:
    bwrap_ok: bool
    reason: str  # why bwrap is not usable ("" when it is)
    disable_userns: bool = True  # False on bubblewrap < 0.8, which lacks --disable-userns


def _python_dirs() -> list[str]:
    """Folders the harness's Python needs, at the paths it will be called by (venv and base install)."""
    dirs: set[str] = set()
    for p in {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}:
        dirs.add(os.path.abspath(p))
        dirs.add(os.path.realpath(p))
    exe = Path(sys.executable)
    dirs.add(str(exe.parent.parent.resolve()))
    kept = sorted(d for d in dirs if d != "/" and not d.startswith("/usr/") and d != "/usr")
    # Drop a folder already inside another bound one.
    return [d for d in kept if not any(d != o and d.startswith(o + "/") for o in kept)]


_etc_lock = threading.Lock()
_etc_dir: Path | None = None


def _synthetic_etc() -> Path:
    """A minimal /etc, made once per process: enough for getpass, pwd, 'localhost' and the dynamic linker."""
    global _etc_dir
    with _etc_lock:
        if _etc_dir is None:
            d = Path(tempfile.mkdtemp(prefix="postgame-etc-"))
            (d / "passwd").write_text(
                f"root:x:0:0:root:/root:/bin/sh\n{SANDBOX_USER}:x:{SANDBOX_UID}:{SANDBOX_UID}::/tmp:/bin/sh\n"
                "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            )
            (d / "group").write_text(f"root:x:0:\n{SANDBOX_USER}:x:{SANDBOX_UID}:\nnogroup:x:65534:\n")
            (d / "hosts").write_text("127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost\n")
            if Path("/etc/ld.so.cache").is_file():  # the dynamic linker's index: not secret, and saves lookups
                shutil.copyfile("/etc/ld.so.cache", d / "ld.so.cache")
            d.chmod(0o755)
            atexit.register(shutil.rmtree, d, True)
            _etc_dir = d
    return _etc_dir


_build_etc_dir: Path | None = None
# Host files a network-enabled environment build may read (name resolution, CA certificates, pip's own config).
_BUILD_ETC = ("resolv.conf", "nsswitch.conf", "host.conf", "gai.conf", "pip.conf")


def _build_etc() -> Path:
    """/etc for an environment build with network: the synthetic one plus name resolution and pip's config."""
    global _build_etc_dir
    base = _synthetic_etc()
    with _etc_lock:
        if _build_etc_dir is None:
            d = Path(tempfile.mkdtemp(prefix="postgame-build-etc-"))
            for f in base.iterdir():
                shutil.copyfile(f, d / f.name)
            for name in _BUILD_ETC:
                if Path("/etc", name).is_file():
                    shutil.copyfile(Path("/etc", name), d / name)
            (d / "ssl").mkdir()
            d.chmod(0o755)
            atexit.register(shutil.rmtree, d, True)
            _build_etc_dir = d
    return _build_etc_dir


def _root_links() -> list[str]:
    args: list[str] = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / name
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    return args


def sandbox_env(home: str, *, plugin_autoload: bool = False, bin_dir: str | None = None) -> dict[str, str]:
    """The whole environment of the sandboxed process: nothing from the host.

    pytest's plugin autoload is off unless `eval.pytest_plugin_autoload` says otherwise: the harness's venv carries
    plugins the repository under test never asked for, and discovering them is ~20% of a short run's CPU.
    `bin_dir` (a per-repository environment's `bin`) comes first on PATH."""
    path = f"{bin_dir or Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
    env = {
        "PATH": path,
        "HOME": home,
        "USER": SANDBOX_USER,
        "LOGNAME": SANDBOX_USER,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TMPDIR": "/tmp" if home == "/tmp" else home,
    }
    if not plugin_autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


Bind = tuple[str, str, bool]  # (host path, path inside, writable)


def bwrap_args(
    settings: HarnessSettings,
    copy_dir: Path,
    env: dict[str, str],
    *,
    disable_userns: bool = True,
    binds: tuple[Bind, ...] = (),
    network: bool = False,
) -> list[str]:
    """bubblewrap's flags. `binds` are extra folders or files (a per-repository environment, read-only for test runs);
    `network` shares the host's network (environment builds only, when `eval.env_build_network` allows it)."""
    tmp = settings.tmp_size_mb * _MB
    args = [
        "bwrap",
        "--unshare-all",
        *(["--share-net"] if network else []),
        "--unshare-user",
        *(["--disable-userns"] if disable_userns else []),
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--hostname",
        "sandbox",
        *_root_links(),
        "--ro-bind",
        str(_build_etc() if network else _synthetic_etc()),
        "/etc",
    ]
    if network and Path("/etc/ssl").is_dir():
        args += ["--ro-bind", "/etc/ssl", "/etc/ssl"]
    args += [
        "--ro-bind",
        str(TOOLS_DIR),
        SANDBOX_TOOLS,
        "--bind",
        str(copy_dir),
        SANDBOX_TESTBED,
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(max(tmp // 4, _MB)),
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(tmp),
        "--tmpfs",
        "/tmp",
    ]
    # After the private /tmp: a Python (venv) that lives under /tmp, as in a CI clone there, must not be hidden by it.
    for d in _python_dirs():
        args += ["--ro-bind", d, d]
    for src, dest, writable in binds:
        args += ["--bind" if writable else "--ro-bind", src, dest]
    args += [
        "--remount-ro",
        "/",
        "--chdir",
        SANDBOX_TESTBED,
        "--clearenv",
    ]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args + ["--"]


_probe_lock = threading.Lock()
_probe: Probe | None = None


def _try_bwrap(settings: HarnessSettings, disable_userns: bool) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="postgame-probe-") as d:
        argv = bwrap_args(settings, Path(d), sandbox_env("/tmp"), disable_userns=disable_userns)
        argv += [sys.executable, "-I", "-c", "import os; os.listdir('/testbed')"]
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, str(exc)
        return r.returncode == 0, (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]


# What every sandboxed test run with the harness's own Python imports: pytest, what it requires on this Python, and
# the tools folder (`inside/`). The sandbox runs Python with -B (nothing there may write bytecode, and its view of the
# venv is read-only), and a `pip install --no-compile` (the Makefile's set-up) writes none, so nothing ever wrote
# pytest's: each sandboxed run compiled pytest from source again, ~0.17 s of a 0.3 s run (BENCHMARKS.md, "Session
# 36: the sandboxed test runner's bytecode"). `make test` hid it: its own pytest process writes that bytecode.
RUNNER_DISTRIBUTIONS = ("pytest",)


def runner_sources(distributions: tuple[str, ...] = RUNNER_DISTRIBUTIONS) -> list[Path]:
    """The `.py` files of `distributions` and of their requirements on this Python (recursively; extras left out),
    then the tools folder's."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    todo, files = list(distributions), []
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        files += [Path(str(dist.locate_file(f))) for f in dist.files or () if f.suffix == ".py"]
        for spec in dist.requires or ():
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return files + startup_sources() + sorted(TOOLS_DIR.glob("*.py"))


def startup_sources() -> list[Path]:
    """The sources this Python imports as it starts in isolated mode, as the sandbox starts it: the stdlib's, and
    what the venv's `.pth` files hook in (an editable install's finder, setuptools' distutils shim)."""
    script = "import json, sys; print(json.dumps([getattr(m, '__file__', None) for m in list(sys.modules.values())]))"
    try:
        done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=60)
        files = json.loads(done.stdout.splitlines()[-1]) if done.returncode == 0 and done.stdout.strip() else []
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        log.debug("no start-up sources: %s", exc)
        return []
    return [Path(f) for f in files if isinstance(f, str) and f.endswith(".py")]


@functools.cache
def compile_runner() -> int:
    """`compile_sources(runner_sources())`, once per process: the bytecode the sandboxed runs read. It only saves
    time, so nothing it meets stops a run: whatever fails is logged and left (the runs compile in memory)."""
    try:
        return compile_sources(runner_sources())
    except Exception as exc:  # noqa: BLE001 - an odd distribution's metadata must not stop the harness
        log.debug("runner bytecode not written: %s", exc)
        return 0


def compile_sources(sources: list[Path]) -> int:
    """Write each source's bytecode where it is missing or stale, as Python's own import would
    (`__pycache__/*.pyc` stamped with the source's mtime and size). Returns how many it compiled. A folder this
    process may not write (a read-only install) is left as it is: runs then compile in memory, as before."""
    import py_compile

    compiled = 0
    for source in sources:
        try:
            cached = Path(importlib.util.cache_from_source(str(source)))
            if _current(source, cached):
                continue
            py_compile.compile(
                str(source), cfile=str(cached), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP
            )
            compiled += 1
        except (OSError, py_compile.PyCompileError) as exc:
            log.debug("no bytecode for %s: %s", source, exc)
    return compiled


def _current(source: Path, cached: Path) -> bool:
    """Would an import take `cached` for `source`: this Python's magic, a timestamp pyc, the source's mtime and size."""
    try:
        with cached.open("rb") as fh:
            head = fh.read(16)
        stat = source.stat()
    except OSError:
        return False
    return (
        len(head) == 16
        and head[:4] == importlib.util.MAGIC_NUMBER
        and head[4:8] == bytes(4)
        and int.from_bytes(head[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
        and int.from_bytes(head[12:16], "little") == stat.st_size & 0xFFFFFFFF
    )


def probe(settings: HarnessSettings | None = None) -> Probe:
    """Whether bubblewrap works here with the full set of flags; tried once per process."""
    global _probe
    with _probe_lock:
        if _probe is None:
            settings = settings or HarnessSettings()
            if shutil.which("bwrap") is None:
                _probe = Probe(False, "bwrap is not installed (Debian/Ubuntu: apt-get install -y bubblewrap)")
            else:
                ok, reason = _try_bwrap(settings, disable_userns=True)
                if not ok and "disable-userns" in reason:  # bubblewrap < 0.8: everything else still holds
                    ok, reason = _try_bwrap(settings, disable_userns=False)
                    _probe = Probe(ok, "" if ok else f"bwrap does not work here: {reason}", disable_userns=False)
                else:
                    _probe = Probe(ok, "" if ok else f"bwrap does not work here: {reason}")
            if not _probe.bwrap_ok:
                log.warning(
                    "%s; test runs fall back to rlimits (no file-system, network or secret isolation)", _probe.reason
                )
    return _probe


def choose_mode(settings: HarnessSettings) -> tuple[Mode | None, str]:
    """(mode, note). mode is None when `sandbox: bwrap` was demanded and cannot run: an infrastructure error."""
    if settings.sandbox == "rlimits":
        return "rlimits", "sandbox: rlimits (configured): no file-system, network or secret isolation"
    p = probe(settings)
    if p.bwrap_ok:
        return "bwrap", "sandbox: bwrap" + (
            "" if p.disable_userns else " (bubblewrap < 0.8: nested user namespaces allowed)"
        )
    if settings.sandbox == "bwrap":
        return None, p.reason
    return "rlimits", f"sandbox: rlimits (fallback: {p.reason}); no file-system, network or secret isolation"


def rlimits(settings: HarnessSettings, *, with_nproc: bool) -> dict[str, tuple[int, int]]:
    """Limits the launcher sets on itself inside the sandbox (inherited by everything it starts)."""
    cpu = settings.effective_cpu_time_s
    limits = {
        "as": (settings.memory_mb * _MB,) * 2,
        "cpu": (cpu, cpu + 5),
        "fsize": (settings.file_size_mb * _MB,) * 2,
        "nofile": (settings.open_files,) * 2,
        "core": (0, 0),
    }
    if with_nproc:
        limits["nproc"] = (settings.max_processes,) * 2
    return limits


def run(
    argv: list[str],
    *,
    mode: Mode,
    copy_dir: Path,
    home_dir: Path,
    stdout_fd: int,
    pass_fds: tuple[int, ...],
    settings: HarnessSettings,
    binds: tuple[Bind, ...] = (),
    network: bool = False,
    bin_dir: str | None = None,
    extra_env: dict[str, str] | None = None,
) -> SandboxRun:
    """Run `argv` (paths as seen inside) contained; kill the whole tree at `settings.timeout_s`.

    `binds`, `network`, `bin_dir` and `extra_env` serve per-repository environments (bwrap mode only): the
    environment's folder, the build's network, its `bin` first on PATH, pip's settings for a build.
    Raises OSError when the sandbox itself cannot be set up (cgroup creation, exec failure): infrastructure.
    """
    if argv and argv[0] == sys.executable:
        compile_runner()  # once per process: the bytecode of what a run of the harness's Python imports
    env = sandbox_env(
        "/tmp" if mode == "bwrap" else str(home_dir), plugin_autoload=settings.pytest_plugin_autoload, bin_dir=bin_dir
    )
    env.update(extra_env or {})
    if mode == "bwrap":
        flags = bwrap_args(
            settings, copy_dir, env, disable_userns=probe(settings).disable_userns, binds=binds, network=network
        )
        cmd, popen_env, cwd = flags + argv, {"PATH": "/usr/bin:/bin"}, None
    else:
        cmd, popen_env, cwd = list(argv), env, str(copy_dir)
    group = cgroups.RunCgroup(settings.max_processes, settings.memory_mb * _MB) if cgroups.available() else None
    if group is not None and group.procs_files:
        # The shell joins the cgroups before exec, so nothing of the run ever starts outside them.
        join = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
        cmd = ["/bin/sh", "-c", join, "sh", *group.procs_files, "--", *cmd]
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=stdout_fd,
            stderr=stdout_fd,
            pass_fds=pass_fds,
            env=popen_env,
            cwd=cwd,
            start_new_session=True,
        )
        timed_out = not wait_exit(proc, settings.timeout_s)
        _kill_tree(proc, group)
        try:
            returncode = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            returncode = None
        return SandboxRun(returncode, timed_out, time.monotonic() - start, group.controllers if group else [])
    finally:
        if group is not None:
            group.kill()
            group.remove()


def wait_exit(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait until `proc` exits (True) or `timeout` seconds pass (False), waking the moment it exits: a pidfd polled
    once (Linux 5.3+), not `Popen.wait(timeout=)`, which sleeps in steps of up to 50 ms and so added 15-35 ms to
    every 0.3 s sandboxed test run (BENCHMARKS "Session 26"). Falls back to `Popen.wait` where there is no pidfd."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # no pidfd_open (older kernel or Python), or the process is already reaped
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + timeout
        while True:  # poll() may return early on a signal (EINTR is retried, with the time left)
            left = deadline - time.monotonic()
            if poller.poll(max(0, int(left * 1000) + 1)):
                proc.wait()
                return True
            if left <= 0:
                return False
    finally:
        os.close(fd)


def _kill_tree(proc: subprocess.Popen, group: cgroups.RunCgroup | None) -> None:
    # The process group catches the tree in rlimits mode; in bwrap mode killing bwrap kills its pid namespace
    # (--die-with-parent); the cgroup also catches whatever called setsid().
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if group is not None:
        group.kill()
