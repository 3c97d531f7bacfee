"""Settings of the validate stage (section `validate:` of postgame.yaml); the checks are described on the model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Severity = Literal["critical", "warning"]
CHECKS = (
    "quarantine_rate",
    "duplicate_rate",
    "malformed_call_share",
    "resolved_share_drift",
    "prompt_tokens_drift",
    "completion_tokens_drift",
    "latency_drift",
)


@dataclass(frozen=True)
class Bound:
    max: float
    severity: Severity


class ValidateSettings(BaseModel):
    """The validate stage: the log contract's expectations (always critical) and batch checks, each a bound
    `<check>_max` with a severity `<check>_severity` (critical stops the cycle before training with
    DataValidationError; warning is recorded). Drift compares with the latest earlier snapshot that has at least
    `drift_min_records` records (none: skipped, and the report says so); relative drift 1.0 allows half to double."""

    model_config = ConfigDict(extra="forbid")

    min_records: int = Field(1, ge=0, description="Fewer records in the snapshot is critical: nothing to train on.")
    quarantine_rate_max: float = Field(
        0.2, ge=0, le=1, description="Largest share of the snapshot's non-blank lines that may be quarantined."
    )
    quarantine_rate_severity: Severity = Field(
        "critical", description="What quarantine_rate_max exceeded does: critical stops the cycle, warning is recorded."
    )
    duplicate_rate_max: float = Field(
        0.5, ge=0, le=1, description="Largest share of valid lines that may be exact re-sends of known sessions."
    )
    duplicate_rate_severity: Severity = Field(
        "warning", description="What duplicate_rate_max exceeded does: critical stops the cycle, warning is recorded."
    )
    malformed_call_share_max: float = Field(
        0.1,
        ge=0,
        le=1,
        description="Largest share of sessions with a tool call whose arguments are not JSON: the deployed model's own "
        "mistake, kept as logged and never an SFT target, so a rising share says the model in production writes "
        "broken calls.",
    )
    malformed_call_share_severity: Severity = Field(
        "warning",
        description="What malformed_call_share_max exceeded does: critical stops the cycle, warning is recorded.",
    )
    resolved_share_drift_max: float = Field(
        0.25, ge=0, le=1, description="Largest absolute change of the share of resolved sessions (0.25 = 25 points)."
    )
    resolved_share_drift_severity: Severity = Field(
        "warning",
        description="What resolved_share_drift_max exceeded does: critical stops the cycle, warning is recorded.",
    )
    prompt_tokens_drift_max: float = Field(1.0, ge=0, description="Largest relative change of mean prompt tokens.")
    prompt_tokens_drift_severity: Severity = Field(
        "warning",
        description="What prompt_tokens_drift_max exceeded does: critical stops the cycle, warning is recorded.",
    )
    completion_tokens_drift_max: float = Field(
        1.0, ge=0, description="Largest relative change of mean completion tokens."
    )
    completion_tokens_drift_severity: Severity = Field(
        "warning",
        description="What completion_tokens_drift_max exceeded does: critical stops the cycle, warning is recorded.",
    )
    latency_drift_max: float = Field(1.0, ge=0, description="Largest relative change of median latency_ms.")
    latency_drift_severity: Severity = Field(
        "warning", description="What latency_drift_max exceeded does: critical stops the cycle, warning is recorded."
    )
    drift_min_records: int = Field(
        30,
        ge=1,
        description="Drift is measured only between snapshots with at least this many records each (fewer is noise).",
    )
    batch_rows: int = Field(
        50_000,
        gt=0,
        description="Rows validated at a time (whole Parquet row groups): peak "
        "memory follows this, not the snapshot's size.",
    )
    docs_dir: str = Field(
        "validate",
        description="Folder, relative to home, of the Great Expectations project "
        "(gx/: suites, results, Data Docs) and of the reports (reports/).",
    )

    def bound(self, check: str) -> Bound:
        """The (max, severity) of one batch check, by name (one of CHECKS)."""
        return Bound(max=getattr(self, f"{check}_max"), severity=getattr(self, f"{check}_severity"))
