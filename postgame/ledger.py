"""The cycle ledger: which snapshots a cycle has consumed, so that none is lost and none is trained on twice.

A snapshot is *pending* until a cycle records it: `trained` (after promotion decided on a model trained from it) or
`rejected` (its validation failed: it is kept for a person to inspect, never trained on). A cycle that fails between
ingest and promotion leaves its snapshot pending, and the next cycle picks it up even when no new log arrived.
Entries live in the object store next to the snapshots: `<ingest.state_prefix>ledger/<snapshot_id>.json`.

A cycle *claims* the pending snapshots it works on (`claim`), so that two cycles never train on the same snapshot:
each writes `claims/<snapshot_id>/<owner>.json`, waits `CLAIM_SETTLE_S`, and the earliest live claim holds the
snapshot. A claim is live while its process runs (same host) or for `CLAIM_TTL_S` (another host); recording the
snapshot releases it, so a cycle killed mid-way leaves a claim its re-run takes over.

A snapshot replaced by its re-redacted successor (`postgame redact`) keeps its entry; the successor gets a copy of it
(`inherit`: a snapshot trained on stays trained on, under its new id), and the replacement itself is recorded once in
`ledger/superseded/<snapshot_id>.json` (`postgame.ingest.snapshot.Supersession`).
"""

from __future__ import annotations

import json
import os
import socket
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
    release(cfg, snapshot_ids)


CLAIM_SETTLE_S = 1.0  # a claim written later than this after ours cannot carry an earlier time than ours
CLAIM_TTL_S = 6 * 3600.0  # a claim from another host counts this long (its process cannot be asked)


def _claims_prefix(cfg: Config, snapshot_id: str) -> str:
    return f"{cfg.ingest.state_prefix}claims/{snapshot_id}/"


def _live(entry: dict, owner: str) -> bool:
    from postgame.runtime import process_alive

    if entry.get("owner") == owner:
        return True
    if entry.get("host") == socket.gethostname():
        # the same process running another (earlier, finished) cycle does not hold it; another live process does
        return entry.get("pid") != os.getpid() and process_alive(int(entry.get("pid", 0)) or -1)
    return time.time() - float(entry.get("at", 0)) < CLAIM_TTL_S


def _claims(cfg: Config, snapshot_id: str, owner: str) -> list[dict]:
    from postgame.runtime import store

    s = store(cfg)
    entries = []
    for info in s.list(_claims_prefix(cfg, snapshot_id)):
        try:
            entries.append(json.loads(s.get(info.key)))
        except (OSError, ValueError, KeyError):
            continue  # released while we listed
    return [e for e in entries if _live(e, owner)]


def claim(cfg: Config, snapshot_ids: list[str], owner: str) -> list[str]:
    """Claim `snapshot_ids` for the cycle `owner` (its flow run id); returns those it holds, in order. The others are
    held by another live cycle and are left to it."""
    from postgame.runtime import store

    if not snapshot_ids:
        return []
    s = store(cfg)
    entry = {"owner": owner, "pid": os.getpid(), "host": socket.gethostname(), "at": time.time()}
    for snapshot_id in snapshot_ids:
        s.put(f"{_claims_prefix(cfg, snapshot_id)}{owner}.json", json.dumps(entry, sort_keys=True).encode())
    time.sleep(CLAIM_SETTLE_S)
    held = []
    for snapshot_id in snapshot_ids:
        first = min(_claims(cfg, snapshot_id, owner), key=lambda e: (float(e["at"]), e["owner"]))
        if first["owner"] == owner:
            held.append(snapshot_id)
        else:
            s.delete(f"{_claims_prefix(cfg, snapshot_id)}{owner}.json")
    return held


def release(cfg: Config, snapshot_ids: list[str]) -> None:
    """Drop every claim on `snapshot_ids` (they are recorded: nobody needs to hold them any more)."""
    from postgame.runtime import store

    s = store(cfg)
    for snapshot_id in snapshot_ids:
        for info in list(s.list(_claims_prefix(cfg, snapshot_id))):
            s.delete(info.key)


def inherit(cfg: Config, snapshot_id: str, successor: str) -> None:
    """Give `successor` (the re-redacted copy of `snapshot_id`) the entry of `snapshot_id`, if it has one: the same
    status, detail and time, and `inherited_from`. Re-running it writes the same bytes."""
    from postgame.runtime import store

    s = store(cfg)
    key = _key(cfg, snapshot_id)
    if not s.exists(key):
        return  # pending: the successor is pending too
    entry = {**json.loads(s.get(key)), "snapshot_id": successor, "inherited_from": snapshot_id}
    s.put(_key(cfg, successor), json.dumps(entry, sort_keys=True).encode())


def claimed(cfg: Config, snapshot_id: str) -> bool:
    """True while a live cycle holds a claim on `snapshot_id`."""
    return bool(_claims(cfg, snapshot_id, owner=""))


def status(cfg: Config, snapshot_id: str) -> Status | None:
    from postgame.runtime import store

    s = store(cfg)
    key = _key(cfg, snapshot_id)
    return json.loads(s.get(key))["status"] if s.exists(key) else None


def pending(cfg: Config) -> list[str]:
    """Committed snapshots no cycle has consumed yet, oldest first."""
    from postgame.ingest import list_snapshots
    from postgame.runtime import store

    prefix = f"{cfg.ingest.state_prefix}ledger/"
    done = {
        info.key.removeprefix(prefix).removesuffix(".json")
        for info in store(cfg).list(prefix)
        if "/" not in info.key.removeprefix(prefix)  # not the records of `superseded/`
    }
    return [m.snapshot_id for m in list_snapshots(cfg=cfg) if m.snapshot_id not in done]


def recently_trained(cfg: Config, n: int) -> list[str]:
    """The newest `n` snapshots (by ingest order) that a cycle has trained on, oldest first; [] for n = 0."""
    from postgame.ingest import list_snapshots

    found: list[str] = []
    for manifest in reversed(list_snapshots(cfg=cfg)):  # newest first: stop after n (one ledger read each)
        if len(found) >= n:
            break
        if status(cfg, manifest.snapshot_id) == "trained":
            found.append(manifest.snapshot_id)
    return found[::-1]
