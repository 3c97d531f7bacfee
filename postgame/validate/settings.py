"""Settings of the validate stage (section `validate:` of postgame.yaml)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ValidateSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_quarantine_rate: float = Field(0.2, ge=0, le=1, description="Critical above this share of quarantined lines.")
