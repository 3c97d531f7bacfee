"""Resume a failed cycle at the stage that failed: stage results are persisted under a key of the stage's inputs and
its source code (`INPUTS + TASK_SOURCE`, not the flow run), in a *saved* result-storage block, so a new flow run of
the cycle on the same pending snapshots finds the finished stages' results and skips them.

    @task(name="curate", **RESUMABLE, **TRANSIENT_RETRIES)
    save_result_storage(cfg)   # before a cycle runs: the block `local-file-system/postgame-results` → <home>/results

Changing a stage's code or its inputs (config, snapshots, dataset) makes a new key: nothing stale is reused.
"""

from __future__ import annotations

from prefect.cache_policies import INPUTS, TASK_SOURCE

from postgame.config import Config

RESULTS_BLOCK_NAME = "postgame-results"
RESULTS_BLOCK = f"local-file-system/{RESULTS_BLOCK_NAME}"

RESUMABLE: dict = dict(cache_policy=INPUTS + TASK_SOURCE, persist_result=True, result_storage=RESULTS_BLOCK)


def resumable_without(*names: str) -> dict:
    """RESUMABLE, with inputs that differ from one flow run to the next (the cycle's MLflow run id) left out of the
    key."""
    policy = INPUTS
    for name in names:
        policy = policy - name
    return dict(RESUMABLE, cache_policy=policy + TASK_SOURCE)


def save_result_storage(cfg: Config) -> str:
    """Save (or repoint) the result-storage block at `<home>/results` on the current Prefect API; returns its slug."""
    from prefect.filesystems import LocalFileSystem

    path = cfg.home / "results"
    path.mkdir(parents=True, exist_ok=True)
    LocalFileSystem(basepath=str(path)).save(RESULTS_BLOCK_NAME, overwrite=True)
    return RESULTS_BLOCK
