"""The validate stage: a snapshot in, a ValidationReport out; critical failures stop the cycle before training.

    validate_snapshot(snapshot_id, cfg=cfg)     # -> ValidationReport, or raises DataValidationError
    postgame validate --snapshot ID [--json]

1. Stream the snapshot's metrics (four numeric columns and the tool calls' arguments) and those of the previous
   snapshot to measure drift against (the latest earlier one with at least `validate.drift_min_records` records).
2. Run the contract's expectations (generated from `postgame.contract.spec`, all critical) on the sessions,
   messages and tool_calls tables batch by batch (`validate.batch_rows` rows of Parquet row groups at a time: memory holds one
   batch, whatever the snapshot's size); uniqueness runs on the whole column (the only column read whole). Then the
   batch checks (bounds and severities from config) on a one-row frame of metrics.
3. Write Data Docs and the report (JSON) under home. Raise DataValidationError naming every failed critical
   expectation; warnings are only recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from postgame.contract.gx import SESSIONS, contract_expectations, import_gx
from postgame.errors import DataValidationError
from postgame.ingest import catalog
from postgame.ingest.snapshot import SnapshotManifest
from postgame.validate import frames, metrics
from postgame.validate.report import ValidationReport
from postgame.validate.suites import batch_expectations, batch_frame, run_suites

log = logging.getLogger(__name__)
BATCH = "batch"
WHOLE = f"{SESSIONS}__whole"


def _baseline(manifest: SnapshotManifest, cfg) -> SnapshotManifest | None:
    earlier = [m for m in catalog.list_snapshots(cfg=cfg) if m.seq < manifest.seq]
    for candidate in reversed(earlier):
        if candidate.counts.records_ingested >= cfg.validate_.drift_min_records:
            return candidate
    return None


def _row_groups(path: Path, batch_rows: int, columns: list[str] | None = None) -> Iterator:
    """The snapshot as tables of whole row groups, about `batch_rows` rows each (at least one, maybe empty)."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    group: list[int] = []
    rows = 0
    for i in range(file.num_row_groups):
        group.append(i)
        rows += file.metadata.row_group(i).num_rows
        if rows >= batch_rows:
            yield file.read_row_groups(group, columns=columns)
            group, rows = [], 0
    if group or not file.num_row_groups:
        yield (
            file.read_row_groups(group, columns=columns)
            if group
            else file.schema_arrow.empty_table().select(
                list(dict.fromkeys(c.split(".")[0] for c in columns or file.schema_arrow.names))
            )
        )


def _metrics(manifest: SnapshotManifest, cfg) -> metrics.BatchMetrics:
    import pyarrow.parquet as pq

    acc = metrics.MetricsAccumulator(manifest)
    path = catalog.snapshot_file(manifest.snapshot_id, cfg=cfg)
    columns = metrics.metric_columns(pq.ParquetFile(path).schema_arrow.names)
    for table in _row_groups(path, cfg.validate_.batch_rows, columns):
        acc.add(table)
    return acc.result()


def _is_whole(expectation) -> bool:
    """Expectations that compare rows with each other (uniqueness) see the whole column at once."""
    return expectation.expectation_type == "expect_column_values_to_be_unique"


def _batches(path: Path, batch_rows: int, whole_columns: list[str], checks) -> Iterator[dict]:
    """The frames of each batch; the last also holds the whole columns and the one-row frame of batch metrics."""
    import pyarrow.parquet as pq

    for table in _row_groups(path, batch_rows):
        out = {SESSIONS: frames.sessions_frame(table)}
        out.update(frames.list_frames(table))
        yield out
        del out, table
    tops = sorted({column.split(".")[0] for column in whole_columns})
    whole = frames.sessions_frame(pq.read_table(path, columns=tops))[whole_columns]
    yield {WHOLE: whole, BATCH: batch_frame(checks)}


def run_validation(snapshot_id: str, *, cfg, progress: Callable[[str, int], None] | None = None) -> ValidationReport:
    """Validate a snapshot and write Data Docs and the report; never raises on bad data (see validate_snapshot).
    `progress(text, done)` is told each phase (metrics, Great Expectations, each batch validated, the Data Docs):
    how many batches there are is not known up front."""
    tell = progress or (lambda text, done: None)
    settings = cfg.validate_
    manifest = catalog.snapshot_manifest(snapshot_id, cfg=cfg)
    tell("batch metrics", 0)
    current = _metrics(manifest, cfg)
    baseline = _baseline(manifest, cfg)
    previous = None
    if baseline is not None:
        previous = _metrics(baseline, cfg)
        drift_note = f"vs snapshot {baseline.snapshot_id[:12]} ({baseline.counts.records_ingested} records)"
    else:
        drift_note = f"not measured: no earlier snapshot with at least {settings.drift_min_records} records"
    if previous is not None and current.records < settings.drift_min_records:
        drift_note = f"not measured: this snapshot has fewer than {settings.drift_min_records} records"
    checks = metrics.batch_checks(current, previous, settings)

    tell("loading Great Expectations", 0)
    import_gx()
    suites = contract_expectations()
    whole = [exp for exp in suites[SESSIONS] if _is_whole(exp)]
    suites[SESSIONS] = [exp for exp in suites[SESSIONS] if not _is_whole(exp)]
    suites[WHOLE] = whole
    suites[BATCH] = batch_expectations(checks)
    project = cfg.home / settings.docs_dir
    path = catalog.snapshot_file(manifest.snapshot_id, cfg=cfg)
    batches = _batches(path, settings.batch_rows, [exp.column for exp in whole], checks)
    run = run_suites(
        batches, suites, project_dir=project, run_name=f"snapshot-{manifest.snapshot_id[:12]}", progress=progress
    )

    critical = [r for r in run.results if not r.success and r.severity == "critical"]
    warnings = [r for r in run.results if not r.success and r.severity != "critical"]
    report_path = project / "reports" / f"{manifest.snapshot_id}.json"
    report = ValidationReport(
        snapshot_id=manifest.snapshot_id,
        previous_snapshot_id=baseline.snapshot_id if baseline else None,
        drift_note=drift_note,
        passed=not critical,
        critical_failures=critical,
        warnings=warnings,
        results=run.results,
        metrics=current,
        previous_metrics=previous,
        docs_path=run.docs_index,
        docs_pages=run.docs_pages,
        report_path=str(report_path),
        validated_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(report.model_dump_json(indent=2))
    log.info(
        "validate %s: %d expectations, %d critical failures, %d warnings; Data Docs %s",
        manifest.snapshot_id[:12],
        len(run.results),
        len(critical),
        len(warnings),
        run.docs_index,
    )
    return report


def raise_on_critical(report: ValidationReport) -> ValidationReport:
    """The gate: raise DataValidationError naming the failed critical expectations (report attached), else return
    the report. For callers that log the report first (Prefect artifact, MLflow) and then decide."""
    if not report.passed:
        names = report.failed_names
        raise DataValidationError(
            f"snapshot {report.snapshot_id[:12]} failed {len(names)} critical expectation(s): {', '.join(names)}; "
            f"see {report.docs_path}",
            failed=names,
            docs_uri=f"file://{report.docs_path}",
            report=report,
        )
    return report


def validate_snapshot(snapshot_id: str, *, cfg, progress: Callable[[str, int], None] | None = None) -> ValidationReport:
    """Validate a snapshot; raise DataValidationError naming the failed critical expectations (report attached).
    `progress` as in `run_validation`."""
    return raise_on_critical(run_validation(snapshot_id, cfg=cfg, progress=progress))
