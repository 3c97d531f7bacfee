"""Ingest on a folder source and the folder store: incremental, idempotent, deduplicated, corrupt-tolerant."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from postgame.contract.arrow import to_record
from postgame.contract.synthetic import encode, sessions
from postgame.ingest import load_snapshot, run_ingest, snapshot_manifest
from postgame.ingest.catalog import quarantine_entries


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    path = tmp_path / "logs"
    (path / "agent-logs" / "dt=2026-11-29").mkdir(parents=True)
    return path


def put(logs: Path, name: str, data: bytes) -> Path:
    path = logs / "agent-logs" / "dt=2026-11-29" / name
    path.write_bytes(data)
    return path


def test_ingest_then_rerun_reads_nothing_then_a_new_object_is_read_alone(cfg, logs):
    put(logs, "part-0000.jsonl.gz", encode(sessions(300, seed=1), gzip=True))
    put(logs, "part-0001.jsonl", encode(sessions(200, seed=2)))
    put(logs, "_SUCCESS", b"")
    put(logs, "notes.txt", b"not a log")
    first = run_ingest(str(logs), cfg=cfg)
    assert (first.objects_read, first.objects_skipped, first.records_ingested) == (2, 2, 500)

    again = run_ingest(str(logs), cfg=cfg)
    assert again.snapshot_id is None and again.objects_read == 0 and again.records_ingested == 0
    assert again.objects_skipped == 4

    put(logs, "part-0002.jsonl.gz", encode(sessions(50, seed=3), gzip=True))
    third = run_ingest(str(logs), cfg=cfg)
    assert (third.objects_read, third.records_ingested, third.duplicates) == (1, 50, 0)
    manifest = snapshot_manifest(third.snapshot_id, cfg=cfg)
    assert [s.key for s in manifest.sources] == ["agent-logs/dt=2026-11-29/part-0002.jsonl.gz"]
    assert manifest.parent == first.snapshot_id and manifest.seq == 2
    assert load_snapshot("latest", cfg=cfg).num_rows == 50


def test_resent_lines_are_counted_not_stored_and_a_changed_resend_is_quarantined(cfg, logs):
    originals = list(sessions(100, seed=4))
    put(logs, "part-0000.jsonl", encode(originals))
    run_ingest(str(logs), cfg=cfg)
    changed = json.loads(json.dumps(originals[7]))
    changed["outcome"]["feedback"] = "accepted" if changed["outcome"]["feedback"] != "accepted" else "rejected"
    put(logs, "part-0000-resent.jsonl", encode(originals[:40] + [changed] + originals[:5]))
    summary = run_ingest(str(logs), cfg=cfg)
    assert (summary.records_ingested, summary.duplicates, summary.quarantined["schema"]) == (0, 45, 1)
    [(_, entry)] = list(quarantine_entries(cfg=cfg, reason="schema"))
    assert "already ingested with different content" in entry.detail and entry.line == 41


def test_corrupt_gzip_is_reported_not_marked_read_and_its_fixed_upload_completes_it(cfg, logs):
    records = list(sessions(3000, seed=5))
    good = encode(records, gzip=True)
    put(logs, "part-0000.jsonl.gz", good[: len(good) // 2])
    put(logs, "part-0001.jsonl", encode(sessions(10, seed=6)))
    broken = run_ingest(str(logs), cfg=cfg)
    [bad] = broken.corrupt_objects
    assert bad.key.endswith("part-0000.jsonl.gz") and "truncated" in bad.detail
    assert 0 < bad.records_kept < 3000 and broken.records_ingested == 10 + bad.records_kept
    assert broken.objects_read == 1

    put(logs, "part-0000.jsonl.gz", good)  # the producer re-uploads the whole object
    fixed = run_ingest(str(logs), cfg=cfg)
    assert fixed.objects_read == 1 and not fixed.corrupt_objects
    assert fixed.records_ingested == 3000 - bad.records_kept and fixed.duplicates == bad.records_kept
    ids = set()
    for snap_id in (broken.snapshot_id, fixed.snapshot_id):
        ids |= set(load_snapshot(snap_id, cfg=cfg, columns=["session_id"]).column("session_id").to_pylist())
    assert ids == {r["session_id"] for r in records} | {r["session_id"] for r in sessions(10, seed=6)}


def test_snapshot_rows_give_back_the_records_with_their_unknown_fields(cfg, logs):
    records = list(sessions(5, seed=7))
    records[0]["trace"] = {"id": "t-1", "spans": [1, 2]}
    records[1]["usage"]["cached_tokens"] = 12
    records[2]["messages"][0]["tool_call_id"] = "call-1"
    put(logs, "part-0000.jsonl", encode(records))
    summary = run_ingest(str(logs), cfg=cfg)
    table = load_snapshot(summary.snapshot_id, cfg=cfg)
    assert [to_record(row) for row in table.to_pylist()] == records
    assert table.column("_source_line").to_pylist() == [1, 2, 3, 4, 5]


def test_records_are_written_in_bounded_batches(cfg, logs):
    # guards: memory growing with the corpus instead of one batch
    cfg = cfg.model_copy(update={"ingest": cfg.ingest.model_copy(update={"batch_rows": 100})})
    put(logs, "part-0000.jsonl.gz", encode(sessions(1000, seed=8), gzip=True))
    summary = run_ingest(str(logs), cfg=cfg)
    path = Path(summary.snapshot_uri.removeprefix("file://"))
    assert pq.ParquetFile(path).metadata.num_row_groups == 10


def test_two_homes_never_mix_and_the_same_input_gives_the_same_snapshot_id(tmp_path, logs, cfg):
    # content addressing: the id depends on the content (data, quarantine, sources), not on time or home
    put(logs, "part-0000.jsonl", encode(sessions(30, seed=9)) + b"broken\n")
    first = run_ingest(str(logs), cfg=cfg)
    other_home = cfg.model_copy(update={"home": tmp_path / "other-home"})
    second = run_ingest(str(logs), cfg=other_home)  # its own state: reads everything again
    assert (second.objects_read, second.records_ingested) == (1, 30)
    assert first.snapshot_id == second.snapshot_id
    assert first.snapshot_uri != second.snapshot_uri
    assert str(tmp_path / "other-home") in second.snapshot_uri


@pytest.mark.parametrize("kind", ["serial", "thread"])  # line by line here, and objects through a mapper
def test_progress_tells_each_new_object_once_with_how_many_there_are(cfg, logs, kind):
    """`postgame ingest` shows "k/n objects read" while it reads: one tell per new object, none for skipped ones."""
    from postgame.settings.runner import RunnerSettings

    put(logs, "part-0000.jsonl", encode(sessions(5, seed=1)))
    put(logs, "part-0001.jsonl", encode(sessions(5, seed=2)))
    put(logs, "_SUCCESS", b"")
    told: list[tuple[str, int]] = []
    cfg = cfg.model_copy(update={"runner": RunnerSettings(kind=kind)})
    run_ingest(str(logs), cfg=cfg, progress=lambda text, done: told.append((text, done)))
    assert told == [("1/2 objects read", 1), ("2/2 objects read", 1), ("2 objects read; committing the snapshot", 0)]
