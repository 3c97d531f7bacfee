"""Settings of the agent scaffold around the policy (section `scaffold:` of postgame.yaml): what happens between the
model's completions and the one answer that is submitted (models/answer.py).

    scaffold: {check_edits: true, candidates: 6}    # default: submit the likeliest edit that applies and changes code
    scaffold: {check_edits: false}                  # submit the completion exactly as generated
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ScaffoldSettings(BaseModel):
    """An agent scaffold checks an edit before it submits it, as SWE-agent's edit tool and Aider do: an edit whose
    SEARCH text is not in the code shown, or that changes nothing, is not submitted. No test runs: the harness grades
    the one submitted answer."""

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
