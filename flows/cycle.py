"""One continuous-training cycle, as in the diagram:

    production logs (S3) → ingest → validate → curate → train (TRL) → evaluate (sandboxed) → promote (MLflow)

Run it with `postgame cycle` (or `make demo` for the whole embedded world). With the local stack up (`postgame up`)
the flow run appears in the Prefect UI and the model in the MLflow registry; without it, the same code runs
in-process on Prefect's ephemeral API, a SQLite MLflow store and a folder as the object store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from prefect import flow
from prefect.runtime import flow_run
from prefect.states import Completed, State

from postgame import runtime
from postgame.config import Config, load_config
from tasks.claim import answered_by, claim
from tasks.curate import curate
from tasks.evaluate import evaluate
from tasks.ingest import ingest
from tasks.promote import await_approval, promote
from tasks.report import CycleReport, nothing_to_learn, open_cycle_run, report
from tasks.resume import RESULTS_BLOCK
from tasks.train import train, training_run
from tasks.validate import validate

CYCLE_STAGES = ("open-cycle-run", "ingest", "validate", "curate", "train", "evaluate", "promote", "report")


@flow(name="continuous-cycle", persist_result=True, result_storage=RESULTS_BLOCK)  # resumable: tasks/resume.py
def continuous_cycle(
    source: str | None = None, config_path: str | None = None, reason: str = ""
) -> CycleReport | State:
    """One cycle. `reason` says who asked (schedule, API, event); it is shown on the flow run."""
    cfg = load_config(config_path)
    stack = runtime.resolve(cfg, refresh=True)  # where the world is, once for this flow run
    if leader := answered_by(cfg, reason, flow_run.get_id()):  # one burst of log events, one cycle
        return Completed(message=f"debounced: flow run {leader} answers this burst of log events")
    start = open_cycle_run(cfg, flow_run.get_id() or "local")
    data = claim(cfg, ingest(cfg, source), flow_run.get_id() or "local")  # snapshots another cycle holds: not ours
    if not data.snapshot_ids:
        return nothing_to_learn(cfg, start, data, stack.urls())
    warnings = validate(cfg, data.snapshot_ids, start.run_id)
    dataset = curate(cfg, data.snapshot_ids)
    candidate = train(cfg, dataset, training_run(cfg, dataset, start.run_id))  # same run (folder) on a re-run
    evaluation = evaluate(cfg, candidate)
    promotion = await_approval(cfg, promote(cfg, candidate, evaluation))  # a reviewer, if promote.require_approval
    return report(cfg, start, data, warnings, dataset, candidate, evaluation, promotion, stack.urls())


def prefect_settings(cfg: Config) -> dict:
    """Point Prefect at the stack's server, or at a private ephemeral one under home (never ~/.prefect)."""
    from prefect.settings import (
        PREFECT_API_AUTH_STRING,
        PREFECT_API_URL,
        PREFECT_HOME,
        PREFECT_SERVER_ALLOW_EPHEMERAL_MODE,
        PREFECT_SERVER_ANALYTICS_ENABLED,
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS,
    )

    api = runtime.resolve(cfg, refresh=True).prefect_api_url
    if api:
        auth = runtime.prefect_auth(cfg)
        return {PREFECT_API_URL: api, **({PREFECT_API_AUTH_STRING: ":".join(auth)} if auth else {})}
    # The ephemeral server starts in ~12 s on an idle 2-core machine; Prefect's 20 s default is too tight under load.
    return {
        PREFECT_API_URL: None,
        PREFECT_HOME: str(cfg.home / "prefect-ephemeral"),
        PREFECT_SERVER_ANALYTICS_ENABLED: False,
        PREFECT_SERVER_ALLOW_EPHEMERAL_MODE: True,
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS: 180,
    }


def run_cycle(config_path: str | None = None, source: str | None = None) -> CycleReport:
    """Run one cycle in this process against the stack (if up) or in-process. Returns the cycle report."""

    from tasks.resume import save_result_storage

    cfg = load_config(config_path)
    with process_wide_settings(prefect_settings(cfg)):
        save_result_storage(cfg)
        return continuous_cycle(source=source, config_path=str(config_path) if config_path else None)


@contextmanager
def following_stages(tell: Callable[[str, int], None]) -> Iterator[None]:
    """While inside, each stage of a cycle that finishes tells `tell(next stage, 1)` (a progress bar's, out of
    `len(CYCLE_STAGES)`): the cycle's Prefect task runs log "Finished in state ..." in this process."""
    watcher = _StageWatcher(tell)
    task_runs = logging.getLogger("prefect.task_runs")
    tell(CYCLE_STAGES[0], 0)
    task_runs.addHandler(watcher)
    try:
        yield
    finally:
        task_runs.removeHandler(watcher)


class _StageWatcher(logging.Handler):
    def __init__(self, tell: Callable[[str, int], None]) -> None:
        super().__init__(logging.INFO)
        self.tell = tell

    def emit(self, record: logging.LogRecord) -> None:
        name = str(getattr(record, "task_run_name", "")).rsplit("-", 1)[0]
        if name in CYCLE_STAGES and record.getMessage().startswith("Finished in state"):
            following = CYCLE_STAGES.index(name) + 1
            self.tell(CYCLE_STAGES[following] if following < len(CYCLE_STAGES) else "done", 1)


@contextmanager
def process_wide_settings(updates: dict) -> Iterator[None]:
    """Prefect settings for the block, process-wide: the settings context, os.environ (subprocesses: served flow
    runs, pool workers) and Prefect's global settings context, which threads Prefect starts see instead of the
    caller's context. Without the last two the process pool's event-forwarding thread started a temporary server of
    its own and sent the workers' task runs there, where their flow run does not exist (the stack's UI never showed
    them; the log filled with FOREIGN KEY errors)."""
    import os

    from prefect.context import refresh_global_settings_context
    from prefect.settings import temporary_settings

    saved = {setting.name: os.environ.get(setting.name) for setting in updates}
    for setting, value in updates.items():
        if value is None:
            os.environ.pop(setting.name, None)
        else:
            os.environ[setting.name] = str(value)
    refresh_global_settings_context()
    try:
        with temporary_settings(updates=updates):
            yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        refresh_global_settings_context()
