"""The answer the agent submits: the policy's completions, checked by the scaffold (`scaffold:` settings).

    answers = submit(policy, prompts, cfg.scaffold, greedy=True)            # evaluation: deterministic
    answers = submit(policy, prompts, cfg.scaffold, seed=7)                 # traffic, pass@k: sampled

A small model's likeliest completion is often an edit that changes nothing, or whose SEARCH text is not in the code it
was shown. An agent scaffold does not submit such an edit (SWE-agent's edit tool and Aider reject it and ask again):
with `scaffold.check_edits`, `candidates` completions are made — the beams of a beam search for a greedy answer, so
it stays deterministic; independent draws for a sampled one — and the likeliest that passes `checked_edit` is
submitted, else the first. Nothing is run: the check reads the completion and the prompt only, and the harness
grades the one answer submitted. Used wherever the policy answers a task: traffic, evaluation and `measure`.
GRPO's own generations (inside TRL) are not checked: an unusable edit earns reward 0 there, which teaches the policy
what the scaffold would have caught.
"""

from __future__ import annotations

import time
from dataclasses import replace

from evals.harness.searchreplace import SearchReplaceError, parse_edits
from models.policy import Generation, Policy
from postgame.settings.scaffold import ScaffoldSettings


def checked_edit(completion: str, prompt: str) -> bool:
    """Would a scaffold submit this completion? Edit blocks that parse, each with a non-blank SEARCH text found in
    the prompt (the code shown) and a REPLACE text that differs from it."""
    try:
        edits = parse_edits(completion)
    except (SearchReplaceError, ValueError):
        return False
    return bool(edits) and all(e.search.strip() and e.search in prompt and e.search != e.replace for e in edits)


def pick(candidates: list[Generation], prompt: str) -> Generation:
    """The first (likeliest) candidate a scaffold would submit, else the first; its token count and latency are those
    of every candidate made (what serving the answer cost)."""
    chosen = next((c for c in candidates if checked_edit(c.text, prompt)), candidates[0])
    return replace(
        chosen,
        completion_tokens=sum(c.completion_tokens for c in candidates),
        latency_ms=sum(c.latency_ms for c in candidates),
    )


def submit(
    policy: Policy, prompts: list[str], scaffold: ScaffoldSettings, *, greedy: bool = False, seed: int | None = None
) -> list[Generation]:
    """One answer per prompt (see the module docstring)."""
    if not scaffold.check_edits or scaffold.candidates == 1:
        return policy.generate(prompts, seed=seed, greedy=greedy)
    if greedy and policy.settings.engine == "transformers":
        return [pick(_beams(policy, prompt, scaffold.candidates), prompt) for prompt in prompts]
    seed = policy.settings.seed if seed is None else seed
    draws = [
        policy.generate(prompts, seed=seed + 7919 * n, greedy=greedy and n == 0) for n in range(scaffold.candidates)
    ]
    return [pick([d[i] for d in draws], prompt) for i, prompt in enumerate(prompts)]


def _beams(policy: Policy, prompt: str, n: int) -> list[Generation]:
    """The n beams of a beam search (likeliest first): deterministic, like greedy decoding."""
    import torch

    model, tok = policy._load()  # the transformers engine of the policy (same package)
    ids = tok(prompt, return_tensors="pt", truncation=True, max_length=policy.settings.max_prompt_tokens)
    start = time.perf_counter()
    with torch.no_grad():
        out = model.generate(
            **ids,
            max_new_tokens=policy.settings.max_new_tokens,
            num_beams=n,
            num_return_sequences=n,
            do_sample=False,
            early_stopping=True,
            pad_token_id=tok.pad_token_id,
        )
    latency = (time.perf_counter() - start) * 1000 / n  # one search made them all: its time shared
    width = ids["input_ids"].shape[1]
    result = []
    for row in out:
        completion = row[width:]
        completion = completion[completion != tok.pad_token_id]
        result.append(
            Generation(tok.decode(completion, skip_special_tokens=True), int(width), int(completion.shape[0]), latency)
        )
    return result
