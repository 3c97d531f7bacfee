"""Validate: the Great Expectations suite of the log contract + drift checks against the previous snapshot.

A critical failure raises `DataValidationError` and stops the cycle before training; warnings are recorded. The Data
Docs are linked from the Prefect run (artifact) and logged to the cycle's MLflow run.
"""

from __future__ import annotations

from prefect import task
from prefect.artifacts import create_markdown_artifact

from postgame.config import Config


@task(name="validate")  # no retries: bad data stays bad
def validate(cfg: Config, snapshot_id: str, run_id: str):
    import mlflow

    from postgame.runtime import tracking_uri
    from postgame.validate import summary_markdown, validate_snapshot

    report = validate_snapshot(snapshot_id, cfg=cfg, raise_on_critical=False)
    create_markdown_artifact(key="data-validation", markdown=summary_markdown(report),
                             description="Great Expectations results for this cycle's snapshot")
    mlflow.set_tracking_uri(tracking_uri(cfg))
    with mlflow.start_run(run_id=run_id):
        if report.docs_path:
            mlflow.log_artifacts(str(report.docs_path), artifact_path="data_docs")
        mlflow.log_metrics({"validate.critical_failures": len(report.critical_failures),
                            "validate.warnings": len(report.warnings)})
    report.raise_if_critical()
    return report
