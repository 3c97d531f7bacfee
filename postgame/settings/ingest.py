"""Settings of the ingest stage (section `ingest:` of postgame.yaml)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class IngestSettings(BaseModel):
    """The ingest stage: new log objects -> quarantine + a content-addressed Parquet snapshot."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(
        "",
        description="Where production logs are read: a folder or s3://bucket/prefix; empty = "
        "the store's `factory.simulate.log_prefix` (where `postgame simulate` writes).",
    )
    max_line_bytes: int = Field(1 << 20, gt=0, description="Longer lines are quarantined as too_large.")
    state_prefix: str = Field(
        "ingest/",
        description="Key prefix in the postgame store under which snapshots, their "
        "manifests, quarantines and dedupe indexes are kept.",
    )
    batch_rows: int = Field(
        20_000, gt=0, description="Records buffered before they are written to the snapshot as one Parquet row group."
    )
    batch_bytes: int = Field(
        64 << 20,
        gt=0,
        description="Line bytes buffered before a row group is written "
        "(whichever of batch_rows/batch_bytes comes first).",
    )
    read_chunk_bytes: int = Field(
        1 << 20, ge=4096, description="Bytes read (and decompressed) from an object at a time."
    )
    quarantine_text_bytes: int = Field(
        64 << 10,
        ge=256,
        description="Bytes of a quarantined line kept for a person to read (redacted); longer lines are cut.",
    )

    @model_validator(mode="after")
    def _check(self) -> IngestSettings:
        """state_prefix ends with /; quarantine_text_bytes <= max_line_bytes."""
        if not self.state_prefix.endswith("/"):
            raise ValueError(f"state_prefix = {self.state_prefix!r} must end with '/'")
        if self.quarantine_text_bytes > self.max_line_bytes:
            raise ValueError(
                f"quarantine_text_bytes = {self.quarantine_text_bytes} must not exceed "
                f"max_line_bytes = {self.max_line_bytes}"
            )
        return self
