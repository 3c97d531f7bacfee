"""The cycle ledger: which snapshots a cycle has consumed, so that none is lost and none is trained on twice.

A snapshot is *pending* until a cycle records it: `trained` (after promotion decided on a model trained from it) or
`rejected` (its validation failed: it is kept for a person to inspect, never trained on). A cycle that fails between
ingest and promotion leaves its snapshot pending, and the next cycle picks it up even when no new log arrived.
Entries live in the object store next to the snapshots: `<ingest.state_prefix>ledger/<snapshot_id>.json`.
"""

from __future__ import annotations

import json
import time
from typing import Literal

from postgame.config import Config

Status = Literal["trained", "rejected"]


def _key(cfg: Config, snapshot_id: str) -> str:
    return f"{cfg.ingest.state_prefix}ledger/{snapshot_id}.json"


def record(cfg: Config, snapshot_ids: list[str], status: Status, detail: str = "") -> None:
    from postgame.runtime import store

    s = store(cfg)
    for snapshot_id in snapshot_ids:
        entry = {"snapshot_id": snapshot_id, "status": status, "detail": detail, "at": time.time()}
        s.put(_key(cfg, snapshot_id), json.dumps(entry, sort_keys=True).encode())


def status(cfg: Config, snapshot_id: str) -> Status | None:
    from postgame.runtime import store

    s = store(cfg)
    key = _key(cfg, snapshot_id)
    return json.loads(s.get(key))["status"] if s.exists(key) else None


def pending(cfg: Config) -> list[str]:
    """Committed snapshots no cycle has consumed yet, oldest first."""
    from postgame.ingest import list_snapshots
    from postgame.runtime import store

    done = {info.key.rsplit("/", 1)[-1].removesuffix(".json")
            for info in store(cfg).list(f"{cfg.ingest.state_prefix}ledger/")}
    return [m.snapshot_id for m in list_snapshots(cfg=cfg) if m.snapshot_id not in done]
