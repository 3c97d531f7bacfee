"""The embedded default, end to end on a laptop CPU (what `make demo` runs):

    postgame demo [--sessions N] [--no-keep-up]

1. the local stack (Prefect, MLflow, SeaweedFS S3) — started unless it runs;
2. the task world — built once (deterministic from `factory.seed`), its environments in S3;
3. production traffic — the champion attempts train tasks, graded in the sandbox, logged to S3 as schema-v1 JSONL.gz;
4. one continuous-training cycle — ingest → validate → curate → train → evaluate → promote;
5. where to look: the Prefect flow run, the MLflow model version, what the cycle cost and gained.
"""

from __future__ import annotations

from collections.abc import Callable

from postgame.config import Config


def demo_traffic(cfg: Config):
    """Production traffic is dirty: unless the config asks for its own dirt, the demo plants some, so that the
    quarantine, the dedupe and the redaction have something to show."""
    sim = cfg.factory.simulate
    if sim.duplicate_rate or sim.malformed_rate or sim.secret_rate:
        return sim
    return sim.model_copy(update={"duplicate_rate": 0.05, "malformed_rate": 0.05, "secret_rate": 0.1})


def run_demo(cfg: Config, *, sessions: int, keep_up: bool, config_path: str | None = None,
             log: Callable[[str], None] = print):
    from evals.factory.build import ensure_built
    from flows.cycle import run_cycle
    from infra.stack import down, up
    from models.traffic import simulate_traffic

    log("== 1/4 local stack")
    up(cfg, log=log)
    try:
        log("== 2/4 task world")
        built = ensure_built(cfg)
        log(f"   {built.summary() if hasattr(built, 'summary') else built}")
        log(f"== 3/4 production traffic: {sessions} sessions from the champion")
        traffic = simulate_traffic(cfg, sessions=sessions, settings=demo_traffic(cfg))
        log(f"   {traffic.summary() if hasattr(traffic, 'summary') else traffic}")
        log("== 4/4 one continuous-training cycle")
        report = run_cycle(config_path, source=None)
    except BaseException:
        if not keep_up:
            down(cfg, log=log)
        raise
    log(report.summary())
    prefect = report.urls.get("prefect")
    if prefect:
        log(f"Prefect UI: {prefect}/runs  (flow 'continuous-cycle')")
    mlflow_url = report.urls.get("mlflow", "")
    if mlflow_url.startswith("http"):
        log(f"MLflow UI:  {mlflow_url}/#/models/{cfg.tracking.registered_model}/versions/{report.version}")
    if keep_up:
        log("The stack stays up to browse; stop it with: postgame down")
    else:
        from prefect.logging.handlers import APILogWorker

        APILogWorker.drain_all(timeout=10)  # send the cycle's queued logs while the Prefect server still runs
        down(cfg, log=log)
    return report
