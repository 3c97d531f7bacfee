"""Settings of the agent scaffold around the policy (section `scaffold:` of postgame.yaml): what happens between the
model's completions and the one answer that is submitted (models/answer.py).

    scaffold: {check_edits: true, candidates: 6}    # default: submit the likeliest edit that applies and changes code
    scaffold: {check_edits: false}                  # submit the completion exactly as generated
    scaffold: {visible_tests: false}                # do not run the visible tests before submitting
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ScaffoldSettings(BaseModel):
    """An agent scaffold checks an edit before it submits it, as SWE-agent's edit tool and Aider do: an edit whose
    SEARCH text is not in the code shown, or that changes nothing, is not submitted; and, as a coding agent runs the
    tests it can see before it submits (Agentless's regression-test filtering), an edit that breaks a visible test is
    not submitted either. The harness grades the one submitted answer against the hidden tests."""

    model_config = ConfigDict(extra="forbid")

    check_edits: bool = Field(
        True,
        description="Submit the likeliest candidate whose edit is well-formed, copies its "
        "SEARCH text from the prompt and changes something (else the first).",
    )
    candidates: int = Field(
        6,
        ge=1,
        le=32,
        description="Completions considered per answer: beams for a greedy "
        "answer (deterministic), independent draws for a sampled one.",
    )
    repoint_paths: bool = Field(
        True,
        description="An edit whose path names no file the prompt shows goes to the one shown file whose code holds "
        "its SEARCH text, as Aider's edit-block coder retries a failed edit on the chat's other files "
        "(evals.prompts.repoint).",
    )
    visible_tests: bool = Field(
        True,
        description="Run the task's visible tests (its existing tests; never the hidden FAIL_TO_PASS ones) in the "
        "sandbox against each well-formed candidate, likeliest first, and submit the first that breaks none; when every "
        "candidate breaks one, submit no change (evals/agent/verify.py).",
    )
    reproduce: bool = Field(
        True,
        description="An agent's edit turn is first looked for among the candidates whose edits make the issue's own "
        "example behave as the issue says it should (its ```python block run in the sandbox, then each `EXPR` it "
        "says it expected `VALUE` from, evals/agent/repro.py) and keep the visible tests passing, as a coding agent "
        "reruns its reproduction after a fix (SWE-agent's reproduce.py, Agentless's reproduction test). With none, "
        "or a statement that states nothing checkable, the visible tests' rule as before. Needs visible_tests.",
    )
    reproduce_draws: int = Field(
        0,
        ge=0,
        le=64,
        description="With reproduce: when none of the turn's candidates makes the issue's example behave, this many "
        "more are drawn (policy.temperature) and tried the same way (sampling many patches and keeping the one "
        "that passes the reproduction, as Agentless does). 0: none.",
    )
