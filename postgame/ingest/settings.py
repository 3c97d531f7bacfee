"""Settings of the ingest stage (section `ingest:` of postgame.yaml)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class IngestSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field("s3://postgame/agent-logs/", description="Where production logs are read: a folder or s3://bucket/prefix.")
    max_line_bytes: int = Field(1 << 20, gt=0, description="Longer lines are quarantined as too_large.")
