"""Schema-v2 records as a tool-using agent logs them through an OpenAI-compatible client, and broken variants.

`agent_session()` is written by hand, as SWE-agent / OpenHands / mini-swe-agent write a session: a system prompt, the
task, an assistant turn that only calls two tools (`content: null`), both answered, a turn that thinks and edits, a
test run, the final reply. The assistant messages carry what the OpenAI SDK's `model_dump()` adds (`refusal`,
`annotations`): unknown fields, kept.
"""

from __future__ import annotations

import json

SLUG_BEFORE = "def slugify(text):\n    first = text[0]\n"
SLUG_AFTER = "def slugify(text):\n    if not text:\n        return ''\n    first = text[0]\n"


def _call(call_id: str, name: str, **arguments) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def agent_session(session_id: str = "swe-2b7e41c0-tool-use") -> dict:
    """One resolved tool-using session in the OpenAI chat-completions shape (schema v2)."""
    return {
        "schema_version": 2,
        "session_id": session_id,
        "timestamp": "2026-12-02T09:14:55.120Z",
        "agent": {"model_name": "postgame-policy", "model_version": "5"},
        "task": {
            "instance_id": "textkit__textkit-17",
            "repo": "textkit/textkit",
            "problem_statement": "slugify('') raises IndexError instead of returning ''",
            "environment": "s3://postgame/envs/textkit__textkit-17.tar.gz",
        },
        "messages": [
            {
                "role": "system",
                "content": "You are a coding agent with tools: bash, str_replace_editor. Fix the "
                "issue in /repo, then reply with a summary.",
            },
            {"role": "user", "content": "<issue>slugify('') raises IndexError instead of returning ''</issue>"},
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "annotations": [],
                "tool_calls": [
                    _call("call_Xk2bQ9vTqz", "bash", command="grep -rn 'def slugify' textkit"),
                    _call("call_Ld81ZrWm3c", "str_replace_editor", command="view", path="/repo/textkit/slug.py"),
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_Xk2bQ9vTqz",
                "name": "bash",
                "content": "textkit/slug.py:4:def slugify(text):",
            },
            {
                "role": "tool",
                "tool_call_id": "call_Ld81ZrWm3c",
                "name": "str_replace_editor",
                "content": "     1\timport re\n     2\t\n     3\t\n     4\tdef slugify(text):\n     5\t    first = text[0]",
            },
            {
                "role": "assistant",
                "content": "text[0] is read before any check for an empty string; guard it.",
                "refusal": None,
                "annotations": [],
                "tool_calls": [
                    _call(
                        "call_9QeP0sYb2d",
                        "str_replace_editor",
                        command="str_replace",
                        path="/repo/textkit/slug.py",
                        old_str=SLUG_BEFORE,
                        new_str=SLUG_AFTER,
                    )
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_9QeP0sYb2d",
                "name": "str_replace_editor",
                "content": "The file /repo/textkit/slug.py has been edited.",
            },
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "annotations": [],
                "tool_calls": [_call("call_r4TnHc8kLp", "bash", command="python -m pytest -q tests/test_slug.py")],
            },
            {"role": "tool", "tool_call_id": "call_r4TnHc8kLp", "name": "bash", "content": "5 passed in 0.03s"},
            {
                "role": "assistant",
                "content": "Fixed: slugify('') now returns ''; the slug tests pass.",
                "refusal": None,
                "annotations": [],
            },
        ],
        "patch": "--- a/textkit/slug.py\n+++ b/textkit/slug.py\n@@ -4,2 +4,4 @@\n def slugify(text):\n"
        "+    if not text:\n+        return ''\n     first = text[0]\n",
        "outcome": {"status": "resolved", "tests_passed": 5, "tests_failed": 0, "feedback": "accepted"},
        "usage": {"prompt_tokens": 5210, "completion_tokens": 388, "latency_ms": 14250.5, "cost_usd": 0.001015},
    }


def broken(session_id: str, change) -> dict:
    """`agent_session(session_id)` with `change(record)` applied (it edits the record in place)."""
    record = agent_session(session_id)
    change(record)
    return record


def orphan_tool_message(session_id: str = "swe-orphan") -> dict:
    """A tool message answering a call no earlier message made (a log that lost an assistant turn)."""

    def change(r):
        r["messages"][6]["tool_call_id"] = "call_neverMade01"

    return broken(session_id, change)


def bad_arguments(session_id: str = "swe-bad-arguments") -> dict:
    """A call whose arguments are not JSON (a model that wrote Python instead)."""

    def change(r):
        r["messages"][2]["tool_calls"][1]["function"]["arguments"] = "{'command': 'view', path: /repo}"

    return broken(session_id, change)
