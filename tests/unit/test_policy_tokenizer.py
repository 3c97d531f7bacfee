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


def test_a_checkpoint_that_names_its_tokenizer_class_is_loaded_by_that_class(tmp_path):
    # a real Qwen2 checkpoint's tokenizer (saved by Qwen2Tokenizer, as AutoTokenizer leaves it): loaded as one,
    # reading as its tokenizer.json (Qwen2's split) says
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(SHIPPED_BASE).save_pretrained(tmp_path)
    tok = load_tokenizer(tmp_path)
    assert type(tok).__name__ == "Qwen2Tokenizer"
    saved = Tokenizer.from_file(str(tmp_path / "tokenizer.json")).encode(CODE).ids
    assert tok(CODE)["input_ids"] == saved


def test_the_agent_base_reads_as_the_base_learned_to():
    # the agent base is fine-tuned from the base and keeps its tokenizer: the same ids for the same text
    agent, base = load_tokenizer(SHIPPED_AGENT_BASE), load_tokenizer(SHIPPED_BASE)
    assert agent(CODE)["input_ids"] == base(CODE)["input_ids"]
    assert agent.chat_template


class _StandInLLM:
    """What the policy may hand vLLM's `LLM.generate` (vLLM needs a GPU: scripts/gpu_check.py runs the real one).
    It answers with fixed token ids, as vLLM's RequestOutput carries them."""

    answer_ids: list[int] = []

    def __init__(self):
        self.inputs: list = []

    def generate(self, prompts, params):
        from types import SimpleNamespace

        self.inputs.extend(prompts)
        return [
            SimpleNamespace(
                prompt_token_ids=p["prompt_token_ids"],
                outputs=[SimpleNamespace(token_ids=self.answer_ids, text="vLLM's own decoding, not used")],
            )
            for p in prompts
        ]


def _stand_in_vllm(monkeypatch):
    import sys
    from types import ModuleType, SimpleNamespace

    module = ModuleType("vllm")
    module.SamplingParams = lambda **kw: SimpleNamespace(**kw)  # type: ignore[attr-defined]
    module.LLM = lambda **kw: _StandInLLM()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)


def test_vllm_is_handed_the_ids_the_base_learned_to_read_cut_as_on_the_cpu(monkeypatch):
    # checked: fails when Policy.generate hands vLLM the prompt text (vLLM would tokenise it with AutoTokenizer),
    # and when the vLLM path skips the max_prompt_tokens cut
    _stand_in_vllm(monkeypatch)
    learned = Tokenizer.from_file(str(SHIPPED_BASE / "tokenizer.json"))
    prompt = render_prompt({"repo": "geo", "problem_statement": "Area is wrong."}, {"geo/area.py": CODE * 40})
    _StandInLLM.answer_ids = learned.encode("    return w * h\n").ids
    settings = PolicySettings(engine="vllm", max_prompt_tokens=64)
    policy = Policy(SHIPPED_BASE, name="t", version="base", settings=settings)
    [gen] = policy.generate([prompt], greedy=True)
    llm, _ = policy._engine
    assert llm.inputs == [{"prompt_token_ids": learned.encode(prompt).ids[-64:]}]
    assert gen.text == "    return w * h\n" and gen.prompt_tokens == 64
    cpu = Policy(SHIPPED_BASE, name="t", version="base", settings=PolicySettings(max_prompt_tokens=64))
    assert cpu.generate([prompt], greedy=True)[0].prompt_tokens == 64


def test_the_agent_hands_vllm_the_ids_of_its_rendered_turn(monkeypatch):
    # checked: fails when ChatPolicy.act hands vLLM the rendered text
    from models.agent import ChatPolicy

    _stand_in_vllm(monkeypatch)
    agent = ChatPolicy(SHIPPED_AGENT_BASE, settings=PolicySettings(engine="vllm"), max_new_tokens=8)
    messages = [{"role": "user", "content": "Fix `area` in geo/area.py:\n" + CODE}]
    _, tok = agent._load()
    _StandInLLM.answer_ids = tok("submit()", add_special_tokens=False)["input_ids"]
    agent.act(messages, [])
    llm, _ = agent._engine
    assert llm.inputs == [{"prompt_token_ids": tok(agent.render(messages, []), add_special_tokens=False)["input_ids"]}]
