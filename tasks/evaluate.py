"""Evaluate: the candidate and the champion answer the same held-out tasks; the harness grades their patches
(`models.evaluate`), each instance where `runner:` sends it (`postgame.runners`, `evals.harness.fanout`)."""

from __future__ import annotations

from prefect import task

from models.evaluate import Evaluation, evaluate_candidate
from models.train import Candidate
from postgame.config import Config
from tasks.resume import RESUMABLE
from tasks.retry import TRANSIENT_RETRIES


@task(name="evaluate", **RESUMABLE, **TRANSIENT_RETRIES)  # a grading failure is not transient: not retried
def evaluate(cfg: Config, candidate: Candidate) -> Evaluation:
    """Each instance is graded in a task run of its own through the `runner:` task runner (local processes by
    default, a Dask cluster with `kind: dask`; `serial`: one by one in this process)."""
    from models.evaluate import charged
    from postgame.report import cpu_seconds
    from postgame.runners import prefect_mapper

    started = cpu_seconds()
    with prefect_mapper(cfg.runner) as mapper:
        evaluation = evaluate_candidate(cfg, candidate, mapper=mapper)
    return charged(evaluation, cpu_seconds() - started)  # the runner's workers count once it has joined them
