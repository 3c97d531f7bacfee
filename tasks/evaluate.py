"""Evaluate: the candidate and the champion answer the same held-out tasks; the harness grades their patches
(`models.evaluate`)."""

from __future__ import annotations

from prefect import task

from models.evaluate import Evaluation, evaluate_candidate
from models.train import Candidate
from postgame.config import Config
from tasks.resume import RESUMABLE
from tasks.retry import TRANSIENT_RETRIES


@task(name="evaluate", **RESUMABLE, **TRANSIENT_RETRIES)  # a grading failure is not transient: not retried
def evaluate(cfg: Config, candidate: Candidate) -> Evaluation:
    return evaluate_candidate(cfg, candidate)
