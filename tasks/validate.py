"""Validate: the Great Expectations suite of the log contract + drift checks against the previous snapshot.

A critical failure raises `DataValidationError` and stops the cycle before training; warnings are recorded. The Data
Docs are linked from the Prefect run (artifact) and logged to the cycle's MLflow run — before the gate decides, so a
failed cycle still shows what failed.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.artifacts import create_markdown_artifact

from postgame.config import Config
from tasks.resume import resumable_without
from tasks.retry import TRANSIENT_RETRIES


@task(name="validate", **resumable_without("run_id"), **TRANSIENT_RETRIES)  # bad data is never retried
def validate(cfg: Config, snapshot_ids: list[str], run_id: str) -> list[str]:
    """Validate each pending snapshot; one that fails is marked `rejected` in the ledger and stops the cycle."""
    import mlflow

    from postgame import ledger
    from postgame.runtime import resolve
    from postgame.validate import raise_on_critical, report_markdown, run_validation

    resolve(cfg)  # points MLflow at the stack
    warnings: list[str] = []
    for snapshot_id in snapshot_ids:
        report = run_validation(snapshot_id, cfg=cfg)
        create_markdown_artifact(
            key="data-validation",
            markdown=report_markdown(report),
            description=f"Great Expectations results for snapshot {snapshot_id[:12]}",
        )
        with mlflow.start_run(run_id=run_id):
            docs = Path(report.docs_path).parent
            if docs.is_dir():
                mlflow.log_artifacts(str(docs), artifact_path=f"data_docs/{snapshot_id[:12]}")
            mlflow.log_artifact(report.report_path, artifact_path=f"validation/{snapshot_id[:12]}")
            mlflow.log_metrics(
                {"validate.critical_failures": len(report.critical_failures), "validate.warnings": len(report.warnings)}
            )
        if not report.passed:
            ledger.record(cfg, [snapshot_id], "rejected", ", ".join(report.failed_names))
            raise_on_critical(report)  # DataValidationError naming the failed expectations
        warnings += [f"{snapshot_id[:12]}: {w.name}" for w in report.warnings]
    return warnings
