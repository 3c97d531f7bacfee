"""Train: one TRL run per cycle (`models.train`, the recipe). A failed training is a failure, not a transient: it is
retried only when a service (MLflow, the store) was unreachable. A training killed outright (SIGKILL, a lost machine)
is not lost either: the next run on the same snapshots, parent and settings finds the same work folder
(`models.train.work_key`) and resumes from its last atomic checkpoint, with the data order checked against the plan."""

from __future__ import annotations

from prefect import task

from models.train import Candidate, train_candidate
from postgame.config import Config
from postgame.curate import CuratedDataset
from tasks.resume import RESUMABLE, resumable_without
from tasks.retry import TRANSIENT_RETRIES


@task(name="training-run", **resumable_without("parent_run_id"), **TRANSIENT_RETRIES)
def training_run(cfg: Config, dataset: CuratedDataset, parent_run_id: str) -> str:
    """The MLflow run (and so the output folder, `<home>/runs/<run id>`) that trains on `dataset`: the same for a
    re-run of a failed cycle, so training resumes from its checkpoint there. Nested under the cycle's run."""
    from mlflow import MlflowClient

    from models.train import new_training_run
    from postgame.runtime import tracking_uri

    run_id = new_training_run(cfg, f"train-{dataset.sha256[:8]}")
    MlflowClient(tracking_uri=tracking_uri(cfg)).set_tag(run_id, "mlflow.parentRunId", parent_run_id)
    return run_id


@task(name="train", **RESUMABLE, **TRANSIENT_RETRIES)  # retried only when a service was unreachable
def train(cfg: Config, dataset: CuratedDataset, run_id: str) -> Candidate:
    return train_candidate(cfg, dataset, run_id)
