"""A policy's episode in the environment, recorded as OpenAI chat-completions messages.

    traj = run_episode(env, instance, policy)        # policy.act(messages, tools, trial) -> Turn, until it ends

The trajectory is what an OpenAI-compatible agent logs: a system and a user message, then assistant messages with
`tool_calls` (`id`, `type: "function"`, `function: {name, arguments}` with `arguments` a JSON string; `content` may
be None) each answered by `tool` messages carrying its `tool_call_id`. A reply with no tool call, and a call whose
arguments are not a JSON object, are invalid calls of the environment (their feedback is a user message or the tool
message). `ScriptedPolicy` plays a fixed list of calls: what the tests and `postgame agent replay` use.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from evals.agent.env import AgentEnvironment, EpisodeResult
from evals.harness.instance import Instance

SYSTEM_PROMPT = (
    "You are a coding agent working in a Python repository. Find the bug the task describes, fix it "
    "with the tools, run the visible tests, and submit when they pass. Call one tool per turn."
)


@dataclass(frozen=True)
class Turn:
    """One assistant turn: the message (OpenAI shape) and what making it cost."""

    message: dict[str, Any]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0


class Trial(Protocol):
    """The environment's check of a candidate turn's edits (AgentEnvironment.try_edits): would they keep the visible
    tests passing (with `reproduce`: and make the issue's example behave as stated)? None: it could not tell."""

    def __call__(self, edits: list[Any], reproduce: bool = False) -> bool | None: ...


class AgentPolicy(Protocol):
    name: str

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], trial: Trial | None = None) -> Turn:
        """The next assistant turn; a policy that weighs candidate turns may ask `trial` about their edits."""
        ...


@dataclass
class Trajectory:
    instance_id: str
    messages: list[dict[str, Any]]
    result: EpisodeResult
    turns: int
    prompt_tokens: int
    completion_tokens: int
    policy: str = ""
    tools: list[str] = field(default_factory=list)

    def to_record(self) -> dict[str, Any]:
        r = self.result
        return {
            "instance_id": self.instance_id,
            "policy": self.policy,
            "outcome": r.outcome,
            "reward": r.reward,
            "resolved": r.resolved,
            "p2p_broken": r.p2p_broken,
            "steps": r.steps,
            "invalid_calls": r.invalid_calls,
            "turns": self.turns,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": r.seconds,
            "reason": r.reason,
            "patch": r.patch,
            "tools": self.tools,
            "visible_tests": r.visible_tests,
            "hidden_tests": r.hidden_tests,
            "messages": self.messages,
        }


def tool_schemas(env: AgentEnvironment) -> list[dict[str, Any]]:
    """The enabled tools as JSON schemas (transformers' `get_json_schema`, what `apply_chat_template(tools=)` and
    TRL build from the same methods)."""
    from transformers.utils import get_json_schema

    return [get_json_schema(getattr(env, name)) for name in env.tool_names]


def call_message(call_id: str, name: str, arguments: Any, content: str | None = None) -> dict:
    """An assistant message with one tool call; `arguments` a JSON-able value, or a string sent as it is."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}],
    }


def run_episode(
    env: AgentEnvironment,
    instance: Instance,
    policy: AgentPolicy,
    *,
    context: str | None = None,
    system_prompt: str = SYSTEM_PROMPT,
    max_turns: int | None = None,
) -> Trajectory:
    """Play one episode: reset (with `context` as the task text, when given), then the policy's turns until the
    environment says it is over."""
    tools = tool_schemas(env)
    first = env.reset(instance, context=context)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}, {"role": "user", "content": first}]
    turns = prompt_tokens = completion_tokens = 0
    limit = max_turns or env.settings.max_steps + env.settings.max_invalid_actions + 1
    while not env.done and turns < limit:
        turn = policy.act(messages, tools, trial=env.try_edits)
        turns += 1
        prompt_tokens += turn.prompt_tokens
        completion_tokens += turn.completion_tokens
        take_turn(env, messages, turn.message)
    if not env.done:
        env.get_reward()  # ends it: the policy stopped before the environment did
    return Trajectory(
        instance.instance_id,
        messages,
        env.result(),
        turns,
        prompt_tokens,
        completion_tokens,
        getattr(policy, "name", ""),
        list(env.tool_names),
    )


def take_turn(env: AgentEnvironment, messages: list[dict[str, Any]], turn: dict[str, Any]) -> None:
    """Append the assistant message `turn` and what the environment answers: a tool message per call, or a user
    message saying the reply had no tool call (an invalid call)."""
    message = {"role": "assistant", "content": turn.get("content")}
    calls = turn.get("tool_calls") or []
    if calls:
        message["tool_calls"] = calls
    messages.append(message)
    if not calls:
        messages.append({"role": "user", "content": env.invalid("the reply has no tool call")})
        return
    for call in calls:
        fn = call.get("function", {})
        obs = _dispatch(env, fn.get("name", ""), fn.get("arguments", ""))
        messages.append(
            {"role": "tool", "tool_call_id": call.get("id", ""), "name": fn.get("name", ""), "content": obs}
        )


def _dispatch(env: AgentEnvironment, name: str, arguments: Any) -> str:
    if env.done:
        return f"The episode is over ({env.outcome}): no more tool calls."
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
    except json.JSONDecodeError as exc:
        return env.invalid(f"the arguments of {name!r} are not JSON: {exc}")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return env.invalid(f"the arguments of {name!r} must be a JSON object, got {type(args).__name__}")
    return env.step(name, args).observation


class ScriptedPolicy:
    """Plays `calls` ({"tool": NAME, "args": {...}}) in order, one per turn; then replies without a tool call."""

    def __init__(self, calls: Iterable[Mapping[str, Any]], name: str = "script"):
        self.calls, self.name, self._next = list(calls), name, 0

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], trial: Trial | None = None) -> Turn:
        if self._next >= len(self.calls):
            return Turn({"role": "assistant", "content": "(the script has no more calls)"})
        call = self.calls[self._next]
        self._next += 1
        start = time.perf_counter()
        msg = call_message(f"call_{self._next}", str(call.get("tool", "")), call.get("args", {}))
        return Turn(msg, latency_ms=(time.perf_counter() - start) * 1000)


def script_for(lines: Iterable[Mapping[str, Any]], instance_id: str) -> list[dict[str, Any]]:
    """The calls of a replay script that apply to `instance_id`: lines without `instance_id`, and its own."""
    return [dict(line) for line in lines if line.get("instance_id") in (None, instance_id)]
