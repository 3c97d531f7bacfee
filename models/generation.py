"""Many continuations of one prompt, the prompt read once.

transformers' `generate` repeats a prompt `num_beams` (or `num_return_sequences`) times before it reads it: a beam
search of 6 reads a 1,900-token prompt six times, and on a CPU that prefill is most of the search. `generate_n` reads
the prompt less its last token once into a cache, repeats the cache n times, and lets `generate` go on from there
(transformers' prefix-cache reuse). The completions are the same, token for token (tests/unit/test_generation.py);
the time is in BENCHMARKS.md ("Session 25").
"""

from __future__ import annotations

import inspect
from typing import Any


def generate_n(model: Any, batch: dict[str, Any], n: int, **kwargs: Any) -> Any:
    """`model.generate(**batch, **kwargs)` where `kwargs` make `n` rows of `batch`'s one (beams, or draws), with the
    prompt read once. Anything else (one row asked for, a batch of several prompts) goes to `generate` unchanged."""
    import torch
    from transformers import DynamicCache

    ids, mask = batch["input_ids"], batch["attention_mask"]
    if n == 1 or ids.shape[0] != 1 or ids.shape[1] < 2:
        return model.generate(**batch, **kwargs)
    name = cache_argument(model)
    cache = DynamicCache(config=model.config)
    with torch.no_grad():  # the last token is left for generate's first step, which makes the first logits
        model(input_ids=ids[:, :-1], attention_mask=mask[:, :-1], use_cache=True, logits_to_keep=1, **{name: cache})
    cache.batch_repeat_interleave(n)
    return model.generate(**batch, **{name: cache}, **kwargs)


def cache_argument(model: Any) -> str:
    """The name a model's forward takes its key/value cache by: `cache` in newer transformers, `past_key_values`
    before (the gpu extra's 5.19)."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
