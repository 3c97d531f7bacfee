"""Settings of the fan-out (section `runner:` of postgame.yaml): where ingest's per-object parsing and the harness's
per-instance evaluations run.

    runner: {kind: process, workers: 0}                           # default: local processes, one per core
    runner: {kind: dask, address: "tcp://scheduler:8786"}         # an existing Dask cluster
    runner: {kind: dask}                                          # a Dask LocalCluster started for the run

`serial` runs everything in the calling process (ingest's one-process reference path; evaluations one by one).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

RunnerKind = Literal["serial", "process", "thread", "dask"]


class RunnerSettings(BaseModel):
    """The fan-out: where ingest's per-object parsing and the harness's per-instance evaluations run."""

    model_config = ConfigDict(extra="forbid")

    kind: RunnerKind = Field(
        "process",
        description="serial (this process), process (local process pool), thread "
        "(local threads), dask (prefect-dask's DaskTaskRunner).",
    )
    address: str = Field(
        "",
        description="Dask scheduler address (tcp://host:8786) when kind is dask; empty = a "
        "LocalCluster started for the run and stopped after it.",
    )
    workers: int = Field(
        0,
        ge=0,
        description="Processes / threads / LocalCluster workers; 0 = one per core. Not "
        "used with an address (the cluster has its own).",
    )
    torch_threads: int = Field(
        0,
        ge=0,
        description="torch threads of each worker that plays agent episodes with a policy on the CPU; 0 = the "
        "cores shared out among the local workers (cores // workers, at least 1; torch's own default, every core, "
        "for serial and for a Dask cluster's own workers). Two workers of two threads each on two cores spend most "
        'of a small model\'s decoding waiting on each other (BENCHMARKS.md, "Agent environment").',
    )
    window: int = Field(
        0,
        ge=0,
        description="Units of work in flight at once (memory bound: each holds one object "
        "or one evaluation); 0 = 2 x workers.",
    )

    @model_validator(mode="after")
    def _check(self) -> RunnerSettings:
        """address only with kind dask, and as a scheduler URL (tcp://host:8786)."""
        if self.address and self.kind != "dask":
            raise ValueError(
                f"runner.address = {self.address!r} is only used with runner.kind = dask (kind is {self.kind!r})"
            )
        if self.address and "://" not in self.address:
            raise ValueError(f"runner.address = {self.address!r} must be a scheduler URL such as tcp://host:8786")
        return self
