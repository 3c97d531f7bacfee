"""Reading what ingest committed, by snapshot id: data, manifests, quarantine. For validate, curate and people.

load_snapshot("3fa4c1…", cfg=cfg)          # -> pyarrow.Table (a unique id prefix or `latest` work too)
snapshot_manifest("latest", cfg=cfg)       # -> SnapshotManifest
supersession("3fa4c1…", cfg=cfg)           # -> Supersession | None (replaced by a re-redacted successor)
quarantine_entries(cfg=cfg, reason="schema")
"""

from __future__ import annotations

from collections.abc import Iterator

from postgame.errors import PostgameError
from postgame.ingest import snapshot as snap
from postgame.ingest.errors import store_errors


def _store(cfg):
    from postgame import runtime

    return runtime.store(cfg)


def snapshot_manifest(snapshot_id: str, *, cfg) -> snap.SnapshotManifest:
    """The manifest of a committed snapshot: a full id, a unique prefix (6+ characters) or `latest`."""
    if not snapshot_id:
        raise PostgameError("no snapshot id (an ingest that read nothing new makes no snapshot: nothing to do)")
    store = _store(cfg)
    with store_errors(f"reading snapshot {snapshot_id} from {store.uri}"):
        return snap.resolve(store, cfg.ingest.state_prefix, snapshot_id)


def list_snapshots(*, cfg) -> list[snap.SnapshotManifest]:
    """Every committed snapshot, oldest first."""
    store = _store(cfg)
    with store_errors(f"listing snapshots in {store.uri}"):
        return snap.manifests(store, cfg.ingest.state_prefix)


def supersession(snapshot_id: str, *, cfg) -> snap.Supersession | None:
    """The ledger's record of the replacement of `snapshot_id` (a full id), or None when it was not replaced."""
    store = _store(cfg)
    key = snap.supersession_key(cfg.ingest.state_prefix, snapshot_id)
    with store_errors(f"reading the ledger in {store.uri}"):
        return snap.Supersession.model_validate_json(store.get(key)) if store.exists(key) else None


def snapshot_file(snapshot_id: str, *, cfg):
    """A local path of the snapshot's Parquet file (the store's own file, or a checked copy in <home>/cache), to be
    read row group by row group (`pyarrow.parquet.ParquetFile`)."""
    store = _store(cfg)
    manifest = snapshot_manifest(snapshot_id, cfg=cfg)
    with store_errors(f"reading snapshot {manifest.snapshot_id} from {store.uri}"):
        return snap.local_path(store, manifest.data.key, cfg.home / "cache" / "snapshots", manifest.data.sha256)


def load_snapshot(snapshot_id: str, *, cfg, columns: list[str] | None = None):
    """The records of a snapshot as a pyarrow.Table (contract columns, `extra`, lineage). `to_record(row)` turns a
    row back into the ingested record. From S3 the file is downloaded once into <home>/cache and checked."""
    import pyarrow.parquet as pq

    store = _store(cfg)
    manifest = snapshot_manifest(snapshot_id, cfg=cfg)
    with store_errors(f"reading snapshot {manifest.snapshot_id} from {store.uri}"):
        path = snap.local_path(store, manifest.data.key, cfg.home / "cache" / "snapshots", manifest.data.sha256)
        return pq.read_table(path, columns=columns)


def entry_name(manifest: snap.SnapshotManifest, entry: snap.QuarantineEntry) -> str:
    return f"{manifest.snapshot_id[:12]}:{entry.index}"


def quarantine_entries(
    *, cfg, snapshot_id: str | None = None, reason: str | None = None
) -> Iterator[tuple[snap.SnapshotManifest, snap.QuarantineEntry]]:
    """Quarantined lines of one snapshot or of all, oldest first, optionally of one reason."""
    store = _store(cfg)
    chosen = [snapshot_manifest(snapshot_id, cfg=cfg)] if snapshot_id else list_snapshots(cfg=cfg)
    with store_errors(f"reading the quarantine in {store.uri}"):
        for manifest in chosen:
            for entry in snap.read_quarantine(store, manifest):
                if reason is None or entry.reason == reason:
                    yield manifest, entry


def quarantine_entry(name: str, *, cfg) -> tuple[snap.SnapshotManifest, snap.QuarantineEntry]:
    """One quarantined line by its name `<snapshot id prefix>:<index>` (as `postgame quarantine ls` prints it)."""
    snapshot_id, _, index = name.partition(":")
    if not index.isdigit():
        raise PostgameError(f"quarantine entry {name!r}: expected <snapshot id prefix>:<index>, e.g. 3fa4c1d2e5b6:0")
    for manifest, entry in quarantine_entries(cfg=cfg, snapshot_id=snapshot_id):
        if entry.index == int(index):
            return manifest, entry
    raise PostgameError(f"quarantine entry {name!r} not found")
