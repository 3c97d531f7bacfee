"""The repository at base, exported with no git history, and fresh copies of it for each run.

Where the base comes from: `instance.environment` (a folder, or a `.tar.gz` whose single top folder, if any, is the
root) or else `<repos_dir>/<owner>__<name>`, a git repository, bare or with a work tree, read at `base_commit`.
The export is a plain tree: no `.git`, so code under test cannot read future commits (SWE-bench #465). It is made
with `read-tree` + `checkout-index` into a private index rather than `git archive`, because `.gitattributes`
`export-ignore` / `export-subst` would make an archive differ from a checkout.

Exports are cached, keyed by repository name and commit (or environment path and mtime), under
`settings.cache_dir/bases` or a per-process temporary folder; each run copies one (never hard links: the run
writes to its copy).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from evals.harness.instance import Instance


class EnvironmentMissing(Exception):
    """The instance's repository, commit or environment cannot be found: the instance is graded `error`."""


@dataclass(frozen=True)
class GitSource:
    """Where the base came from when it is a git repository (3-way patch application needs its objects)."""

    git_dir: Path
    commit: str


def git(
    *args: str,
    git_dir: Path | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    cmd = ["git", "-c", "safe.directory=*", "-c", "core.autocrlf=false"]
    if git_dir is not None:
        cmd += ["--git-dir", str(git_dir)]
    full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", **(env or {})}
    return subprocess.run(
        cmd + list(args), capture_output=True, text=True, env=full_env, cwd=cwd, check=check, stdin=subprocess.DEVNULL
    )


def git_dir_of(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").exists() else repo


_lock = threading.Lock()
_tmp_root: Path | None = None


def _bases_root(cache_dir: Path | None) -> Path:
    global _tmp_root
    if cache_dir is not None:
        root = Path(cache_dir) / "bases"
        root.mkdir(parents=True, exist_ok=True)
        return root
    with _lock:
        if _tmp_root is None:
            _tmp_root = Path(tempfile.mkdtemp(prefix="postgame-bases-"))
            atexit.register(shutil.rmtree, _tmp_root, True)
    return _tmp_root


def resolve_source(instance: Instance, repos_dir: Path | None) -> tuple[str, GitSource | None, Path | None]:
    """(cache key, git source or None, environment path or None). Raises EnvironmentMissing with the reason."""
    if instance.environment:
        env = Path(instance.environment)
        if not env.exists():
            raise EnvironmentMissing(f"environment {str(env)!r} does not exist")
        st = env.stat()
        digest = hashlib.sha256(f"{env.resolve()}|{st.st_mtime_ns}|{st.st_size}".encode()).hexdigest()[:16]
        return f"{instance.repo_dirname}-env-{digest}", None, env
    if repos_dir is None:
        raise EnvironmentMissing("no --repos folder given and the instance has no environment")
    repo = Path(repos_dir) / instance.repo_dirname
    if not repo.is_dir():
        raise EnvironmentMissing(f"repository {instance.repo!r} not found: {repo} does not exist")
    if not instance.base_commit:
        raise EnvironmentMissing(f"instance {instance.instance_id!r} has no base_commit")
    gd = git_dir_of(repo)
    r = git("rev-parse", "--verify", "--quiet", f"{instance.base_commit}^{{commit}}", git_dir=gd, check=False)
    if r.returncode != 0:
        raise EnvironmentMissing(f"base_commit {instance.base_commit} not found in {repo}")
    commit = r.stdout.strip()
    return f"{instance.repo_dirname}-{commit}", GitSource(gd, commit), None


def _strip_git(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        for name in list(dirnames):
            if name == ".git":
                shutil.rmtree(Path(dirpath) / name)
                dirnames.remove(name)
        if ".git" in filenames:
            (Path(dirpath) / ".git").unlink()


def _export(dest: Path, source: GitSource | None, env: Path | None, scratch: Path) -> None:
    if source is not None:
        genv = {"GIT_INDEX_FILE": str(scratch / "index")}
        git("read-tree", source.commit, git_dir=source.git_dir, env=genv)
        dest.mkdir()
        git("--work-tree", str(dest), "checkout-index", "-a", "-f", git_dir=source.git_dir, env=genv)
        return
    assert env is not None
    if env.is_dir():
        shutil.copytree(env, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        return
    unpacked = scratch / "unpacked"
    unpacked.mkdir()
    with tarfile.open(env) as tar:
        tar.extractall(unpacked, filter="data")
    entries = list(unpacked.iterdir())
    top = entries[0] if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() else unpacked
    os.rename(top, dest)
    _strip_git(dest)


def base_tree(
    instance: Instance, repos_dir: Path | None, cache_dir: Path | None = None
) -> tuple[Path, GitSource | None]:
    """The cached read-only reference export of the instance's base (made on first use), and its git source."""
    key, source, env = resolve_source(instance, repos_dir)
    root = _bases_root(cache_dir)
    final = root / key
    if final.is_dir():
        return final, source
    scratch = root / f".tmp-{key}-{uuid.uuid4().hex[:8]}"
    scratch.mkdir()
    try:
        _export(scratch / "tree", source, env, scratch)
        try:
            os.rename(scratch / "tree", final)
        except OSError:
            if not final.is_dir():  # a concurrent export of the same base won: use it
                raise
    except subprocess.CalledProcessError as exc:
        raise EnvironmentMissing(
            f"cannot export {instance.repo}@{instance.base_commit}: {exc.stderr.strip()}"
        ) from None
    except (tarfile.TarError, shutil.Error) as exc:
        raise EnvironmentMissing(f"cannot unpack environment {instance.environment}: {exc}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return final, source


def fresh_copy(base: Path, dest: Path) -> Path:
    shutil.copytree(base, dest, symlinks=True)
    return dest
