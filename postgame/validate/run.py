"""The validate stage: a snapshot in, a ValidationReport out; critical failures stop the cycle before training.

    validate_snapshot(snapshot_id, cfg=cfg)     # -> ValidationReport, or raises DataValidationError
    postgame validate --snapshot ID [--json]

1. Load the snapshot and its manifest; find the previous snapshot to measure drift against (the latest earlier one
   with at least `validate.drift_min_records` records).
2. Run the contract's expectations (generated from `postgame.contract.spec`, all critical) on the sessions and
   messages tables, and the batch checks (bounds and severities from config) on a one-row frame of metrics.
3. Write Data Docs and the report (JSON) under home. Raise DataValidationError naming every failed critical
   expectation; warnings are only recorded.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from postgame.contract.gx import SESSIONS, contract_expectations
from postgame.errors import DataValidationError
from postgame.ingest import catalog
from postgame.ingest.snapshot import SnapshotManifest
from postgame.validate import frames, metrics
from postgame.validate.report import ValidationReport
from postgame.validate.suites import batch_expectations, batch_frame, run_suites

log = logging.getLogger(__name__)
BATCH = "batch"


def _baseline(manifest: SnapshotManifest, cfg) -> SnapshotManifest | None:
    earlier = [m for m in catalog.list_snapshots(cfg=cfg) if m.seq < manifest.seq]
    for candidate in reversed(earlier):
        if candidate.counts.records_ingested >= cfg.validate_.drift_min_records:
            return candidate
    return None


def run_validation(snapshot_id: str, *, cfg) -> ValidationReport:
    """Validate a snapshot and write Data Docs and the report; never raises on bad data (see validate_snapshot)."""
    settings = cfg.validate_
    manifest = catalog.snapshot_manifest(snapshot_id, cfg=cfg)
    table = catalog.load_snapshot(manifest.snapshot_id, cfg=cfg)
    current = metrics.batch_metrics(table, manifest)
    baseline = _baseline(manifest, cfg)
    previous = None
    if baseline is not None:
        previous = metrics.batch_metrics(catalog.load_snapshot(baseline.snapshot_id, cfg=cfg,
                                                               columns=["outcome", "usage"]), baseline)
        drift_note = f"vs snapshot {baseline.snapshot_id[:12]} ({baseline.counts.records_ingested} records)"
    else:
        drift_note = f"not measured: no earlier snapshot with at least {settings.drift_min_records} records"
    if previous is not None and current.records < settings.drift_min_records:
        drift_note = f"not measured: this snapshot has fewer than {settings.drift_min_records} records"
    checks = metrics.batch_checks(current, previous, settings)

    suites = contract_expectations()
    tables = {SESSIONS: frames.sessions_frame(table)}
    tables.update({name: frames.list_frame(table, name) for name in frames.list_fields()})
    suites[BATCH] = batch_expectations(checks)
    tables[BATCH] = batch_frame(checks)
    del table
    project = cfg.home / settings.docs_dir
    run = run_suites(tables, suites, project_dir=project, run_name=f"snapshot-{manifest.snapshot_id[:12]}")

    critical = [r for r in run.results if not r.success and r.severity == "critical"]
    warnings = [r for r in run.results if not r.success and r.severity != "critical"]
    report_path = project / "reports" / f"{manifest.snapshot_id}.json"
    report = ValidationReport(
        snapshot_id=manifest.snapshot_id, previous_snapshot_id=baseline.snapshot_id if baseline else None,
        drift_note=drift_note, passed=not critical, critical_failures=critical, warnings=warnings,
        results=run.results, metrics=current, previous_metrics=previous, docs_path=run.docs_index,
        docs_pages=run.docs_pages, report_path=str(report_path),
        validated_at=datetime.now(UTC).isoformat(timespec="seconds"))
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(report.model_dump_json(indent=2))
    log.info("validate %s: %d expectations, %d critical failures, %d warnings; Data Docs %s",
             manifest.snapshot_id[:12], len(run.results), len(critical), len(warnings), run.docs_index)
    return report


def raise_on_critical(report: ValidationReport) -> ValidationReport:
    """The gate: raise DataValidationError naming the failed critical expectations (report attached), else return
    the report. For callers that log the report first (Prefect artifact, MLflow) and then decide."""
    if not report.passed:
        names = report.failed_names
        raise DataValidationError(
            f"snapshot {report.snapshot_id[:12]} failed {len(names)} critical expectation(s): {', '.join(names)}; "
            f"see {report.docs_path}", failed=names, docs_uri=f"file://{report.docs_path}", report=report)
    return report


def validate_snapshot(snapshot_id: str, *, cfg) -> ValidationReport:
    """Validate a snapshot; raise DataValidationError naming the failed critical expectations (report attached)."""
    return raise_on_critical(run_validation(snapshot_id, cfg=cfg))
