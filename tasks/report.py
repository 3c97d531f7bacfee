"""Report: what the cycle cost and what it gained (intelligence per dollar), for the Prefect UI and MLflow.

Cost is measured, not estimated: the CPU seconds this process and its children spent during the cycle, priced at
`cost.usd_per_cpu_hour`, plus what the production sessions it learned from cost to serve (`usage.cost_usd`, summed
by ingest when the snapshot carries it).
"""

from __future__ import annotations

import resource
import time
from dataclasses import asdict, is_dataclass

from prefect import task
from prefect.artifacts import create_markdown_artifact
from pydantic import BaseModel

from postgame.config import Config


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class CycleStart(BaseModel):
    run_id: str
    experiment_id: str
    started_at: float
    cpu_seconds_at_start: float


class CycleReport(BaseModel):
    run_id: str
    snapshot_id: str
    records_ingested: int
    quarantined: dict[str, int]
    validation_warnings: list[str]
    dataset_uri: str
    train_method: str
    train_steps: int
    eval_split: str
    candidate_metric: float
    champion_metric: float | None
    metric: str
    version: str
    model_uri: str
    promoted: bool
    decision: str
    champion_version: str | None
    seconds: float
    cpu_seconds: float
    cost_usd: float
    gain: float
    gain_per_dollar: float | None
    urls: dict[str, str] = {}

    def summary(self) -> str:
        champion = "none" if self.champion_metric is None else f"{self.champion_metric:.3f}"
        lines = [
            f"cycle {self.run_id}: snapshot {self.snapshot_id[:12]} ({self.records_ingested} sessions, "
            f"quarantined {self.quarantined})",
            f"  train    {self.train_method}, {self.train_steps} steps on {self.dataset_uri}",
            f"  evaluate {self.metric} on {self.eval_split}: candidate {self.candidate_metric:.3f}, champion {champion}",
            f"  promote  version {self.version} ({self.model_uri}): "
            f"{'PROMOTED to champion' if self.promoted else 'kept champion v' + str(self.champion_version)} "
            f"— {self.decision}",
            f"  cost     {self.seconds:.0f} s, {self.cpu_seconds:.0f} CPU-s, ${self.cost_usd:.4f}; gain {self.gain:+.3f}"
            + (f" ({self.gain_per_dollar:+.1f} per $)" if self.gain_per_dollar is not None else ""),
        ]
        lines += [f"  {name:8s} {url}" for name, url in self.urls.items()]
        return "\n".join(lines)


@task(name="open-cycle-run", retries=2, retry_delay_seconds=2)
def open_cycle_run(cfg: Config, flow_run_id: str) -> CycleStart:
    """The MLflow run every stage of this cycle logs into."""
    import mlflow

    from postgame.runtime import tracking_uri

    mlflow.set_tracking_uri(tracking_uri(cfg))
    experiment = mlflow.set_experiment(cfg.tracking.experiment)
    run = mlflow.MlflowClient().create_run(experiment.experiment_id, run_name=f"cycle-{flow_run_id[:8]}",
                                           tags={"prefect.flow_run_id": flow_run_id})
    return CycleStart(run_id=run.info.run_id, experiment_id=experiment.experiment_id, started_at=time.time(),
                      cpu_seconds_at_start=cpu_seconds())


def _plain(obj):
    return asdict(obj) if is_dataclass(obj) else obj


def build_report(cfg: Config, start: CycleStart, snapshot, validation, dataset, candidate, evaluation,
                 promotion, urls: dict[str, str]) -> CycleReport:
    seconds = time.time() - start.started_at
    cpu = max(0.0, cpu_seconds() - start.cpu_seconds_at_start)
    cost = cpu / 3600 * cfg.cost.usd_per_cpu_hour
    champion_metric = evaluation.champion.metric if evaluation.champion else 0.0
    gain = evaluation.candidate.metric - champion_metric if promotion.decision.promote else 0.0
    quarantined = snapshot.quarantined if isinstance(snapshot.quarantined, dict) else _plain(snapshot.quarantined)
    return CycleReport(
        run_id=start.run_id, snapshot_id=snapshot.snapshot_id, records_ingested=snapshot.records_ingested,
        quarantined=quarantined, validation_warnings=[str(w) for w in getattr(validation, "warnings", [])],
        dataset_uri=dataset.uri, train_method=candidate.method, train_steps=candidate.steps,
        eval_split=evaluation.split, candidate_metric=evaluation.candidate.metric,
        champion_metric=evaluation.champion.metric if evaluation.champion else None, metric=cfg.promote.metric,
        version=promotion.version, model_uri=promotion.model_uri, promoted=promotion.decision.promote,
        decision=promotion.decision.reason, champion_version=promotion.champion_version, seconds=seconds,
        cpu_seconds=cpu, cost_usd=cost, gain=gain, gain_per_dollar=(gain / cost) if cost > 0 else None, urls=urls)


@task(name="report")
def report(cfg: Config, start: CycleStart, snapshot, validation, dataset, candidate, evaluation, promotion,
           urls: dict[str, str]) -> CycleReport:
    import mlflow

    from postgame.runtime import tracking_uri

    result = build_report(cfg, start, snapshot, validation, dataset, candidate, evaluation, promotion, urls)
    create_markdown_artifact(key="cycle-report", markdown="```\n" + result.summary() + "\n```",
                             description="What this cycle cost and what it gained")
    mlflow.set_tracking_uri(tracking_uri(cfg))
    with mlflow.start_run(run_id=start.run_id):
        mlflow.log_metrics({"cycle.seconds": result.seconds, "cycle.cpu_seconds": result.cpu_seconds,
                            "cycle.cost_usd": result.cost_usd, "cycle.gain": result.gain})
        mlflow.log_dict(result.model_dump(mode="json"), "cycle_report.json")
    return result
