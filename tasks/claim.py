"""One cycle at a time. Debounce: of the cycles one burst of log events started, the first runs and the others end
at once (`postgame.events.burst_leader`). Claim: the pending snapshots this cycle works on are held by it alone
(`postgame.ledger.claim`), so two cycles never train on the same snapshot, even when they were started outside the
deployment's concurrency limit."""

from __future__ import annotations

from prefect import task

from postgame.config import Config
from tasks.ingest import CycleData
from tasks.retry import TRANSIENT_RETRIES


@task(name="debounce", **TRANSIENT_RETRIES)
def answered_by(cfg: Config, reason: str, run_id: str | None) -> str | None:
    """For a cycle the logs-landed trigger started (`reason` "event: ..."), the earlier flow run that answers the
    same burst of events, as "<name> (<id>)"; None when this run is the one to do the work (or was not started by
    an event)."""
    from postgame.events import EVENT_REASON, burst_leader

    if not reason.startswith(EVENT_REASON) or not run_id:
        return None
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterDeploymentId
    from prefect.client.schemas.sorting import FlowRunSort

    with get_client(sync_client=True) as client:
        me = client.read_flow_run(run_id)
        if me.deployment_id is None:
            return None
        runs = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(deployment_id=FlowRunFilterDeploymentId(any_=[me.deployment_id])),
            sort=FlowRunSort.EXPECTED_START_TIME_DESC,
            limit=200,
        )
    by_event = {
        str(r.id): r
        for r in runs
        if r.created is not None and str(r.parameters.get("reason", "")).startswith(EVENT_REASON)
    }
    by_event[run_id] = me
    leader = burst_leader([(r.created, rid) for rid, r in by_event.items()], run_id, cfg.operate.event_debounce_s)
    return None if leader == run_id else f"{by_event[leader].name} ({leader})"


@task(name="claim", **TRANSIENT_RETRIES)
def claim(cfg: Config, data: CycleData, owner: str) -> CycleData:
    """`data` with only the snapshots this cycle (`owner`, its flow run id) holds; the rest are another cycle's."""
    from postgame import ledger

    return data.model_copy(update={"snapshot_ids": ledger.claim(cfg, data.snapshot_ids, owner)})
