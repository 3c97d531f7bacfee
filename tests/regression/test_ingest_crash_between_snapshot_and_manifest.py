"""A crash between uploading a snapshot's files and writing its manifest must neither lose nor duplicate records:
the manifest is the commit point, so the re-run reads the same objects again and commits them once."""

from __future__ import annotations

import pytest

from postgame.contract.synthetic import encode, sessions
from postgame.ingest import snapshot as snap
from postgame.ingest.pipeline import ingest
from postgame.store import LocalStore


class Crash(Exception):
    pass


class CrashingStore(LocalStore):
    """The state store, dying at a chosen point of the commit."""

    def __init__(self, root, *, before_manifest: bool):
        super().__init__(root)
        self.before_manifest = before_manifest

    def put(self, key, data):
        if key.endswith("manifest.json") and self.before_manifest:
            raise Crash("killed before the manifest")
        info = super().put(key, data)
        if key.endswith("manifest.json"):
            raise Crash("killed right after the manifest")
        return info


def run(cfg, logs, state):
    return ingest(
        LocalStore(logs), "", state=state, settings=cfg.ingest, workdir=cfg.home / "tmp", source_uri=str(logs)
    )


@pytest.fixture
def logs(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "part-0000.jsonl").write_bytes(encode(sessions(120, seed=31)))
    (folder / "part-0001.jsonl.gz").write_bytes(encode(sessions(80, seed=32), gzip=True))
    return folder


def test_crash_before_the_manifest_then_rerun_commits_everything_once(cfg, logs):
    root = cfg.home / "store"
    with pytest.raises(Crash):
        run(cfg, logs, CrashingStore(root, before_manifest=True))
    assert any(root.rglob("data.parquet")) and snap.manifests(LocalStore(root), cfg.ingest.state_prefix) == []

    summary = run(cfg, logs, LocalStore(root))
    assert (summary.objects_read, summary.records_ingested, summary.duplicates) == (2, 200, 0)
    [manifest] = snap.manifests(LocalStore(root), cfg.ingest.state_prefix)
    assert manifest.data.rows == 200
    assert run(cfg, logs, LocalStore(root)).objects_read == 0


def test_crash_after_the_manifest_then_rerun_reads_nothing(cfg, logs):
    root = cfg.home / "store"
    with pytest.raises(Crash):
        run(cfg, logs, CrashingStore(root, before_manifest=False))
    summary = run(cfg, logs, LocalStore(root))
    assert summary.snapshot_id is None and summary.objects_read == 0 and summary.records_ingested == 0
    [manifest] = snap.manifests(LocalStore(root), cfg.ingest.state_prefix)
    assert manifest.counts.records_ingested == 200
