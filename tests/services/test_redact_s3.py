"""`postgame redact` against the real SeaweedFS S3 server: a snapshot holding a planted token in clear, in a bucket,
is replaced and its objects and the local cached copy of its data are deleted; the old id reads the successor."""

from __future__ import annotations

import json
import uuid

import pytest

from postgame import ledger, runtime
from postgame.ingest import snapshot as snap
from postgame.ingest.audit import audit_snapshot
from postgame.ingest.catalog import list_snapshots, load_snapshot
from postgame.ingest.remediate import remediate
from tests.support import PLANTED_TOKEN, make_config, plant_old_snapshot

pytestmark = pytest.mark.services


def test_a_snapshot_in_a_bucket_is_replaced_and_gone(home, tmp_path, seaweed):
    cfg = make_config(
        home,
        store={
            "uri": f"s3://state-{uuid.uuid4().hex[:8]}",
            "endpoint_url": seaweed.endpoint_url,
            "access_key_id": runtime.EMBEDDED_S3_KEY,
            "secret_access_key": runtime.EMBEDDED_S3_SECRET,
        },
    )
    old = plant_old_snapshot(cfg, tmp_path / "logs", sessions=8, seed=81, at=5, text=f"export GH_TOKEN={PLANTED_TOKEN}")
    cached = (
        cfg.home / "cache" / "snapshots" / snap.resolve(runtime.store(cfg), cfg.ingest.state_prefix, old).data.sha256
    )
    assert PLANTED_TOKEN in json.dumps(load_snapshot(old, cfg=cfg).to_pylist()) and cached.exists()

    [done] = remediate(cfg, None).replacements
    store = runtime.store(cfg)
    assert done.done == "replaced" and list(store.list(snap.snapshot_prefix(cfg.ingest.state_prefix, old))) == []
    assert not cached.exists()
    assert [m.snapshot_id for m in list_snapshots(cfg=cfg)] == [done.successor]
    assert audit_snapshot(done.successor, cfg=cfg) == [] and ledger.status(cfg, done.successor) == "trained"
    assert PLANTED_TOKEN not in json.dumps(load_snapshot(old, cfg=cfg).to_pylist())
    assert remediate(cfg, None).nothing_to_do
