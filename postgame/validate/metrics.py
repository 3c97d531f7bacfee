"""Batch metrics of a snapshot and the checks that bound them, alone or against the previous snapshot. Pure.

    batch_metrics(table, manifest) -> BatchMetrics
    batch_checks(current, previous, settings) -> [BatchCheck]   # each: [min_value, max_value], a severity

Rates come from the ingest counts (a share of the snapshot's non-blank lines); the rest from the records. The share of
sessions with a malformed tool call reads only the calls' arguments (`ARGUMENTS`), where the snapshot has messages.
A relative drift bound `max` allows the metric between previous / (1 + max) and previous * (1 + max).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, Field

from postgame.contract.trajectory import is_json
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
    malformed_call_share: float | None = Field(
        None, description="Share of sessions with a tool call whose arguments are not JSON; None without messages."
    )


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
ARGUMENTS = "messages.list.element.tool_calls.list.element.function.arguments"  # a nested column, read alone


def metric_columns(names: list[str]) -> list[str]:
    """The columns the metrics read from a snapshot whose top-level columns are `names`."""
    return METRIC_COLUMNS + ([ARGUMENTS] if "messages" in names else [])


def _malformed_rows(messages: pa.ChunkedArray) -> pa.Array:
    """1.0 for each row (session) with at least one tool call whose arguments are not a JSON text, else 0.0."""
    rows = len(messages)
    column = messages.combine_chunks()
    items = pc.list_flatten(column)
    item_row = pc.list_parent_indices(column)
    calls = pc.list_flatten(pc.struct_field(items, "tool_calls"))
    call_item = pc.list_parent_indices(pc.struct_field(items, "tool_calls"))
    arguments = pc.struct_field(pc.struct_field(calls, "function"), "arguments").to_pylist()
    bad = {
        row for row, text in zip(pc.take(item_row, call_item).to_pylist(), arguments, strict=True) if not is_json(text)
    }
    return pa.array([row in bad for row in range(rows)], pa.float64())


class MetricsAccumulator:
    """Batch metrics of a snapshot streamed over its batches: only five numeric columns are kept (~33 bytes a
    record), so the median is exact and every value is the one `batch_metrics` gives on the whole table."""

    def __init__(self, manifest: SnapshotManifest):
        self.manifest = manifest
        self.rows = 0
        self.parts: dict[str, list[pa.Array]] = {
            "resolved": [],
            "prompt": [],
            "completion": [],
            "latency": [],
            "malformed": [],  # stays empty for a snapshot without messages: its share is not measured (None)
        }

    def add(self, table: pa.Table) -> None:
        if not table.num_rows:
            return
        self.rows += table.num_rows
        outcome, usage = table.column("outcome"), table.column("usage")
        self.parts["resolved"].append(pc.equal(pc.struct_field(outcome, "status"), "resolved").cast(pa.float64()))
        self.parts["prompt"].append(pc.struct_field(usage, "prompt_tokens"))
        self.parts["completion"].append(pc.struct_field(usage, "completion_tokens"))
        self.parts["latency"].append(pc.struct_field(usage, "latency_ms"))
        if "messages" in table.column_names:
            self.parts["malformed"].append(_malformed_rows(table.column("messages")))

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
            malformed_call_share=_mean(self._column("malformed")) if self.parts["malformed"] else None,
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


def _at_most(name: str, value: float, settings: ValidateSettings, what: str) -> BatchCheck:
    """A share bounded by `<name>_max` from above; `what` follows "at most N% of"."""
    bound = settings.bound(name)
    return BatchCheck(
        name=name,
        metric=name,
        value=value,
        min_value=0,
        max_value=bound.max,
        severity=bound.severity,
        description=f"at most {bound.max:.0%} of {what}",
    )


def batch_checks(current: BatchMetrics, previous: BatchMetrics | None, settings: ValidateSettings) -> list[BatchCheck]:
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
        _at_most("quarantine_rate", current.quarantine_rate, settings, "lines quarantined"),
        _at_most("duplicate_rate", current.duplicate_rate, settings, "valid lines are re-sends"),
    ]
    if current.malformed_call_share is not None:
        checks.append(
            _at_most(
                "malformed_call_share",
                current.malformed_call_share,
                settings,
                "sessions hold a tool call whose arguments are not JSON (the model's mistake: kept, never an SFT "
                "target)",
            )
        )
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
