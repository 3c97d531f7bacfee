"""The answer the agent submits: the policy's completions, checked by the scaffold (`scaffold:` settings).

    answers = submit(policy, prompts, cfg.scaffold, greedy=True)            # evaluation: deterministic
    answers = submit(policy, prompts, cfg.scaffold, seed=7)                 # traffic, pass@k: sampled
    answers = submit(policy, prompts, cfg.scaffold, greedy=True, instances=tasks, harness=cfg.eval)  # + visible tests

A small model's likeliest completion is often an edit that changes nothing, or whose SEARCH text is not in the code it
was shown. An agent scaffold does not submit such an edit (SWE-agent's edit tool and Aider reject it and ask again):
with `scaffold.check_edits`, `candidates` completions are made — the beams of a beam search for a greedy answer, so
it stays deterministic; independent draws for a sampled one, one batched sampling call per prompt — and the likeliest that passes `checked_edit` is
submitted, else the first. With `scaffold.repoint_paths` an edit whose path names no file the prompt shows goes to
the one shown file that holds its SEARCH text first (`repointed`: a small model half-remembers paths).

A coding agent also runs the tests it can see before it submits. With `scaffold.visible_tests` and the tasks given
(`instances`), each well-formed candidate, likeliest first, is applied to the task's visible tree and its visible
tests are run in the sandbox (`evals.agent.verify`: Agentless's regression-test filtering; the hidden FAIL_TO_PASS
tests never run); the first that breaks none is submitted, and when every candidate breaks one the scaffold submits
no change (`ABSTAIN`) rather than a patch it saw break the code. The time those runs take is part of the answer's
latency. Used wherever the policy answers a task: traffic, evaluation and `measure`. GRPO's own generations (inside
TRL) are not checked: an unusable edit earns reward 0 there, which teaches the policy what the scaffold would have
caught.
"""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from evals.harness.searchreplace import SearchReplaceError, parse_edits
from models.generation import generate_n
from models.policy import Generation, Policy
from models.tokenizer import prompt_batch
from postgame.settings.harness import HarnessSettings
from postgame.settings.scaffold import ScaffoldSettings

log = logging.getLogger("postgame.answer")

ABSTAIN = "No change: every edit I found breaks a visible test."


def checked_edit(completion: str, prompt: str) -> bool:
    """Would a scaffold submit this completion? Edit blocks that parse, each with a non-blank SEARCH text found in
    the prompt (the code shown) and a REPLACE text that differs from it."""
    try:
        edits = parse_edits(completion)
    except (SearchReplaceError, ValueError):
        return False
    return bool(edits) and all(e.search.strip() and e.search in prompt and e.search != e.replace for e in edits)


def repointed(completion: str, prompt: str) -> str:
    """`completion` with its edits pointed at the files `prompt` shows (`evals.prompts.repoint`); unchanged when
    none needs it or it holds no edit block that parses."""
    from evals.prompts import render_edits, repoint, shown_code

    try:
        edits = parse_edits(completion)
    except (SearchReplaceError, ValueError):
        return completion
    moved = repoint(edits, shown_code(prompt))
    return completion if moved == edits else render_edits(moved)


def _spent(chosen: Generation, candidates: list[Generation], extra_ms: float = 0.0) -> Generation:
    """`chosen` with the token count and latency of every candidate made (what serving the answer cost)."""
    return replace(
        chosen,
        completion_tokens=sum(c.completion_tokens for c in candidates),
        latency_ms=sum(c.latency_ms for c in candidates) + extra_ms,
    )


def pick(candidates: list[Generation], prompt: str) -> Generation:
    """The first (likeliest) candidate a scaffold would submit, else the first."""
    return _spent(next((c for c in candidates if checked_edit(c.text, prompt)), candidates[0]), candidates)


def pick_verified(
    candidates: list[Generation], prompt: str, instance, harness: HarnessSettings, repos_dir: Path | None = None
) -> Generation:
    """The first well-formed candidate that breaks no visible test of `instance`, else `ABSTAIN` (no change; the
    first candidate when none is well-formed); a candidate whose patch an earlier one had is not run again."""
    from evals.agent.verify import VisibleTests
    from evals.agent.workspace import WorkspaceError
    from evals.prompts import extract_patch

    start = time.perf_counter()
    tried: set[str] = set()
    order = [c for c in candidates if checked_edit(c.text, prompt)]
    chosen = None
    if order:
        try:
            with VisibleTests(instance, harness, repos_dir=repos_dir) as tests:
                for c in order:
                    patch = extract_patch(c.text)
                    if patch in tried:
                        continue
                    tried.add(patch)
                    if tests.check(patch).passed:
                        chosen = c
                        break
        except WorkspaceError as exc:  # the check could not run (the infrastructure's fault): answer unchecked
            log.warning("visible tests of %s could not run (%s): the answer is not checked", instance.instance_id, exc)
            return pick(candidates, prompt)
    if chosen is None:
        chosen = replace(candidates[0], text=ABSTAIN) if order else candidates[0]
    return _spent(chosen, candidates, (time.perf_counter() - start) * 1000)


