"""Batch metrics of a snapshot and the checks that bound them, alone or against the previous snapshot. Pure.

    batch_metrics(table, manifest) -> BatchMetrics
    batch_checks(current, previous, settings) -> [BatchCheck]   # each: [min_value, max_value], a severity

Rates come from the ingest counts (a share of the snapshot's non-blank lines); the rest from the records.
A relative drift bound `max` allows the metric between previous / (1 + max) and previous * (1 + max).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, Field

from postgame.ingest.snapshot import SnapshotManifest
from postgame.settings.validate import Bound, Severity, ValidateSettings


class BatchMetrics(BaseModel):
    records: int
    lines: int = Field(description="Non-blank lines: records + duplicates + quarantined.")
    quarantine_rate: float
    duplicate_rate: float
    resolved_share: float | None
    mean_prompt_tokens: float | None
    mean_completion_tokens: float | None
    median_latency_ms: float | None


class BatchCheck(BaseModel):
    name: str
    metric: str
    value: float | None
    min_value: float | None
    max_value: float | None
    severity: Severity
    previous: float | None = None
    description: str


def _mean(column: pa.ChunkedArray) -> float | None:
    value = pc.mean(column).as_py()
    return None if value is None else float(value)


METRIC_COLUMNS = ["outcome", "usage"]


class MetricsAccumulator:
    """Batch metrics of a snapshot streamed over its batches: only four numeric columns are kept (~25 bytes a
    record), so the median is exact and every value is the one `batch_metrics` gives on the whole table."""

    def __init__(self, manifest: SnapshotManifest):
        self.manifest = manifest
        self.rows = 0
        self.parts: dict[str, list[pa.Array]] = {"resolved": [], "prompt": [], "completion": [], "latency": []}

    def add(self, table: pa.Table) -> None:
        if not table.num_rows:
            return
        self.rows += table.num_rows
        outcome, usage = table.column("outcome"), table.column("usage")
        self.parts["resolved"].append(pc.equal(pc.struct_field(outcome, "status"), "resolved").cast(pa.float64()))
        self.parts["prompt"].append(pc.struct_field(usage, "prompt_tokens"))
        self.parts["completion"].append(pc.struct_field(usage, "completion_tokens"))
        self.parts["latency"].append(pc.struct_field(usage, "latency_ms"))

    def _column(self, name: str) -> pa.ChunkedArray:
        return pa.chunked_array(
            [
                chunk
                for part in self.parts[name]
                for chunk in (part.chunks if isinstance(part, pa.ChunkedArray) else [part])
            ]
        )

    def result(self) -> BatchMetrics:
        counts = self.manifest.counts
        quarantined = counts.quarantined_total
        lines = counts.records_ingested + counts.duplicates + quarantined
        valid = counts.records_ingested + counts.duplicates
        rows = self.rows
        return BatchMetrics(
            records=rows,
            lines=lines,
            quarantine_rate=quarantined / lines if lines else 0.0,
            duplicate_rate=counts.duplicates / valid if valid else 0.0,
            resolved_share=_mean(self._column("resolved")) if rows else None,
            mean_prompt_tokens=_mean(self._column("prompt")) if rows else None,
            mean_completion_tokens=_mean(self._column("completion")) if rows else None,
            median_latency_ms=float(pc.quantile(self._column("latency"), q=0.5)[0].as_py()) if rows else None,
        )


def batch_metrics(table: pa.Table, manifest: SnapshotManifest) -> BatchMetrics:
    """The metrics of a whole snapshot table (see MetricsAccumulator to stream them)."""
    acc = MetricsAccumulator(manifest)
    acc.add(table)
    return acc.result()


def _relative(name: str, metric: str, current: float, previous: float, bound: Bound, what: str) -> BatchCheck:
    factor = 1 + bound.max
    return BatchCheck(
        name=name,
        metric=metric,
        value=current,
        previous=previous,
        severity=bound.severity,
        min_value=previous / factor,
        max_value=previous * factor,
        description=f"{what} within x{factor:g} of the previous snapshot ({previous:.4g})",
    )


def batch_checks(current: BatchMetrics, previous: BatchMetrics | None, settings: ValidateSettings) -> list[BatchCheck]:
    quarantine, duplicates = settings.bound("quarantine_rate"), settings.bound("duplicate_rate")
    checks = [
        BatchCheck(
            name="min_records",
            metric="records",
            value=current.records,
            min_value=settings.min_records,
            max_value=None,
            severity="critical",
            description=f"at least {settings.min_records} record(s) to train on",
        ),
        BatchCheck(
            name="quarantine_rate",
            metric="quarantine_rate",
            value=current.quarantine_rate,
            min_value=0,
            max_value=quarantine.max,
            severity=quarantine.severity,
            description=f"at most {quarantine.max:.0%} of lines quarantined",
        ),
        BatchCheck(
            name="duplicate_rate",
            metric="duplicate_rate",
            value=current.duplicate_rate,
            min_value=0,
            max_value=duplicates.max,
            severity=duplicates.severity,
            description=f"at most {duplicates.max:.0%} of valid lines are re-sends",
        ),
    ]
    if previous is None or current.records < settings.drift_min_records:
        return checks
    if current.resolved_share is not None and previous.resolved_share is not None:
        bound = settings.bound("resolved_share_drift")
        checks.append(
            BatchCheck(
                name="resolved_share_drift",
                metric="resolved_share",
                value=current.resolved_share,
                previous=previous.resolved_share,
                severity=bound.severity,
                min_value=max(0.0, previous.resolved_share - bound.max),
                max_value=min(1.0, previous.resolved_share + bound.max),
                description=f"share of resolved sessions within {bound.max:.0%} points of the previous snapshot "
                f"({previous.resolved_share:.1%})",
            )
        )
    for name, metric, what in (
        ("prompt_tokens_drift", "mean_prompt_tokens", "mean prompt tokens"),
        ("completion_tokens_drift", "mean_completion_tokens", "mean completion tokens"),
        ("latency_drift", "median_latency_ms", "median latency_ms"),
    ):
        now, before = getattr(current, metric), getattr(previous, metric)
        if now is not None and before:  # a zero baseline has no relative change
            checks.append(_relative(name, metric, now, before, settings.bound(name), what))
    return checks
