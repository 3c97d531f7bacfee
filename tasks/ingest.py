"""Ingest: new production-log objects → quarantine + a content-addressed Parquet snapshot (`postgame.ingest`).

The cycle then works on every *pending* snapshot (`postgame.ledger`): the one just written and any that an earlier
cycle ingested but did not finish, so a crash between ingest and promotion loses nothing.
"""

from __future__ import annotations

from prefect import task
from prefect.artifacts import create_markdown_artifact
from pydantic import BaseModel

from postgame.config import Config
from tasks.retry import TRANSIENT_RETRIES


class CycleData(BaseModel):
    """What this cycle learns from: the snapshots no cycle has consumed yet, and what ingest did this time."""

    snapshot_ids: list[str]
    new_snapshot_id: str | None
    records_ingested: int
    duplicates: int
    quarantined: dict[str, int]
    corrupt_objects: int


@task(name="ingest", **TRANSIENT_RETRIES)  # never cached: each cycle looks for new objects
def ingest(cfg: Config, source: str | None = None) -> CycleData:
    """Retried on transient S3 errors only; the manifest makes a retry read each object once. Each object is parsed
    in a task run of its own through the `runner:` task runner (local processes, or a Dask cluster)."""
    from postgame import ledger
    from postgame.ingest import run_ingest
    from postgame.runners import prefect_mapper
    from postgame.runtime import log_source

    with prefect_mapper(cfg.runner) as mapper:
        summary = run_ingest(source or log_source(cfg), cfg=cfg, mapper=None if cfg.runner.kind == "serial" else mapper)
    data = CycleData(
        snapshot_ids=ledger.pending(cfg),
        new_snapshot_id=summary.snapshot_id,
        records_ingested=summary.records_ingested,
        duplicates=summary.duplicates,
        quarantined=summary.quarantined,
        corrupt_objects=len(summary.corrupt_objects),
    )
    create_markdown_artifact(
        key="ingest-summary",
        markdown=(
            f"### Ingest\n- new snapshot `{summary.snapshot_id}` at `{summary.snapshot_uri}`\n"
            f"- objects read {summary.objects_read}, skipped {summary.objects_skipped}, corrupt "
            f"{len(summary.corrupt_objects)}\n- records {summary.records_ingested}, duplicates "
            f"{summary.duplicates}, quarantined {summary.quarantined}\n"
            f"- snapshots this cycle learns from: {', '.join(s[:12] for s in data.snapshot_ids) or 'none'}\n"
        ),
        description="What this cycle read from the production logs",
    )
    return data
