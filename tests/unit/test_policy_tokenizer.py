"""The embedded base reads text as its own tokenizer.json says: the tokenizer it learned with.

transformers 5's AutoTokenizer turns any qwen2 checkpoint's tokenizer into Qwen2Tokenizer, which replaces the saved
pre-tokenizer with Qwen2's: the base, trained on 'ĊĠĠĠ' (a newline and its indentation as one token), read every
prompt as 'Ċ', 'ĠĠĠ', and candidates were fine-tuned on that reading."""

from __future__ import annotations

from tokenizers import Tokenizer

from evals.prompts import render_prompt
from models.policy import SHIPPED_AGENT_BASE, SHIPPED_BASE, Policy
from models.tokenizer import load_tokenizer
from postgame.config import PolicySettings

CODE = "def area(w, h):\n    if w < 0:\n        raise ValueError(w)\n    return w * h\n"


def test_the_policy_reads_a_prompt_as_the_base_learned_to():
    # checked: fails when Policy._load uses AutoTokenizer (ids split at every indented line)
    prompt = render_prompt({"repo": "geo", "problem_statement": "Area is wrong."}, {"geo/area.py": CODE})
    _, tok = Policy(SHIPPED_BASE, name="t", version="base", settings=PolicySettings())._load()
    learned = Tokenizer.from_file(str(SHIPPED_BASE / "tokenizer.json")).encode(prompt).ids
    assert tok(prompt)["input_ids"] == learned
    assert "ĊĠĠĠ" in tok.convert_ids_to_tokens(learned)  # a newline and its indentation: one token


def test_a_checkpoint_that_names_its_tokenizer_class_is_loaded_by_that_class():
    # the agent base was saved by a Qwen2Tokenizer: it loads as one, reading as its tokenizer.json (Qwen2's split) says
    tok = load_tokenizer(SHIPPED_AGENT_BASE)
    assert type(tok).__name__ == "Qwen2Tokenizer"
    saved = Tokenizer.from_file(str(SHIPPED_AGENT_BASE / "tokenizer.json")).encode(CODE).ids
    assert tok(CODE)["input_ids"] == saved
