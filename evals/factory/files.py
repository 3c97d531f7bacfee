"""Files of a project as data: reading a seed, byte-identical `.tar.gz` snapshots, git-style diffs, git repositories.

Everything here is deterministic: the same files give the same tarball bytes (sorted entries, zero times and owners,
gzip without a name or date) and the same commit ids (fixed author and dates), so a build is reproducible from its
seed and a snapshot can be named by its sha256.
"""

from __future__ import annotations

import difflib
import gzip
import io
import subprocess
import tarfile
from pathlib import Path

IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".benchmarks", ".git", ".mypy_cache", ".ruff_cache"}

Files = dict[str, bytes]


def read_tree(root: Path) -> Files:
    """All files under `root` (posix relative paths → bytes), without caches, hidden files and byte code."""
    files: Files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if (
            not path.is_file()
            or any(p in IGNORED_PARTS or p.startswith(".") or p.endswith(".egg-info") for p in rel.parts)
            or path.suffix == ".pyc"
        ):
            continue
        files[rel.as_posix()] = path.read_bytes()
    return files


def make_targz(files: Files, top: str) -> bytes:
    """A gzipped tarball of `files` under one top folder `top` (the harness takes a single top folder as the root),
    whose bytes depend only on the paths and contents."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files):
            data = files[name]
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", fileobj=out, mode="wb", mtime=0, compresslevel=6) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def read_targz(data: bytes) -> Files:
    """The files of a snapshot, paths relative to its single top folder."""
    files: Files = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            if member.isfile() and (fh := tar.extractfile(member)) is not None:
                files[member.name] = fh.read()
    tops = {name.split("/", 1)[0] for name in files}
    if len(tops) == 1 and all("/" in name for name in files):
        files = {name.split("/", 1)[1]: data for name, data in files.items()}
    return files


def write_tree(files: Files, root: Path) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def diff_file(path: str, old: str | None, new: str | None) -> str:
    """A git-style unified diff (`a/` `b/` prefixes) turning `old` into `new`; None = the file does not exist."""
    if old == new:
        return ""
    old_lines = (old or "").splitlines(keepends=True)
    new_lines = (new or "").splitlines(keepends=True)
    header = [f"diff --git a/{path} b/{path}\n"]
    if old is None:
        header.append("new file mode 100644\n")
    elif new is None:
        header.append("deleted file mode 100644\n")
    body = list(
        difflib.unified_diff(
            old_lines,
            new_lines,
            "/dev/null" if old is None else f"a/{path}",
            "/dev/null" if new is None else f"b/{path}",
            n=3,
        )
    )
    out = []
    for line in body:
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\n") + "\n")
        elif not line.endswith("\n"):
            out.append(line + "\n\\ No newline at end of file\n")
        else:
            out.append(line)
    return "".join(header + out)


def diff_trees(old: Files, new: Files) -> str:
    """Diff of every file that differs between two trees, in path order."""
    parts = []
    for path in sorted(set(old) | set(new)):
        a = old[path].decode() if path in old else None
        b = new[path].decode() if path in new else None
        parts.append(diff_file(path, a, b))
    return "".join(parts)


# ---------------------------------------------------------------------------------------------------------------------
# Git repositories: one per seed project, a clean commit on `main` and one commit per instance on top of it.

_IDENT = "postgame-factory <factory@postgame.invalid> 0 +0000"


def _data(payload: bytes) -> bytes:
    return b"data %d\n" % len(payload) + payload + b"\n"


def build_git_repo(dest: Path, clean: Files, instances: dict[str, Files], message: str) -> tuple[str, dict[str, str]]:
    """Create a git repository at `dest`: `main` holds `clean`, and tag `<id>` points at a commit whose parent is the
    clean commit and whose tree is `instances[id]` (the whole tree). Returns (clean sha, {id: sha}).

    Commit ids depend only on the trees and messages (fixed author and dates), so rebuilding gives the same ids.
    """
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(dest)], check=True)
    stream = bytearray()
    stream += b"commit refs/heads/main\nmark :1\n"
    stream += f"author {_IDENT}\ncommitter {_IDENT}\n".encode() + _data(message.encode())
    for name in sorted(clean):
        stream += f"M 100644 inline {name}\n".encode() + _data(clean[name])
    ids = sorted(instances)
    for i, inst_id in enumerate(ids, start=2):
        tree = instances[inst_id]
        stream += f"commit refs/tags/{inst_id}\nmark :{i}\n".encode()
        stream += f"author {_IDENT}\ncommitter {_IDENT}\n".encode() + _data(f"{inst_id}\n".encode())
        stream += b"from :1\n"
        for name in sorted(set(clean) - set(tree)):
            stream += f"D {name}\n".encode()
        for name in sorted(tree):
            if clean.get(name) != tree[name]:
                stream += f"M 100644 inline {name}\n".encode() + _data(tree[name])
    marks = dest / ".git" / "factory-marks"
    subprocess.run(
        ["git", "-C", str(dest), "fast-import", "--quiet", f"--export-marks={marks}"],
        input=bytes(stream),
        check=True,
        capture_output=True,
    )
    shas = dict(line.split() for line in marks.read_text().split("\n") if line)
    marks.unlink()
    subprocess.run(["git", "-C", str(dest), "reset", "-q", "--hard", "main"], check=True)
    return shas[":1"], {inst_id: shas[f":{i}"] for i, inst_id in enumerate(ids, start=2)}
