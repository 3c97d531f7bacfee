"""Train: one TRL run per cycle (`models.train`, the recipe). No retries: a failed training is a failure, not a
transient. A training killed outright (SIGKILL, a lost machine) is not lost either: the next cycle on the same
snapshots, parent and settings finds the same work folder (`models.train.work_key`) and resumes from its last atomic
checkpoint, with the data order checked against the plan."""

from __future__ import annotations

from prefect import task

from models.train import Candidate, train_candidate
from postgame.config import Config
from postgame.curate import CuratedDataset


@task(name="train")
def train(cfg: Config, dataset: CuratedDataset, run_id: str) -> Candidate:
    return train_candidate(cfg, dataset, run_id)
