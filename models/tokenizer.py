"""Loading a checkpoint's tokenizer the way it was saved (models/policy.py, training, serving, the agent)."""

from __future__ import annotations

from pathlib import Path

# What transformers calls a tokenizer made with `tokenizers` and saved as such (the embedded base's): the generic
# backend, which reads tokenizer.json as it is.
GENERIC_TOKENIZERS = ("TokenizersBackend", "PreTrainedTokenizerFast")


def load_tokenizer(path: Path | str):
    """A checkpoint's tokenizer, reading exactly what its tokenizer.json says.

    transformers 5's AutoTokenizer maps a qwen2 checkpoint whose tokenizer_config names the generic backend (the
    embedded base's tokenizer, trained here with `tokenizers`) to Qwen2Tokenizer, which replaces the saved
    pre-tokenizer and normalizer with Qwen2's own: a newline and the indentation after it, one token ('ĊĠĠĠ') in
    everything the base learned from, became two ('Ċ', 'ĠĠĠ') in every prompt it read and every answer a candidate
    was fine-tuned on (BENCHMARKS.md, "the tokenizer the base learned with"). A checkpoint that names its own class
    (Qwen2Tokenizer, LlamaTokenizer, ...) is loaded by that class, as transformers would."""
    import json

    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    config = Path(path) / "tokenizer_config.json"
    named = json.loads(config.read_text()).get("tokenizer_class") if config.exists() else None
    if named in GENERIC_TOKENIZERS and (Path(path) / "tokenizer.json").exists():
        return PreTrainedTokenizerFast.from_pretrained(path)
    return AutoTokenizer.from_pretrained(path)


def prompt_ids(tokenizer, prompt: str, max_prompt_tokens: int, *, add_special_tokens: bool = True) -> list[int]:
    """The prompt's token ids as the policy reads it on every engine (transformers, vLLM) and as training feeds it:
    its last `max_prompt_tokens` tokens (the tokenizer's truncation side is the left). vLLM is handed these ids,
    never the text: it would tokenise with AutoTokenizer, the reading `load_tokenizer` exists to avoid."""
    return list(
        tokenizer(prompt, truncation=True, max_length=max_prompt_tokens, add_special_tokens=add_special_tokens)[
            "input_ids"
        ]
    )


def answer_ids(tokenizer, answer: str) -> list[int]:
    """An answer's token ids as the policy writes them after its prompt: tokenised on its own, then EOS."""
    return list(tokenizer(answer, add_special_tokens=False)["input_ids"]) + [tokenizer.eos_token_id]


def prompt_batch(tokenizer, prompt: str, max_prompt_tokens: int, *, add_special_tokens: bool = True) -> dict:
    """`prompt_ids` as the one-row tensors transformers' `generate` takes (input ids and their attention mask)."""
    import torch

    row = torch.tensor([prompt_ids(tokenizer, prompt, max_prompt_tokens, add_special_tokens=add_special_tokens)])
    return {"input_ids": row, "attention_mask": torch.ones_like(row)}
