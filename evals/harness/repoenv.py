"""Per-repository environments: an instance's `env_spec` -> a venv built once, sandboxed, cached, mounted read-only.

    env_dir = ensure_env(instance, base, settings, EnvCache(local_dir, store), notes)

The build (bubblewrap, like a test run; the host's network only when `eval.env_build_network` is on, else
`pip --no-index`): `python -m venv /opt/postgame-env` from the harness's own Python, `pip install <pip_packages>`,
then the `install` command in a fresh copy of the checkout at base, mounted at /testbed (so an editable install points
at /testbed, where every test run has its patched copy), and last a `.pth` line putting the harness's site-packages
after the environment's own (pytest and the result plugin's needs always import). Test runs mount the venv read-only
at the same path and run its python; they never have network.

The key is the sha256 of the canonical JSON of: the spec, the harness's Python (version, machine, base interpreter
path: a venv is bound to the interpreter it was made from), the content digest of every local path the spec names,
and, only when the spec has an `install` command, the checkout it ran in (repository + base commit, or the
environment snapshot's digest). Without an install command nothing of the checkout enters the venv, so every instance
and repository with the same spec shares one build.

Cached in two places: `<eval.cache_dir>/envs/<key>/` (unpacked, ready to mount; a per-process temporary folder
when no cache_dir), and, when a store is given, the object store as a content-addressed `<prefix>/<sha256>.tar.gz`
with the index `<prefix>/by-key/<key>.json` (fetched and hash-checked on a machine that lacks the local copy).
A failed build is an infrastructure error (`EnvBuildError`: instance id, failing command, log tail), never the
model's: it happens before the model's patch is even applied. Per-repository environments need the bwrap sandbox.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import io
import json
import os
import platform
import re
import shutil
import sys
import sysconfig
import tarfile
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from evals.harness import sandbox
from evals.harness.constants import SANDBOX_BUILD, SANDBOX_ENV, SANDBOX_TOOLS
from evals.harness.environment import fresh_copy
from evals.harness.instance import EnvSpec, Instance
from postgame.settings.harness import HarnessSettings
from postgame.store import ObjectStore

_BUILD_TMP = f"{SANDBOX_BUILD}/tmp"
_BUILD_SRC = f"{SANDBOX_BUILD}/src"
# pip's own settings and proxies reach a build only when it has network (they may name the index it must use).
_PIP_ENV = re.compile(r"^(PIP_[A-Z_]+|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY)$")


class EnvBuildError(Exception):
    """A per-repository environment could not be built or fetched: the instance is graded `error`, not unresolved."""


@dataclass
class EnvCache:
    """Where built environments are kept: a local folder (None = a temporary one for this process) and, optionally,
    the object store. `built` and `fetched` list the keys this cache built or fetched from the store."""

    local_dir: Path | None = None
    store: ObjectStore | None = None
    store_prefix: str = "eval/envs"
    built: list[str] = field(default_factory=list)
    fetched: list[str] = field(default_factory=list)
    _tmp: Path | None = field(default=None, repr=False)

    def root(self) -> Path:
        if self.local_dir is not None:
            self.local_dir.mkdir(parents=True, exist_ok=True)
            return self.local_dir
        with _lock:
            if self._tmp is None:
                self._tmp = Path(tempfile.mkdtemp(prefix="postgame-envs-"))
                atexit.register(shutil.rmtree, self._tmp, True)
        return self._tmp


_lock = threading.Lock()
_defaults: dict[Path | None, EnvCache] = {}


def default_cache(settings: HarnessSettings) -> EnvCache:
    """The process-wide cache for `settings.cache_dir` (no store): what runs use when not handed one."""
    with _lock:
        if settings.cache_dir not in _defaults:
            local = Path(settings.cache_dir) / "envs" if settings.cache_dir else None
            _defaults[settings.cache_dir] = EnvCache(local, store_prefix=settings.env_store_prefix)
        return _defaults[settings.cache_dir]


def python_id() -> dict[str, str]:
    base = getattr(sys, "_base_executable", sys.executable)
    return {"version": platform.python_version(), "machine": platform.machine(), "interpreter": base}


def _split_local(arg: str) -> tuple[str, Path] | None:
    """(option prefix, path) when a pip argument names an existing absolute local path, else None."""
    prefix, _, rest = arg.partition("=") if arg.startswith("-") else ("", "", arg)
    prefix = prefix + "=" if prefix else ""
    path = Path(rest)
    return (prefix, path) if rest.startswith("/") and path.exists() else None


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for p in files:
        h.update(p.relative_to(path).as_posix().encode() if p != path else b"")
        h.update(b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def env_key(spec: EnvSpec, checkout: str) -> str:
    """The environment's cache key (see the module docstring). `checkout` names the base the install ran in."""
    local = {arg: _digest(hit[1]) for arg in spec.pip_packages if (hit := _split_local(arg))}
    payload: dict[str, object] = {"spec": spec.model_dump(mode="json"), "python": python_id(), "local": local}
    if spec.install:
        payload["checkout"] = checkout
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def check_python(spec: EnvSpec) -> None:
    have = platform.python_version()
    if spec.python and not (have == spec.python or have.startswith(spec.python + ".")):
        raise EnvBuildError(
            f"env_spec.python {spec.python!r} does not match the harness's Python {have}: "
            "run the harness with that Python"
        )


