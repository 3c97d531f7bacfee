"""models.generation.generate_n: many continuations of one prompt, the prompt read once, the same completions."""

from __future__ import annotations

import pytest
import torch

from models.generation import generate_n
from tests.support import tiny_qwen2

N = 4


@pytest.fixture(scope="module")
def model():
    return tiny_qwen2(
        vocab_size=101,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        max_position_embeddings=256,
        initializer_range=0.5,  # sharp distributions: beams that differ, no near-ties
        eos_token_id=0,
        pad_token_id=1,
        tie_word_embeddings=False,
    ).eval()


def _batch(length: int) -> dict:
    row = torch.randint(2, 101, (1, length), generator=torch.Generator().manual_seed(length))
    return {"input_ids": row, "attention_mask": torch.ones_like(row)}


SEARCHES = {
    "beams": {"do_sample": False, "num_beams": N, "num_return_sequences": N, "early_stopping": True},
    "draws": {"do_sample": True, "temperature": 1.0, "num_return_sequences": N},
}


@pytest.mark.parametrize("search", SEARCHES)
@pytest.mark.parametrize("length", [2, 40])
def test_the_same_completions_as_generate(model, search, length):
    batch = _batch(length)
    kwargs = {"max_new_tokens": 12, "pad_token_id": 1, **SEARCHES[search]}
    with torch.no_grad():
        torch.manual_seed(7)
        plain = model.generate(**batch, **kwargs)
        torch.manual_seed(7)
        once = generate_n(model, batch, N, **kwargs)
    assert len({tuple(row.tolist()) for row in plain}) > 1  # the rows differ: the search is not trivial
    assert torch.equal(plain, once)


def test_the_prompt_is_read_once(model):
    """Every forward pass that reads more than one token reads one row: the prompt, once (plain generate reads it in
    N rows)."""
    seen: list[tuple[int, int]] = []
    hook = model.model.embed_tokens.register_forward_hook(lambda _m, args, _o: seen.append(tuple(args[0].shape)))
    try:
        with torch.no_grad():
            generate_n(model, _batch(40), N, max_new_tokens=4, pad_token_id=1, **SEARCHES["beams"])
    finally:
        hook.remove()
    assert [shape for shape in seen if shape[1] > 1] == [(1, 39)]
    assert sum(rows * tokens for rows, tokens in seen) < 40 + N * 4 + N