def submit(
    policy: Policy,
    prompts: list[str],
    scaffold: ScaffoldSettings,
    *,
    greedy: bool = False,
    seed: int | None = None,
    instances: list | None = None,
    harness: HarnessSettings | None = None,
) -> list[Generation]:
    """One answer per prompt (see the module docstring); `instances` (the tasks, in prompt order) and `harness`
    turn on the visible-tests check where `scaffold.visible_tests` asks for it."""
    verify = scaffold.visible_tests and instances is not None and harness is not None
    if not verify and (not scaffold.check_edits or scaffold.candidates == 1):
        answers = policy.generate(prompts, seed=seed, greedy=greedy)
        if not scaffold.repoint_paths:
            return answers
        return [replace(a, text=repointed(a.text, p)) for a, p in zip(answers, prompts)]
    pools = candidates(policy, prompts, scaffold.candidates, greedy=greedy, seed=seed)
    if scaffold.repoint_paths:
        pools = [[replace(c, text=repointed(c.text, p)) for c in pool] for pool, p in zip(pools, prompts)]
    if not verify:
        return [pick(pool, prompt) for pool, prompt in zip(pools, prompts)]
    assert instances is not None and harness is not None
    if len(instances) != len(prompts):
        raise ValueError(f"{len(instances)} instances for {len(prompts)} prompts")
    workers = max(1, min(len(prompts), harness.workers or os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:  # each check is a sandboxed subprocess
        return list(pool.map(lambda c, p, i: pick_verified(c, p, i, harness), pools, prompts, instances))


def candidates(
    policy: Policy, prompts: list[str], n: int, *, greedy: bool = False, seed: int | None = None
) -> list[list[Generation]]:
    """`n` completions per prompt, likeliest first for a greedy answer (the beams of a beam search), else
    independent draws (seeded)."""
    if greedy and policy.settings.engine == "transformers":
        return [_beams(policy, prompt, n) for prompt in prompts]
    seed = policy.settings.seed if seed is None else seed
    if not greedy and policy.settings.engine == "transformers":  # one batched sampling call per prompt: ~2x faster
        return [_draws(policy, prompt, n, seed + i) for i, prompt in enumerate(prompts)]
    draws = [policy.generate(prompts, seed=seed + 7919 * k, greedy=greedy and k == 0) for k in range(n)]
    return [[d[i] for d in draws] for i in range(len(prompts))]


def _draws(policy: Policy, prompt: str, n: int, seed: int) -> list[Generation]:
    """n independent samples of one prompt (temperature `policy.temperature`), drawn as one batch: seeded, so the
    same seed gives the same draws."""
    import torch

    model, tok = policy._load()
    ids = prompt_batch(tok, prompt, policy.settings.max_prompt_tokens)
    torch.manual_seed(seed)
    start = time.perf_counter()
    with torch.no_grad():
        out = generate_n(
            model,
            ids,
            n,
            max_new_tokens=policy.settings.max_new_tokens,
            do_sample=True,
            temperature=policy.settings.temperature,
            num_return_sequences=n,
            pad_token_id=tok.pad_token_id,
        )
    return _rows(tok, out, ids["input_ids"].shape[1], (time.perf_counter() - start) * 1000 / n)


def _rows(tok, out, width: int, latency_ms: float) -> list[Generation]:
    """The completions of a generate() output (prompt and padding cut), each with its share of the time."""
    result = []
    for row in out:
        completion = row[width:]
        completion = completion[completion != tok.pad_token_id]
        result.append(
            Generation(
                tok.decode(completion, skip_special_tokens=True), int(width), int(completion.shape[0]), latency_ms
            )
        )
    return result


def _beams(policy: Policy, prompt: str, n: int) -> list[Generation]:
    """The n beams of a beam search (likeliest first): deterministic, like greedy decoding."""
    import torch

    model, tok = policy._load()  # the transformers engine of the policy (same package)
    ids = prompt_batch(tok, prompt, policy.settings.max_prompt_tokens)
    start = time.perf_counter()
    with torch.no_grad():
        out = generate_n(
            model,
            ids,
            n,
            max_new_tokens=policy.settings.max_new_tokens,
            num_beams=n,
            num_return_sequences=n,
            do_sample=False,
            early_stopping=True,
            pad_token_id=tok.pad_token_id,
        )
    latency = (time.perf_counter() - start) * 1000 / n  # one search made them all: its time shared
    return _rows(tok, out, ids["input_ids"].shape[1], latency)
