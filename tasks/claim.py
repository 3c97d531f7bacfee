"""Claim: the pending snapshots this cycle works on are held by it alone (`postgame.ledger.claim`), so two cycles
never train on the same snapshot, even when they were started outside the deployment's concurrency limit."""

from __future__ import annotations

from prefect import task

from postgame.config import Config
from tasks.ingest import CycleData
from tasks.retry import TRANSIENT_RETRIES


@task(name="claim", **TRANSIENT_RETRIES)
def claim(cfg: Config, data: CycleData, owner: str) -> CycleData:
    """`data` with only the snapshots this cycle (`owner`, its flow run id) holds; the rest are another cycle's."""
    from postgame import ledger

    return data.model_copy(update={"snapshot_ids": ledger.claim(cfg, data.snapshot_ids, owner)})
