"""Ingest against the real SeaweedFS S3 server of the local stack: logs in one bucket, postgame's state in another."""

from __future__ import annotations

import uuid

import pytest
from pydantic import SecretStr

from postgame import runtime
from postgame.contract.synthetic import encode, sessions
from postgame.ingest import is_transient_s3_error, load_snapshot, run_ingest
from postgame.ingest.errors import StoreError

pytestmark = pytest.mark.services


@pytest.fixture
def s3cfg(cfg, seaweed):
    """A config whose store is a fresh bucket on the test server (credentials: the stack's embedded ones)."""
    store = cfg.store.model_copy(
        update={
            "uri": f"s3://state-{uuid.uuid4().hex[:8]}",
            "endpoint_url": seaweed.endpoint_url,
            "access_key_id": SecretStr(runtime.EMBEDDED_S3_KEY),
            "secret_access_key": SecretStr(runtime.EMBEDDED_S3_SECRET),
        }
    )
    return cfg.model_copy(update={"store": store})


@pytest.fixture
def logs(seaweed):
    bucket = f"logs-{uuid.uuid4().hex[:8]}"
    return bucket, seaweed.store(bucket)


def test_ingest_rerun_and_a_new_object(s3cfg, logs):
    bucket, store = logs
    store.put("agent-logs/dt=2026-11-28/part-0000.jsonl.gz", encode(sessions(150, seed=61), gzip=True))
    store.put("agent-logs/dt=2026-11-28/part-0001.jsonl", encode(sessions(50, seed=62)) + b"oops\n")
    store.put("agent-logs/dt=2026-11-28/_SUCCESS", b"")
    source = f"s3://{bucket}/agent-logs/"

    first = run_ingest(source, cfg=s3cfg)
    assert (first.objects_read, first.objects_skipped, first.records_ingested) == (2, 1, 200)
    assert first.quarantined["parse"] == 1 and first.snapshot_uri.startswith(s3cfg.store.uri)

    again = run_ingest(source, cfg=s3cfg)
    assert (again.snapshot_id, again.objects_read, again.records_ingested) == (None, 0, 0)

    store.put("agent-logs/dt=2026-11-29/part-0000.jsonl.gz", encode(sessions(30, seed=63), gzip=True))
    third = run_ingest(source, cfg=s3cfg)
    assert (third.objects_read, third.records_ingested, third.duplicates) == (1, 30, 0)
    assert load_snapshot(third.snapshot_id, cfg=s3cfg).num_rows == 30


def test_server_stopped_mid_run_then_rerun_loses_and_duplicates_nothing(s3cfg, logs, seaweed, monkeypatch):
    bucket, store = logs
    expected = set()
    for i in range(5):
        records = list(sessions(40, seed=70 + i))
        expected |= {r["session_id"] for r in records}
        store.put(f"agent-logs/part-{i:04d}.jsonl.gz", encode(records, gzip=True))
    source_uri = f"s3://{bucket}/agent-logs/"
    real_store = runtime.store
    opened = []

    class DyingSource:
        """The log bucket; the server goes down while the third object is being opened."""

        def __init__(self, inner):
            self.inner, self.uri = inner, inner.uri

        def list(self, prefix=""):
            return self.inner.list(prefix)

        def open(self, key):
            opened.append(key)
            if len(opened) == 3:
                seaweed.stop()
            return self.inner.open(key)

    def store_with_dying_source(cfg, uri=None):
        found = real_store(cfg, uri)
        return DyingSource(found) if uri == f"s3://{bucket}" else found

    monkeypatch.setattr(runtime, "store", store_with_dying_source)
    try:
        with pytest.raises(StoreError) as failure:
            run_ingest(source_uri, cfg=s3cfg)
    finally:
        seaweed.start()
    monkeypatch.setattr(runtime, "store", real_store)
    assert is_transient_s3_error(failure.value)  # a Prefect retry would run it again
    assert len(str(failure.value).splitlines()) == 1
    assert store.get("agent-logs/part-0000.jsonl.gz")  # `up` returns once the store serves objects again

    after = run_ingest(source_uri, cfg=s3cfg)
    assert (after.objects_read, after.records_ingested, after.duplicates) == (5, 200, 0)
    ids = load_snapshot(after.snapshot_id, cfg=s3cfg, columns=["session_id"]).column("session_id").to_pylist()
    assert len(ids) == len(set(ids)) and set(ids) == expected
    assert run_ingest(source_uri, cfg=s3cfg).objects_read == 0
