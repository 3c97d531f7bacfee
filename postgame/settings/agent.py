"""Settings of the agent environment (section `agent:` of postgame.yaml): which tools a policy may call, and the
limits that end an episode (evals/agent/).

    agent: {max_steps: 12, tools: [view, edit, run_tests, submit]}      # a short episode without search
    agent: {tools: all}                                                 # bash too: for real checkpoints
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

TOOL_NAMES = ("list_files", "view", "search", "edit", "run_tests", "bash", "submit")
DEFAULT_TOOLS = ("list_files", "view", "search", "edit", "run_tests", "submit")  # bash off for the embedded policy
OUTCOMES = ("submitted", "budget_exhausted", "timeout", "invalid_actions", "infra_error")


def parse_tools(value: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """`all`, a comma-separated string or a list of tool names -> the tool names in canonical order. `submit` is
    always enabled: an episode must be able to end by the policy's choice."""
    if isinstance(value, str):
        names = list(TOOL_NAMES) if value.strip() == "all" else [v.strip() for v in value.split(",") if v.strip()]
    else:
        names = list(value)
    unknown = sorted(set(names) - set(TOOL_NAMES))
    if unknown:
        raise ValueError(f"unknown tool(s) {unknown}; the tools are {list(TOOL_NAMES)} (or 'all')")
    chosen = set(names) | {"submit"}
    return tuple(t for t in TOOL_NAMES if t in chosen)


class AgentSettings(BaseModel):
    """An episode: reset(instance) -> observation; then tool call -> observation until `submit`, a limit or a fault.
    The submitted working copy is graded by the harness, unchanged (reward 1.0 / 0.0, None on infrastructure)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(
        True,
        description=(
            "The policy acts as an agent: traffic, evaluation and the gate run episodes in this environment, and the "
            "base is the agent base (models/base_agent) when `policy.base_model` is empty. false: the policy answers "
            "once (one search/replace completion, checked against the visible tests), from the base in models/base."
        ),
    )
    tools: tuple[str, ...] = Field(
        DEFAULT_TOOLS,
        description=(
            "Tools the policy may call: any of list_files, view, search, edit, run_tests, bash, submit, or `all`; submit "
            "is always on. bash runs one shell command in the episode's sandbox (off by default: the embedded policy "
            "never learned it; turn it on for real checkpoints)."
        ),
    )
    max_steps: int = Field(16, ge=1, le=500, description="Tool calls per episode; one more ends it `budget_exhausted`.")
    step_timeout_s: float = Field(
        60.0,
        gt=0,
        description="Wall-clock limit of one run_tests or bash call (and of each visible-tests run of submit's "
        "review and of a tried edit turn); the sandbox's whole process tree is killed and the episode ends `timeout`.",
    )
    episode_timeout_s: float = Field(
        600.0,
        gt=0,
        description="Wall-clock limit of a whole episode (tools and the "
        "policy's turns); past it the episode ends `timeout`, and no call's run outlasts it.",
    )
    max_observation_chars: int = Field(
        2000,
        ge=200,
        description="An observation longer than this is cut (head and "
        "tail kept, the cut said): tool output must not flood the context.",
    )
    max_invalid_actions: int = Field(
        3,
        ge=1,
        description="Consecutive invalid calls (unknown tool, bad arguments, "
        "a reply with no tool call) that end the episode `invalid_actions`.",
    )
    view_lines: int = Field(80, ge=5, description="Lines `view` shows when no end line is given.")
    grade_unsubmitted: bool = Field(
        False,
        description=(
            "Grade the working copy of an episode that ended without `submit` (budget, timeout, invalid actions), as "
            "SWE-agent's autosubmit does; off = such an episode earns reward 0.0 without a test run."
        ),
    )
    review_on_submit: bool = Field(
        True,
        description=(
            "Before a change is submitted, the visible tests run on it in a fresh copy with the tests as the task "
            "gave them (evals.agent.verify). If one that passed at base fails, errors or is gone, the first such "
            "submit is refused with an observation naming them (the agent may fix or revert and submit again); a "
            "second while they still fail submits no change, and an episode that ends otherwise after a refusal "
            "grades no change either: the single-answer scaffold's rule (scaffold.visible_tests), a patch known to "
            "break a passing test is never submitted. SWE-agent's review_on_submit, with its second submit made "
            "safe. Costs two test runs per submit of a change."
        ),
    )
    observation_format: Literal["text"] = Field(
        "text", description="How tool results are written back to the policy (part of the evaluation cache key)."
    )

    @field_validator("tools", mode="before")
    @classmethod
    def _tools(cls, value: object) -> tuple[str, ...]:
        if isinstance(value, (str, list, tuple)):
            return parse_tools(value)
        raise ValueError(f"tools must be 'all', a comma-separated string or a list, got {type(value).__name__}")