@contextmanager
def _file_lock(path: Path):
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure_env(instance: Instance, base: Path, settings: HarnessSettings, cache: EnvCache, notes: list[str]) -> Path:
    """The local folder of the instance's environment (a venv for /opt/postgame-env): cached, fetched or built."""
    spec = instance.env_spec
    assert spec is not None
    check_python(spec)
    key = env_key(spec, f"{instance.repo}@{base.name}")
    root = cache.root()
    final = root / key
    if final.is_dir():
        notes.append(f"environment {key[:12]}: cached")
        return final
    with _file_lock(root / f"{key}.lock"):
        if final.is_dir():
            notes.append(f"environment {key[:12]}: cached (built meanwhile)")
            return final
        if cache.store is not None and _fetch(cache, key, final, notes):
            cache.fetched.append(key)
            return final
        start = time.monotonic()
        _build(instance, spec, key, base, final, settings, notes)
        cache.built.append(key)
        notes.append(f"environment {key[:12]}: built in {time.monotonic() - start:.1f}s")
        if cache.store is not None:
            _publish(cache, key, final, instance, spec, notes)
    return final


def _build(
    instance: Instance, spec: EnvSpec, key: str, base: Path, final: Path, settings: HarnessSettings, notes: list[str]
) -> None:
    scratch = Path(tempfile.mkdtemp(prefix=f".build-{key[:12]}-", dir=final.parent))
    try:
        venv, tmp, src = scratch / "venv", scratch / "tmp", scratch / "src"
        for d in (venv, tmp, src):
            d.mkdir()
        testbed = fresh_copy(base, scratch / "testbed") if spec.install else scratch / "testbed"
        testbed.mkdir(exist_ok=True)
        binds: list[sandbox.Bind] = [(str(venv), SANDBOX_ENV, True), (str(tmp), _BUILD_TMP, True)]
        pip_args: list[str] = []
        for n, arg in enumerate(spec.pip_packages):
            hit = _split_local(arg)
            if hit is None:
                pip_args.append(arg)
            elif hit[1].is_dir():  # copied: pip builds a project folder in place
                shutil.copytree(hit[1], src / str(n), symlinks=True)
                binds.append((str(src / str(n)), f"{_BUILD_SRC}/{n}", True))
                pip_args.append(f"{hit[0]}{_BUILD_SRC}/{n}")
            else:
                binds.append((str(hit[1]), str(hit[1]), False))
                pip_args.append(arg)
        python = f"{SANDBOX_ENV}/bin/python"
        steps = [
            {"argv": [getattr(sys, "_base_executable", sys.executable), "-m", "venv", SANDBOX_ENV], "cwd": _BUILD_TMP}
        ]
        if pip_args:
            pip = [python, "-m", "pip", "install", "--no-input", "--disable-pip-version-check", "--no-cache-dir"]
            steps.append(
                {"argv": pip + ([] if settings.env_build_network else ["--no-index"]) + pip_args, "cwd": _BUILD_TMP}
            )
        if spec.install:
            steps.append({"argv": ["/bin/sh", "-c", spec.install], "cwd": "/testbed"})
        build_settings = settings.model_copy(
            update={
                "timeout_s": settings.env_build_timeout_s,
                "cpu_time_s": 0,
                "file_size_mb": max(settings.file_size_mb, 4096),
                "memory_mb": max(settings.memory_mb, 4096),
            }
        )
        plan = {
            "limits": sandbox.rlimits(build_settings, with_nproc=True),
            "steps": steps,
            "venv": SANDBOX_ENV,
            "pth": sysconfig.get_paths()["purelib"],
        }
        argv = [
            getattr(sys, "_base_executable", sys.executable),
            "-I",
            "-B",
            f"{SANDBOX_TOOLS}/pg_envbuild.py",
            "--plan",
            json.dumps(plan),
        ]
        extra_env = {"TMPDIR": _BUILD_TMP, "HOME": _BUILD_TMP, "VIRTUAL_ENV": SANDBOX_ENV}
        if settings.env_build_network:
            extra_env.update({k: v for k, v in os.environ.items() if _PIP_ENV.match(k)})
        log_path = scratch / "build.log"
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            result = sandbox.run(
                argv,
                mode="bwrap",
                copy_dir=testbed,
                home_dir=tmp,
                stdout_fd=fd,
                pass_fds=(),
                settings=build_settings,
                binds=tuple(binds),
                network=settings.env_build_network,
                bin_dir=f"{SANDBOX_ENV}/bin",
                extra_env=extra_env,
            )
        finally:
            os.close(fd)
        log = log_path.read_text(errors="replace")
        if result.timed_out or result.returncode != 0 or not (venv / "bin" / "python").exists():
            failed = re.findall(r"^pg-envbuild: FAILED step \d+ \(exit (-?\d+)\): (.*)$", log, re.MULTILINE)
            if result.timed_out:
                what = f"timed out after {settings.env_build_timeout_s:.0f}s (eval.env_build_timeout_s)"
            elif failed:
                what = f"`{failed[-1][1]}` exited {failed[-1][0]}"
            else:
                what = f"the build sandbox exited {result.returncode}"
            tail = "\n".join(log.strip().splitlines()[-25:])
            raise EnvBuildError(
                f"environment build for instance {instance.instance_id!r} failed: {what} "
                f"(network {'on' if settings.env_build_network else 'off: eval.env_build_network'});"
                f" log tail:\n{tail}"
            )
        notes.append(f"environment {key[:12]}: build log tail:\n" + "\n".join(log.strip().splitlines()[-5:]))
        os.rename(venv, final)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def pack(venv: Path) -> bytes:
    """The venv as a .tar.gz (sorted entries, file mtimes kept so compiled bytecode stays valid)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
        for path in [venv, *sorted(venv.rglob("*"))]:
            tar.add(path, arcname=path.relative_to(venv).as_posix() or ".", recursive=False)
    return buf.getvalue()


def _publish(cache: EnvCache, key: str, final: Path, instance: Instance, spec: EnvSpec, notes: list[str]) -> None:
    assert cache.store is not None
    try:
        data = pack(final)
        sha = hashlib.sha256(data).hexdigest()
        cache.store.put(f"{cache.store_prefix}/{sha}.tar.gz", data)
        index = {
            "key": key,
            "sha256": sha,
            "spec": spec.model_dump(mode="json"),
            "python": python_id(),
            "first_instance": instance.instance_id,
        }
        cache.store.put(f"{cache.store_prefix}/by-key/{key}.json", json.dumps(index, indent=1).encode())
        notes.append(f"environment {key[:12]}: stored as {cache.store.url(f'{cache.store_prefix}/{sha}.tar.gz')}")
    except Exception as exc:  # noqa: BLE001 - the local copy serves this run; a store outage must not fail it
        notes.append(f"environment {key[:12]}: not stored ({type(exc).__name__}: {exc})")


def _fetch(cache: EnvCache, key: str, final: Path, notes: list[str]) -> bool:
    assert cache.store is not None
    index_key = f"{cache.store_prefix}/by-key/{key}.json"
    try:
        if not cache.store.exists(index_key):
            return False
        sha = json.loads(cache.store.get(index_key))["sha256"]
        data = cache.store.get(f"{cache.store_prefix}/{sha}.tar.gz")
    except Exception as exc:  # noqa: BLE001 - unreachable store: build instead
        notes.append(f"environment {key[:12]}: store unreadable ({type(exc).__name__}: {exc}); building")
        return False
    if hashlib.sha256(data).hexdigest() != sha:
        notes.append(f"environment {key[:12]}: stored copy does not match its sha256 {sha}; building")
        return False
    scratch = Path(tempfile.mkdtemp(prefix=f".fetch-{key[:12]}-", dir=final.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(scratch / "venv", filter="tar")  # our own, hash-checked; its python links are absolute
        os.rename(scratch / "venv", final)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    notes.append(f"environment {key[:12]}: fetched from the store ({sha[:12]})")
    return True
