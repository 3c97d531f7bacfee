"""Promote: register the candidate, decide, move `champion` if it won (`models.promote`)."""

from __future__ import annotations

from prefect import task

from models.evaluate import Evaluation
from models.promote import Promotion, promote_candidate
from models.train import Candidate
from postgame.config import Config
from tasks.resume import RESUMABLE
from tasks.retry import TRANSIENT_RETRIES


# Cached: a re-run after promote finished never registers the same candidate twice. Retried only when MLflow was
# unreachable (a version registered before the outage stays a plain version; `champion` moves once).
@task(name="promote", **RESUMABLE, **TRANSIENT_RETRIES)
def promote(cfg: Config, candidate: Candidate, evaluation: Evaluation) -> Promotion:
    return promote_candidate(cfg, candidate, evaluation)
