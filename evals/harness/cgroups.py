"""A pids (and memory) cgroup per test run, where this process may create one.

Why: root ignores RLIMIT_NPROC, also inside a user namespace that maps to host root, so as root only a pids cgroup
contains a fork bomb (tested on these machines; `../shared/ANCHORS.md`). A memory cgroup caps the whole run, which
per-process RLIMIT_AS cannot (N processes x the limit). Supported: cgroup v1 `pids`/`memory` hierarchies we can
write to, and cgroup v2 where our own cgroup already delegates the controllers (`cgroup.subtree_control`).
Nothing is created at import; `available()` probes once per process.
"""

from __future__ import annotations

import functools
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class _Parent:
    controller: str  # "pids" | "memory"
    path: Path
    v2: bool


def _mounts() -> list[tuple[str, str, set[str]]]:
    out = []
    try:
        for line in Path("/proc/self/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                out.append((parts[1], parts[2], set(parts[3].split(","))))
    except OSError:
        pass
    return out


def _own_paths() -> dict[str, str]:
    """controller ("" for v2) -> our cgroup path, from /proc/self/cgroup."""
    out = {}
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                out[c] = path
    except (OSError, ValueError):
        pass
    return out


def _writable_parent(parent: Path) -> bool:
    probe = parent / f"postgame-probe-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
        probe.rmdir()
        return True
    except OSError:
        return False


def _sweep(parent: Path, older_than_s: float = 600.0) -> None:
    """Remove run cgroups left empty by harness processes that were killed before their clean-up ran. rmdir only
    succeeds on an empty cgroup, and the age keeps away from one another process has just created."""
    now = time.time()
    for child in parent.glob("postgame-*"):
        try:
            if now - child.stat().st_mtime > older_than_s:
                child.rmdir()
        except OSError:
            pass


@functools.cache
def available() -> tuple[_Parent, ...]:
    """The controllers we can use, probed once per process (empty when none)."""
    own = _own_paths()
    found: dict[str, _Parent] = {}
    for mountpoint, fstype, options in _mounts():
        if fstype == "cgroup":
            for controller in ("pids", "memory"):
                if controller in options and controller not in found and controller in own:
                    parent = Path(mountpoint) / own[controller].lstrip("/")
                    if _writable_parent(parent):
                        found[controller] = _Parent(controller, parent, v2=False)
        elif "" in own:
            parent = Path(mountpoint) / own[""].lstrip("/")
            try:
                delegated = set((parent / "cgroup.subtree_control").read_text().split())
            except OSError:
                continue
            for controller in ("pids", "memory"):
                if controller in delegated and controller not in found and _writable_parent(parent):
                    found[controller] = _Parent(controller, parent, v2=True)
    for found_parent in found.values():
        _sweep(found_parent.path)
    return tuple(found.values())


class RunCgroup:
    """One run's cgroups. `procs_files` are what the launching shell writes its pid into before exec."""

    def __init__(self, max_pids: int, memory_bytes: int):
        self.dirs: list[Path] = []
        name = f"postgame-{uuid.uuid4().hex[:12]}"
        try:
            for parent in available():
                d = parent.path / name
                d.mkdir()
                self.dirs.append(d)
                if parent.controller == "pids":
                    (d / "pids.max").write_text(str(max_pids))
                elif parent.v2:
                    (d / "memory.max").write_text(str(memory_bytes))
                    if (d / "memory.swap.max").exists():
                        (d / "memory.swap.max").write_text("0")
                else:
                    (d / "memory.limit_in_bytes").write_text(str(memory_bytes))
        except OSError:
            self.remove()
            raise

    @property
    def controllers(self) -> list[str]:
        return [p.controller for p in available() if any(d.parent == p.path for d in self.dirs)]

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def kill(self) -> None:
        """SIGKILL everything in the run's cgroups, however it was started (setsid escapes included)."""
        for d in self.dirs:
            if (d / "cgroup.kill").exists():
                try:
                    (d / "cgroup.kill").write_text("1")
                except OSError:
                    pass
        for _ in range(200):
            pids = self._pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.005)

    def _pids(self) -> set[int]:
        pids: set[int] = set()
        for d in self.dirs:
            try:
                pids.update(int(p) for p in (d / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return pids

    def remove(self) -> None:
        for d in self.dirs:
            for _ in range(100):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
        self.dirs = []
