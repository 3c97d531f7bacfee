"""Settings of the demo (`postgame demo`, `make demo`) and of the cost accounting every cycle reports."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class DemoSettings(BaseModel):
    """`postgame demo`: the stack, the base policy, then `cycles` rounds of production traffic → one cycle."""

    model_config = ConfigDict(extra="forbid")

    cycles: int = Field(
        3,
        ge=1,
        description="Rounds of traffic → cycle. 3 takes about 20 minutes on 2 cores after "
        "set-up with the default world (the first round also builds nothing "
        "that is cached).",
    )
    sessions: int = Field(96, ge=1, description="Simulated production sessions per round, before each cycle.")
    log_file: str = Field(
        "logs/postgame.log",
        description="Library warnings, TRL's per-step logs and MLflow's run "
        "links go here (relative to home), not to the console.",
    )


class CostSettings(BaseModel):
    """Prices for what a cycle costs: compute seconds, and the serving cost of the traffic it learned from."""

    model_config = ConfigDict(extra="forbid")

    usd_per_cpu_hour: float = Field(0.05, ge=0, description="Price of one core-hour.")
    usd_per_gpu_hour: float = Field(2.50, ge=0, description="Price of one GPU-hour (training with train.use_gpu).")
    serving: Literal["logged", "tokens", "none"] = Field(
        "logged",
        description="How the serving cost of the traffic a cycle learns from counts in its cost: the sum of "
        "the logs' usage.cost_usd (logged), generated tokens × usd_per_1m_generated_tokens "
        "(tokens), or not at all (none).",
    )
    usd_per_1m_generated_tokens: float = Field(
        0.60, ge=0, description="Serving price of one million generated (completion) tokens, for serving: tokens."
    )
