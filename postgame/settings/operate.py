"""Settings of continuous operation (section `operate:` of postgame.yaml): the deployment's schedule, one cycle at a
time, retries on transient errors, how long a command waits for a service, and access to the stack's servers.

    operate:
      schedule_cron: "0 3 * * *"      # the deployment's schedule (editable in the Prefect UI afterwards)
      concurrency: enqueue            # a second run of the deployment waits (enqueue) or is cancelled (refuse)
      service_timeout_s: 20           # a service that is gone is reported after this long, in one line
      auth: {enabled: true}           # or `postgame up --auth`; passwords from env (see AuthSettings)

Credentials are `SecretStr`: they never appear in a repr, a log line or a report.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator


class AuthSettings(BaseModel):
    """Basic auth on the stack's Prefect server and MLflow (`--app-name basic-auth`). Values are read from the
    environment first: `POSTGAME_AUTH_USER`, `POSTGAME_AUTH_PASSWORD`, `POSTGAME_AUTH_SECRET_KEY`."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(False, description="Turn basic auth on for Prefect and MLflow (`postgame up --auth`).")
    username: str = Field("postgame", description="The one user of the local stack (MLflow's admin, Prefect's user).")
    password: SecretStr = Field(
        SecretStr(""), description="Prefer POSTGAME_AUTH_PASSWORD in the environment; required when auth is on."
    )
    secret_key: SecretStr = Field(
        SecretStr(""),
        description="MLflow's Flask session key (MLFLOW_FLASK_SERVER_SECRET_"
        "KEY); prefer POSTGAME_AUTH_SECRET_KEY; empty = derived.",
    )

    def user(self) -> str:
        return os.environ.get("POSTGAME_AUTH_USER") or self.username

    def secret(self) -> str:
        return os.environ.get("POSTGAME_AUTH_PASSWORD") or self.password.get_secret_value()

    def flask_key(self) -> str:
        import hashlib

        explicit = os.environ.get("POSTGAME_AUTH_SECRET_KEY") or self.secret_key.get_secret_value()
        return explicit or hashlib.sha256(("postgame-flask:" + self.secret()).encode()).hexdigest()


class OperateSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    deployment: str = Field("continuous", description="The deployment's name: `continuous-cycle/<deployment>`.")
    schedule_cron: str = Field(
        "0 3 * * *",
        description="Cron schedule of the deployment (UTC, unless the UI sets a "
        "timezone); empty = no schedule, triggers only.",
    )
    concurrency: Literal["enqueue", "refuse"] = Field(
        "enqueue",
        description="One cycle at a time: a second run of the deployment waits for the first (enqueue) or "
        "is cancelled with a message (refuse).",
    )
    event_trigger: bool = Field(
        True, description="Start a cycle when `postgame.logs.landed` arrives (else: schedule and API only)."
    )
    event_debounce_s: int = Field(
        60, ge=1, description="A burst of `postgame.logs.landed` events within this many seconds starts one cycle."
    )
    runner_port: int = Field(
        4210, ge=1, le=65535, description="`postgame up --serve`: the deployment runner's /health port (loopback)."
    )
    watch_interval_s: float = Field(30.0, gt=0, description="`postgame watch` polls the log source this often.")
    retries: int = Field(
        3,
        ge=0,
        le=10,
        description="Retries of a stage on a transient error (S3, MLflow, Prefect "
        "API unreachable, HTTP 5xx/429); never on bad data or a gate.",
    )
    retry_delay_s: float = Field(2.0, gt=0, description="First retry delay; doubles each retry (with jitter).")
    service_timeout_s: float = Field(
        20.0,
        gt=0,
        le=600,
        description="How long a command waits for a service that does not answer "
        "before it stops with one line naming it.",
    )
    mlflow_http_timeout_s: int = Field(10, ge=1, description="MLFLOW_HTTP_REQUEST_TIMEOUT for the client.")
    mlflow_http_retries: int = Field(
        2,
        ge=0,
        description="MLFLOW_HTTP_REQUEST_MAX_RETRIES for the client (its "
        "default, 7 with backoff, waits minutes on a dead server).",
    )
    mlflow_http_backoff: int = Field(
        1, ge=0, description="MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR for the client (an integer: MLflow parses it as one)."
    )
    auth: AuthSettings = AuthSettings()

    @model_validator(mode="after")
    def _check(self) -> OperateSettings:
        """schedule_cron is empty or has 5 (or 6) fields."""
        fields = self.schedule_cron.split()
        if self.schedule_cron and len(fields) not in (5, 6):
            raise ValueError(
                f"schedule_cron = {self.schedule_cron!r} must have 5 fields (minute hour day month weekday) or be empty"
            )
        return self
