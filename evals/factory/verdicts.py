"""The factory's test verdicts for the default task world, shipped with the code like the base checkpoint.

    seed_cache(cfg.home / "cache" / "factory" / "validations")   # what `build_tasks` does (factory.shipped_verdicts)
    python scripts/pack_verdicts.py                             # rebuild the archive: every validation run here

Validating the default world's ~830 mutants runs each one's suite twice in the sandbox: 7-13 minutes on 2 cores,
most of a 30-minute demo. Each run's outcome is already cached by content (`evals.factory.verify._cached_runs`: the
mutant's snapshot, the suite, the harness code and its settings), so a verdict made on another machine is reused
exactly where nothing that could change it changed; anything else (another seed, an edited seed project, a changed
harness) misses the cache and runs for real. `verdicts.tar.xz` holds the cache of a from-scratch build of the default
world (`MANIFEST.json` says which build, with which harness code); seeding copies its entries into a home's cache and
never overwrites one that is there. The build says how many of its verdicts came from the cache.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import os
import re
import tarfile
from pathlib import Path

SHIPPED = Path(__file__).resolve().parent / "verdicts.tar.xz"
MANIFEST = "MANIFEST.json"
# what a verdict cache holds: <2 hex>/<sha256>.json per harness run set, coverage/<sha256>.json per seed project
_ENTRY = re.compile(r"(?:[0-9a-f]{2}|coverage)/[0-9a-f]{64}\.json")


def seed_cache(validations: Path, archive: Path = SHIPPED) -> int:
    """Copy the archive's verdicts into the cache folder `validations`, keeping every entry already there; returns
    how many were added. Only cache entries are read from the archive (no other path is written but the marker
    `.seeded-<archive sha256>`, which makes the next call with the same archive return 0 without decompressing it)."""
    if not archive.exists():
        return 0
    marker = validations / f".seeded-{hashlib.sha256(archive.read_bytes()).hexdigest()}"
    if marker.exists():
        return 0
    added = 0
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar:
            if not member.isfile() or not _ENTRY.fullmatch(member.name):
                continue
            dest = validations / member.name
            if dest.exists():
                continue
            data = tar.extractfile(member)
            if data is None:
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(data.read())
            tmp.replace(dest)
            added += 1
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
    return added


def shipped_manifest(archive: Path = SHIPPED) -> dict:
    """The archive's MANIFEST.json: the build it was packed from and the harness code it was made with."""
    with tarfile.open(archive, "r:xz") as tar:
        data = tar.extractfile(MANIFEST)
        return json.loads(data.read()) if data else {}


def pack(validations: Path, archive: Path, manifest: dict) -> int:
    """Write every cache entry under `validations` and `manifest` to `archive`, byte for byte the same for the same
    entries (sorted names, no times or owners); returns the number of entries."""
    names = sorted(p.relative_to(validations).as_posix() for p in validations.rglob("*.json"))
    names = [n for n in names if _ENTRY.fullmatch(n)]
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        files = [(MANIFEST, json.dumps({**manifest, "entries": len(names)}, indent=2, sort_keys=True).encode())]
        files += [(n, (validations / n).read_bytes()) for n in names]
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    tmp = archive.with_suffix(".tmp")
    tmp.write_bytes(lzma.compress(raw.getvalue(), preset=9))
    tmp.replace(archive)
    return len(names)
