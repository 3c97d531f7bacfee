"""Validate: the contract's expectations stop a bad snapshot; batch drift is a warning or a stop, as configured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from postgame import runtime
from postgame.contract.synthetic import encode, sessions
from postgame.errors import DataValidationError
from postgame.ingest import run_ingest
from postgame.ingest import snapshot as snap
from postgame.validate import report_markdown, run_validation, validate_snapshot


def ingest_records(cfg, tmp_path: Path, name: str, records: list[dict]) -> str:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "part-0000.jsonl").write_bytes(encode(records))
    return run_ingest(str(folder), cfg=cfg).snapshot_id


def commit_unchecked_snapshot(cfg, rows: list[dict], row_group: int = 1000) -> str:
    """A snapshot written without ingest's per-line checks (an older or buggy writer): validate must catch it."""
    store = runtime.store(cfg)
    prefix = cfg.ingest.state_prefix
    writer = snap.SnapshotWriter(cfg.home / "tmp", row_group, 1 << 20)
    for i, row in enumerate(rows):
        writer.add_record(
            dict(row, extra=None, _source_key="legacy.jsonl", _source_line=i + 1), row["session_id"], i, 100
        )
    counts = snap.Counts(objects_read=1, lines=len(rows), records_ingested=len(rows))
    manifest = snap.commit(
        writer,
        store,
        prefix,
        parent=snap.load_state(store, prefix).head,
        sources=[snap.SourceObject(key="legacy.jsonl", etag="e1", size=1)],
        corrupt=[],
        counts=counts,
        source_uri="legacy://",
    )
    writer.discard()
    return manifest.snapshot_id


def test_contract_breaking_snapshot_stops_the_cycle_naming_each_failed_expectation(cfg):
    rows = [json.loads(json.dumps(r)) for r in sessions(50, seed=21)]
    rows[0]["outcome"]["status"] = "won"  # unknown enum
    rows[1]["session_id"] = rows[2]["session_id"]  # not unique
    rows[3]["messages"][0]["role"] = "robot"  # unknown enum in the messages table
    rows[4]["usage"]["prompt_tokens"] = -3  # out of range
    rows[5]["timestamp"] = "yesterday"  # not RFC 3339
    with pytest.raises(DataValidationError) as failure:
        validate_snapshot(commit_unchecked_snapshot(cfg, rows), cfg=cfg)
    assert set(failure.value.failed) == {
        "sessions.expect_column_values_to_be_in_set(outcome.status)",
        "sessions.expect_column_values_to_be_unique(session_id)",
        "messages.expect_column_values_to_be_in_set(role)",
        "sessions.expect_column_values_to_be_between(usage.prompt_tokens)",
        "sessions.expect_column_values_to_match_regex(timestamp)",
    }
    assert "outcome.status" in str(failure.value)
    report = failure.value.report
    assert Path(report.docs_path).exists() and Path(report.report_path).exists()
    assert all(Path(page.removeprefix("file://")).exists() for page in report.docs_pages)
    status = next(r for r in report.critical_failures if r.column == "outcome.status")
    assert status.unexpected_count == 1 and status.examples == ["won"]
    assert failure.value.docs_uri.startswith("file://")


def test_drift_is_a_warning_by_default_and_a_stop_when_configured(cfg, tmp_path):
    baseline = ingest_records(cfg, tmp_path, "day1", list(sessions(200, seed=22)))
    first = validate_snapshot(baseline, cfg=cfg)
    assert first.passed and not first.warnings and "not measured" in first.drift_note

    drifted = list(sessions(200, seed=23))
    for record in drifted:  # the new model resolves nothing and talks ten times as much
        record["outcome"]["status"] = "unresolved"
        record["usage"]["completion_tokens"] *= 10
    changed = ingest_records(cfg, tmp_path, "day2", drifted)
    report = validate_snapshot(changed, cfg=cfg)  # warnings only: the cycle goes on
    assert report.passed and report.previous_snapshot_id == baseline
    assert {w.column for w in report.warnings} == {"resolved_share", "mean_completion_tokens"}
    markdown = report_markdown(report)
    assert "PASSED" in markdown and "resolved_share" in markdown and report.docs_path in markdown

    strict = cfg.validate_.model_copy(
        update={"resolved_share_drift_max": 0.1, "resolved_share_drift_severity": "critical"}
    )
    with pytest.raises(DataValidationError) as failure:
        validate_snapshot(changed, cfg=cfg.model_copy(update={"validate_": strict}))
    assert failure.value.failed == ["batch.expect_column_values_to_be_between(resolved_share)"]


def test_an_empty_snapshot_is_critical(cfg, tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "part-0000.jsonl").write_bytes(b"not json\n" * 5)
    summary = run_ingest(str(folder), cfg=cfg)
    report = run_validation(summary.snapshot_id, cfg=cfg)  # reports without raising
    assert not report.passed
    assert {r.column for r in report.critical_failures} == {"records", "quarantine_rate"}


def test_batches_are_validated_one_at_a_time_yet_every_record_and_uniqueness_across_batches_count(cfg):
    """Validation reads a few row groups at a time (bounded memory): a defect in the last batch, a duplicate id split
    across two batches and the unexpected counts of several batches must all still be seen."""
    rows = [json.loads(json.dumps(r)) for r in sessions(60, seed=24)]
    rows[3]["outcome"]["status"] = "won"  # first batch
    rows[57]["outcome"]["status"] = "lost"  # last batch
    rows[55]["session_id"] = rows[1]["session_id"]  # the same id in the first and the last batch
    rows[58]["messages"][0]["role"] = "robot"  # the messages of the last batch
    small = cfg.model_copy(update={"validate_": cfg.validate_.model_copy(update={"batch_rows": 10})})
    snapshot_id = commit_unchecked_snapshot(small, rows, row_group=5)
    with pytest.raises(DataValidationError) as failure:
        validate_snapshot(snapshot_id, cfg=small)
    assert set(failure.value.failed) == {
        "sessions.expect_column_values_to_be_in_set(outcome.status)",
        "sessions.expect_column_values_to_be_unique(session_id)",
        "messages.expect_column_values_to_be_in_set(role)",
    }
    report = failure.value.report
    status = next(r for r in report.critical_failures if r.column == "outcome.status")
    assert status.unexpected_count == 2 and sorted(status.examples) == ["lost", "won"]
    assert report.metrics.records == 60
    assert len(report.docs_pages) > 6  # a page per batch and table
