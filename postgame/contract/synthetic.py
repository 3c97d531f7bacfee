"""Synthetic agent sessions that satisfy the contract, for tests and benchmarks (not the traffic simulator).

    from postgame.contract.synthetic import sessions, encode
    data = encode(sessions(1000, seed=1), gzip=True)   # the bytes of one `part-0000.jsonl.gz` object
    sessions(1000, seed=1, version=2)                  # schema v2: tool-using trajectories (OpenAI chat shape)

Deterministic: the same (n, seed, start) gives the same records, so a test can re-send the very same lines.
"""

from __future__ import annotations

import gzip as gzip_module
import json
import random
import uuid
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from postgame.contract.spec import SCHEMA_VERSION

TOOLS = ("bash", "str_replace_editor", "pytest")

MODELS = [("postgame-policy", "3"), ("postgame-policy", "4"), ("qwen2-tiny", "2026-11-01")]
REPOS = ["textkit/textkit", "graphlib2/graphlib2", "datespan/datespan", "acme/payments", "acme/billing"]
WORDS = (
    "the function returns wrong value when input is empty list and should raise error instead of "
    "crashing on unicode names in path with trailing slash after refactor of parser module tests fail"
).split()
STATUS_WEIGHTS = {"resolved": 0.35, "unresolved": 0.45, "error": 0.1, "abandoned": 0.1}
FEEDBACK_WEIGHTS = {"accepted": 0.3, "rejected": 0.2, "edited": 0.1, "none": 0.4}
EPOCH = datetime(2026, 11, 1, tzinfo=UTC)


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(lo, hi)))


def _pick(rng: random.Random, weights: dict[str, float]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _tool_turns(rng: random.Random, messages: list[dict]) -> None:
    """Assistant turns that call tools (one to three calls each, `content` null or a thought), each answered."""
    for turn in range(rng.randint(1, 3)):
        calls: list[dict[str, Any]] = [
            {
                "id": f"call_{rng.getrandbits(48):012x}",
                "type": "function",
                "function": {
                    "name": rng.choice(TOOLS),
                    "arguments": json.dumps({"command": _text(rng, 2, 6), "turn": turn}),
                },
            }
            for _ in range(rng.randint(1, 3))
        ]
        messages.append(
            {"role": "assistant", "content": None if rng.random() < 0.5 else _text(rng, 5, 20), "tool_calls": calls}
        )
        messages += [
            {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": _text(rng, 5, 30)}
            for call in calls
        ]


def session(rng: random.Random, when: datetime, version: int = SCHEMA_VERSION) -> dict:
    """One valid session drawn from `rng` (version 2: a tool-using trajectory)."""
    model_name, model_version = rng.choice(MODELS)
    repo = rng.choice(REPOS)
    instance = f"{repo.replace('/', '__')}-{rng.randint(1, 400)}"
    messages = [
        {"role": "system", "content": "You are a coding agent. Fix the issue; reply with a patch."},
        {"role": "user", "content": _text(rng, 20, 60)},
    ]
    if version == 2:
        _tool_turns(rng, messages)
        messages.append({"role": "assistant", "content": _text(rng, 10, 40)})
    else:
        for _ in range(rng.randint(1, 3)):
            messages.append({"role": "assistant", "content": _text(rng, 10, 40)})
            messages.append(
                {"role": "tool", "name": rng.choice(["bash", "edit", "pytest"]), "content": _text(rng, 5, 30)}
            )
    status = _pick(rng, STATUS_WEIGHTS)
    passed = rng.randint(0, 40)
    prompt_tokens = max(0, int(rng.gauss(3000, 800)))
    completion_tokens = max(0, int(rng.gauss(400, 120)))
    return {
        "schema_version": version,
        "session_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "agent": {"model_name": model_name, "model_version": model_version},
        "task": {
            "instance_id": instance,
            "repo": repo,
            "problem_statement": _text(rng, 30, 90),
            "environment": f"s3://postgame/envs/{instance}.tar.gz" if rng.random() < 0.8 else None,
        },
        "messages": messages,
        "patch": ""
        if status == "abandoned"
        else f"--- a/{repo}/core.py\n+++ b/{repo}/core.py\n@@ -1 +1 @@\n-{_text(rng, 3, 8)}\n+{_text(rng, 3, 8)}\n",
        "outcome": {
            "status": status,
            "tests_passed": passed,
            "tests_failed": 0 if status == "resolved" else rng.randint(1, 10),
            "feedback": _pick(rng, FEEDBACK_WEIGHTS),
        },
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "latency_ms": round(rng.lognormvariate(8.5, 0.5), 1),
            "cost_usd": round((prompt_tokens * 0.15 + completion_tokens * 0.6) / 1e6, 6),
        },
    }


def sessions(n: int, seed: int = 0, start: datetime = EPOCH, version: int = SCHEMA_VERSION) -> Iterator[dict]:
    """`n` valid sessions of schema `version`, one second apart from `start`."""
    rng = random.Random(seed)
    for i in range(n):
        yield session(rng, start + timedelta(seconds=i), version)


def encode(records: Iterable[dict], gzip: bool = False) -> bytes:
    """JSON Lines bytes of `records` (gzip-compressed when asked), as a log object would hold them."""
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
    return gzip_module.compress(data, compresslevel=6, mtime=0) if gzip else data
