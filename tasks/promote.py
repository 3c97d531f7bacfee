"""Promote: register the candidate, decide, move `champion` if it won (`models.promote`)."""

from __future__ import annotations

from prefect import task

from models.evaluate import Evaluation
from models.promote import Promotion, promote_candidate
from models.train import Candidate
from postgame.config import Config


@task(name="promote")  # no retries: registering twice would make two versions
def promote(cfg: Config, candidate: Candidate, evaluation: Evaluation) -> Promotion:
    return promote_candidate(cfg, candidate, evaluation)
