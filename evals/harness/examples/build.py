"""Turn the example base trees into git repositories whose commits match `instances.jsonl`.

    python -m evals.harness.examples.build DEST     # writes DEST/<owner>__<name> (bare repositories)

Commits are built with plumbing from the files alone (fixed author, dates and mode 100644; `__pycache__` and `.pyc`
skipped), so the same files always give the same commit ids.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from evals.harness.examples import INSTANCES_FILE, REPOS_DIR

_ENV = {
    "GIT_AUTHOR_NAME": "postgame",
    "GIT_AUTHOR_EMAIL": "examples@postgame.invalid",
    "GIT_COMMITTER_NAME": "postgame",
    "GIT_COMMITTER_EMAIL": "examples@postgame.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def _git(git_dir: Path, *args: str, stdin: str | None = None) -> str:
    r = subprocess.run(
        ["git", "--git-dir", str(git_dir), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **_ENV, "GIT_INDEX_FILE": str(git_dir / "build-index")},
        check=True,
    )
    return r.stdout.strip()


def _files(tree: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        out += [Path(dirpath, f) for f in sorted(filenames) if not f.endswith(".pyc")]
    return out


def build_repo(tree: Path, git_dir: Path) -> str:
    """A bare repository at `git_dir` with one commit holding `tree`'s files; returns the commit id."""
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(git_dir)], check=True, env={**os.environ, **_ENV})
    files = _files(tree)
    shas = _git(git_dir, "hash-object", "-w", "--no-filters", "--stdin-paths", stdin="\n".join(map(str, files))).split()
    index = "".join(f"100644 {sha}\t{p.relative_to(tree).as_posix()}\n" for sha, p in zip(shas, files))
    _git(git_dir, "update-index", "--add", "--index-info", stdin=index)
    commit = _git(git_dir, "commit-tree", _git(git_dir, "write-tree"), "-m", "base")
    _git(git_dir, "update-ref", "refs/heads/main", commit)
    (git_dir / "build-index").unlink()
    return commit


def build_repos(dest: str | Path, *, check: bool = True) -> dict[str, str]:
    """Build every example repository under `dest`; with `check`, fail if a commit differs from instances.jsonl."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    commits = {tree.name: build_repo(tree, dest / tree.name) for tree in sorted(REPOS_DIR.iterdir()) if tree.is_dir()}
    if check:
        for line in INSTANCES_FILE.read_text().splitlines():
            inst = json.loads(line)
            built = commits.get(inst["repo"].replace("/", "__"))
            if built != inst["base_commit"]:
                raise RuntimeError(
                    f"{inst['instance_id']}: built commit {built} != base_commit {inst['base_commit']}; "
                    "were the example files edited? regenerate instances.jsonl"
                )
    return commits


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m evals.harness.examples.build DEST")
    for name, commit in build_repos(sys.argv[1]).items():
        print(f"{name} {commit}")
