"""Production-log ingestion: S3 or a folder of JSON Lines in, an immutable content-addressed snapshot out.

    run_ingest(source_uri, cfg=cfg) -> IngestSummary          (postgame ingest --source URI [--json])
    load_snapshot(snapshot_id, cfg=cfg) -> pyarrow.Table
    snapshot_manifest(snapshot_id, cfg=cfg) -> SnapshotManifest
    is_transient_s3_error(exc) -> bool                        (retry condition of the Prefect task)

The names are resolved on first use: `postgame.config` imports `postgame.settings.ingest`, and loading the config
must not import pyarrow.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "run_ingest": "postgame.ingest.pipeline",
    "ingest": "postgame.ingest.pipeline",
    "IngestSummary": "postgame.ingest.pipeline",
    "load_snapshot": "postgame.ingest.catalog",
    "snapshot_manifest": "postgame.ingest.catalog",
    "supersession": "postgame.ingest.catalog",
    "Supersession": "postgame.ingest.snapshot",
    "list_snapshots": "postgame.ingest.catalog",
    "quarantine_entries": "postgame.ingest.catalog",
    "quarantine_entry": "postgame.ingest.catalog",
    "SnapshotManifest": "postgame.ingest.snapshot",
    "QuarantineEntry": "postgame.ingest.snapshot",
    "is_transient_s3_error": "postgame.ingest.errors",
    "StoreError": "postgame.ingest.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'postgame.ingest' has no attribute {name!r}")
