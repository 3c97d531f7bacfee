"""Settings of the evaluation harness (section `eval:` of postgame.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class HarnessSettings(BaseModel):
    """The SWE-style evaluation harness (also the RL reward): each test run sandboxed, limited and timed."""

    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(
        60.0, gt=0, description="Wall-clock limit of one test run; the whole process tree is killed."
    )
    workers: int = Field(0, ge=0, description="Parallel instances; 0 = number of cores.")
    sandbox: Literal["auto", "bwrap", "rlimits"] = Field(
        "auto",
        description="auto = bubblewrap when it works here, else rlimits (said in every report); "
        "bwrap = bubblewrap or an infrastructure error; rlimits = limits + new session + timeout only (weak).",
    )
    memory_mb: int = Field(
        4096,
        ge=64,
        description="Address space of each sandboxed process, and the memory cgroup cap of the whole run where a cgroup is available.",
    )
    cpu_time_s: int = Field(0, ge=0, description="CPU seconds per process (RLIMIT_CPU); 0 = derived from timeout_s.")
    max_processes: int = Field(
        256, ge=8, description="Processes + threads in one test run (pids cgroup as root, RLIMIT_NPROC otherwise)."
    )
    file_size_mb: int = Field(
        256, ge=1, description="Largest file a test run may write (RLIMIT_FSIZE); also caps the test output log."
    )
    open_files: int = Field(1024, ge=64, description="Open file descriptors per process (RLIMIT_NOFILE).")
    tmp_size_mb: int = Field(
        256, ge=1, description="Size of the sandbox's private /tmp (tmpfs); /dev/shm gets a quarter."
    )
    reruns: int = Field(
        0, ge=0, description="Extra runs of each test command; tests whose results disagree are reported as flaky."
    )
    partial_credit: bool = Field(
        False,
        description="RL reward = fraction of FAIL_TO_PASS passing when every PASS_TO_PASS passes (else 1.0 FULL / 0.0).",
    )
    cache_dir: Path | None = Field(
        None,
        description="Keeps base exports and graded results across processes; empty = a temporary folder per process.",
    )
    work_dir: Path | None = Field(
        None,
        description="Where each run's fresh copy is made; empty = /dev/shm when it is "
        "a tmpfs with >= 1 GiB free (much faster than a busy disk), else the system temp folder.",
    )
    keep_workdir: bool = Field(False, description="Keep each run's copy for debugging instead of deleting it.")
    pytest_plugin_autoload: bool = Field(
        False,
        description="Let pytest load every plugin installed beside it (repos "
        "that need pytest plugins); off = only the harness's own.",
    )
    max_log_kb: int = Field(
        1024, ge=16, description="Test output kept in TestRun.log and test_output.txt (the tail beyond this is cut)."
    )
    env_build_network: bool = Field(
        False,
        description=(
            "Give the sandboxed build of a per-repository environment (an instance's env_spec) the host's network and "
            "pip settings, for downloads; test runs never have network. Off = local paths / wheels only (pip --no-index)."
        ),
    )
    env_build_timeout_s: float = Field(
        900.0,
        gt=0,
        description="Wall-clock limit of one per-repository environment build (venv + pip install + install command).",
    )
    env_store_prefix: str = Field(
        "eval/envs",
        min_length=1,
        description="Object-store prefix of built per-repository "
        "environments (<prefix>/<sha256>.tar.gz, and <prefix>/by-key/<key>.json).",
    )

    @model_validator(mode="after")
    def _check(self) -> HarnessSettings:
        """cpu_time_s is 0 or >= 1; tmp_size_mb <= memory_mb (/tmp lives in memory)."""
        if self.cpu_time_s and self.cpu_time_s < 1:
            raise ValueError(
                f"cpu_time_s = {self.cpu_time_s} must be >= 1 or 0 (derived from timeout_s = {self.timeout_s})"
            )
        if self.tmp_size_mb > self.memory_mb:
            raise ValueError(
                f"tmp_size_mb = {self.tmp_size_mb} must not exceed memory_mb = {self.memory_mb}: /tmp lives in memory"
            )
        return self

    @property
    def effective_cpu_time_s(self) -> int:
        """CPU seconds per process: set, or the wall-clock timeout rounded up plus a little slack."""
        return self.cpu_time_s or int(self.timeout_s) + 5
