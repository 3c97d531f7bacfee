"""How the messages of a version 2 session must follow each other: tool calls and their answers, paired and in order.

    problem = trajectory_problem(record["messages"])   # -> TrajectoryProblem(reason, path, message) | None

Run on a record that passed the contract (`check.check_record`). Ingest quarantines a session with a problem under
the problem's reason; the GX suite checks the same rules on the snapshot (columns derived in
`postgame.validate.frames`). A trajectory is valid when (each rule with the reason a breach is quarantined under):

1. `orphan_tool_message`: every tool message answers a call made earlier in its session: its `tool_call_id` is the id
   of a tool call of an earlier assistant message.
2. `message_order`:
   - the first message is a system or a user message;
   - a tool message comes right after an assistant message with tool calls or after another tool message, and
     answers a call of the assistant message that its run of tool messages follows;
   - the calls of one message have distinct ids, and each is answered by exactly one tool message of the run right
     after it, except the calls of the session's last message: a session may end on a call that was never run (an
     agent's `finish` tool, a session cut off).

A call whose `function.arguments` is not a JSON text (RFC 8259: no NaN, no Infinity) is the model's mistake, not the
log's: the agent wrote it and the environment answered it ("the arguments are not JSON"), so the session is a true
record of what happened and is kept (until 2026-12-07 it was quarantined as `tool_arguments`, and the traffic of a
weaker policy, which wrote such a call in about 30% of its sessions, stopped every cycle at the quarantine-rate
check). `malformed_calls` counts them; curation never gives such a session to SFT to imitate.

This is the conversation the OpenAI chat-completions API accepts (it refuses a tool message without its call and a
call left unanswered), so a kept trajectory can be replayed, or trained on, as it is (a malformed call aside: some
servers, vLLM among them, refuse to render one in a history).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from postgame.contract.check import _show

TrajectoryReason = Literal["orphan_tool_message", "message_order"]
TRAJECTORY_REASONS: tuple[TrajectoryReason, ...] = ("orphan_tool_message", "message_order")
FIRST_ROLES = ("system", "user")


@dataclass(frozen=True)
class TrajectoryProblem:
    reason: TrajectoryReason
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def _no_constants(name: str):
    raise ValueError(f"{name} is not valid JSON")


def is_json(text: str) -> bool:
    """True when `text` is one JSON value (surrounding whitespace allowed; NaN and Infinity are not JSON)."""
    try:
        json.loads(text, parse_constant=_no_constants)
    except (ValueError, RecursionError):
        return False
    return True


def _calls(i: int, message: dict) -> tuple[dict[str, bool], TrajectoryProblem | None]:
    """The ids of an assistant message's calls (each not yet answered), or the first problem of its calls."""
    ids: dict[str, bool] = {}
    for j, call in enumerate(message.get("tool_calls") or ()):
        if call["id"] in ids:
            return ids, TrajectoryProblem(
                "message_order",
                f"messages[{i}].tool_calls[{j}].id",
                f"{_show(call['id'])} is the id of an earlier call of the same message",
            )
        ids[call["id"]] = False
    return ids, None


def malformed_calls(messages: list[dict]) -> int:
    """How many tool calls of a version 2 session's messages have arguments that are not a JSON text."""
    return sum(
        not is_json(call["function"]["arguments"])
        for message in messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or ()
    )


def _unanswered(owner: int, run: dict[str, bool], closed_by: str) -> TrajectoryProblem | None:
    for call_id, answered in run.items():
        if not answered:
            return TrajectoryProblem(
                "message_order",
                f"messages[{owner}].tool_calls",
                f"the call {_show(call_id)} is not answered {closed_by}",
            )
    return None


def trajectory_problem(messages: list[dict]) -> TrajectoryProblem | None:
    """The first problem of a version 2 session's messages (see the module docstring), or None."""
    earlier: set[str] = set()  # ids of every call made so far
    run: dict[str, bool] | None = None  # the calls the current run of tool messages answers -> answered yet
    owner = -1  # the assistant message that made them
    for i, message in enumerate(messages):
        role = message["role"]
        if i == 0 and role not in FIRST_ROLES:
            return TrajectoryProblem(
                "message_order", "messages[0].role", f"a session starts with a system or a user message, not {role}"
            )
        if role == "tool":
            call_id = message["tool_call_id"]
            if call_id not in earlier:
                return TrajectoryProblem(
                    "orphan_tool_message",
                    f"messages[{i}].tool_call_id",
                    f"{_show(call_id)} answers no tool call made earlier in the session",
                )
            if run is None:
                return TrajectoryProblem(
                    "message_order",
                    f"messages[{i}]",
                    "a tool message must follow an assistant message with tool_calls or another tool message",
                )
            if call_id not in run:
                return TrajectoryProblem(
                    "message_order",
                    f"messages[{i}].tool_call_id",
                    f"{_show(call_id)} is a call of an earlier message, not of messages[{owner}] "
                    f"that this tool message follows",
                )
            if run[call_id]:
                return TrajectoryProblem(
                    "message_order", f"messages[{i}].tool_call_id", f"the call {_show(call_id)} is answered twice"
                )
            run[call_id] = True
            continue
        if run is not None:
            problem = _unanswered(owner, run, f"before messages[{i}]")
            if problem is not None:
                return problem
            run = None
        if role == "assistant" and message.get("tool_calls"):
            calls, problem = _calls(i, message)
            if problem is not None:
                return problem
            run, owner = calls, i
            earlier.update(calls)
    if run is not None and owner != len(messages) - 1:  # the calls of the last message may stay unanswered
        return _unanswered(owner, run, "by the tool messages after it")
    return None
