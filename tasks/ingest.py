"""Ingest: new production-log objects → quarantine + a content-addressed Parquet snapshot (`postgame.ingest`)."""

from __future__ import annotations

from prefect import task
from prefect.artifacts import create_markdown_artifact

from postgame.config import Config
from tasks.retry import transient_io


@task(name="ingest", retries=3, retry_delay_seconds=[2, 5, 10], retry_condition_fn=transient_io)
def ingest(cfg: Config, source: str | None = None):
    """Retried on transient S3 errors only; the manifest makes a retry read each object once."""
    from postgame.ingest import run_ingest

    summary = run_ingest(source or cfg.ingest.source, cfg=cfg)
    q = summary.quarantined
    create_markdown_artifact(
        key="ingest-summary",
        markdown=(f"### Ingest\n- snapshot `{summary.snapshot_id}` at `{summary.snapshot_uri}`\n"
                  f"- objects read {summary.objects_read}, skipped {summary.objects_skipped}, corrupt "
                  f"{len(summary.corrupt_objects)}\n- records {summary.records_ingested}, duplicates "
                  f"{summary.duplicates}, quarantined {dict(q) if not isinstance(q, dict) else q}\n"),
        description="What this cycle read from the production logs")
    return summary
