"""Report: what the cycle cost and what it gained (`postgame.report`), published to the Prefect UI and MLflow."""

from __future__ import annotations

import time

from prefect import task
from prefect.artifacts import create_markdown_artifact

from postgame.config import Config
from postgame.report import CycleReport, CycleStart, build_report, costs, cpu_seconds
from tasks.retry import TRANSIENT_RETRIES


@task(name="open-cycle-run", **TRANSIENT_RETRIES)
def open_cycle_run(cfg: Config, flow_run_id: str) -> CycleStart:
    """The MLflow run every stage of this cycle logs into."""
    import mlflow

    from postgame.runtime import resolve

    resolve(cfg)  # points MLflow at the stack
    experiment = mlflow.set_experiment(cfg.tracking.experiment)
    run = mlflow.MlflowClient().create_run(experiment.experiment_id, run_name=f"cycle-{flow_run_id[:8]}",
                                           tags={"prefect.flow_run_id": flow_run_id})
    return CycleStart(run_id=run.info.run_id, experiment_id=experiment.experiment_id, started_at=time.time(),
                      cpu_seconds_at_start=cpu_seconds())


def _publish(cfg: Config, start: CycleStart, result: CycleReport) -> CycleReport:
    import mlflow

    from postgame.runtime import resolve

    create_markdown_artifact(key="cycle-report", markdown="```\n" + result.summary() + "\n```",
                             description="What this cycle cost and what it gained")
    resolve(cfg)  # points MLflow at the stack
    with mlflow.start_run(run_id=start.run_id):
        mlflow.log_metrics({"cycle.seconds": result.seconds, "cycle.cpu_seconds": result.cpu_seconds,
                            "cycle.cost_usd": result.cost_usd, "cycle.gain": result.gain})
        mlflow.log_dict(result.model_dump(mode="json"), "cycle_report.json")
    return result


@task(name="skip", **TRANSIENT_RETRIES)
def nothing_to_learn(cfg: Config, start: CycleStart, data, urls: dict[str, str]) -> CycleReport:
    """No pending snapshot: the cycle ends here, completed, and says so."""
    result = CycleReport(run_id=start.run_id, status="skipped", snapshot_ids=[], records_ingested=0,
                         quarantined=data.quarantined, metric=cfg.promote.metric, urls=urls, **costs(cfg, start))
    return _publish(cfg, start, result)


@task(name="report", **TRANSIENT_RETRIES)
def report(cfg: Config, start: CycleStart, data, warnings, dataset, candidate, evaluation, promotion,
           urls: dict[str, str]) -> CycleReport:
    return _publish(cfg, start, build_report(cfg, start, data, warnings, dataset, candidate, evaluation, promotion,
                                             urls))
