"""Checkpoints a SIGKILL cannot corrupt, and the manifest that says where the data order stands.

A checkpoint is written whole into `<root>/.staging/checkpoint-N`, every file fsynced, the manifest written last, then
renamed to `<root>/checkpoint-N` (one `rename`, atomic on a POSIX file system) and the folder fsynced. So a folder
named `checkpoint-N` is complete by construction; a kill mid-save leaves only `.staging`, which the next run deletes.
NeMo RL lost ~30% of prompts across resumes with non-atomic checkpoints (its PR #3599): the manifest here names the
step, the position in the data order (examples consumed) and the ids each step trained on, and a resumed run is
checked against it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypedDict

MANIFEST = "postgame_checkpoint.json"
STAGING = ".staging"
_NAME = re.compile(r"^checkpoint-(\d+)$")


class CheckpointError(RuntimeError):
    """A checkpoint that does not belong to this run (other data order), or a data order that was not kept."""


class UsageRecord(TypedDict, total=False):
    """`models.train.Usage` as a manifest keeps it (a manifest written before usage was recorded has none)."""

    wall_s: float
    cpu_s: float
    gpu_s: float
    tokens_generated: int
    tokens_trained: int


@dataclass(frozen=True)
class Manifest:
    step: int  # optimizer steps done
    examples_consumed: int  # position in the data order (rows of the plan trained on)
    plan_sha256: str  # which data order (sha256 of the plan's example ids)
    seen: list[list[str]]  # the example ids of each step, in order
    usage: UsageRecord = field(default_factory=UsageRecord)  # compute spent up to this checkpoint

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(root: Path) -> None:
    """fsync every file and folder under root (folders after their entries)."""
    for dirpath, _dirs, files in os.walk(root, topdown=False):
        for name in files:
            _fsync(Path(dirpath) / name)
        _fsync(Path(dirpath))


def publish(staged: Path, final: Path, manifest: Manifest | None = None) -> Path:
    """Make the folder `staged` appear as `final` in one rename, after its contents (and the manifest) are on disk."""
    if manifest is not None:
        (staged / MANIFEST).write_text(manifest.to_json())
    fsync_tree(staged)
    final.parent.mkdir(parents=True, exist_ok=True)
    old = None
    if final.exists():  # a re-save of the same step: keep the complete old one until the new one is in place
        old = final.with_name(f"{final.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.rename(final, old)
    os.rename(staged, final)
    _fsync(final.parent)
    if staged.parent.name == STAGING and not any(staged.parent.iterdir()):
        staged.parent.rmdir()
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return final


def staging_dir(root: Path) -> Path:
    """A clean staging folder under root (what a killed save left there is deleted)."""
    path = root / STAGING
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def complete(root: Path) -> list[tuple[int, Path]]:
    """The complete checkpoints under root, oldest first."""
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir() if (m := _NAME.match(p.name)) and (p / MANIFEST).exists()]
    return sorted(found)


def latest(root: Path) -> Path | None:
    done = complete(root)
    return done[-1][1] if done else None


def read_manifest(checkpoint: Path) -> Manifest:
    return Manifest(**json.loads((checkpoint / MANIFEST).read_text()))


def prune(root: Path, keep: int) -> None:
    """Delete all but the newest `keep` complete checkpoints."""
    for _step, path in complete(root)[:-keep]:
        shutil.rmtree(path, ignore_errors=True)
