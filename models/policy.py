"""The policy: a causal LM that reads a task prompt and answers with a patch.

The embedded default starts from the base shipped in `models/base/` (a small Qwen2 and its byte-level BPE tokenizer,
pre-trained on local code by `postgame bootstrap`; see models/bootstrap.py): nothing is downloaded. Without it, an
untrained tiny Qwen2 is built from a transformers config, its tokenizer trained here with `tokenizers` on the
*train-split* seed projects only (never an eval or holdout project: that would leak across the split). A real
deployment points `policy.base_model` at a local checkpoint folder instead and serves it with vLLM on GPUs
(`policy.engine: vllm`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.tokenizer import load_tokenizer, prompt_batch, prompt_ids
from postgame.config import Config, PolicySettings
from postgame.settings.factory import FactorySettings

SHIPPED_BASE = Path(__file__).resolve().parent / "base"
SHIPPED_AGENT_BASE = Path(__file__).resolve().parent / "base_agent"
SPECIAL_TOKENS = ["<|endoftext|>", "<|pad|>"]


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float


def tokenizer_corpus(factory: FactorySettings) -> list[str]:
    """Code the policy will read and write: the train-split seed projects (never eval or holdout) and the prompt and
    answer formats."""
    from evals import prompts
    from evals.factory.seeds import default_seeds_dir, load_seeds
    from evals.factory.splits import train_projects

    seeds = load_seeds(Path(factory.seeds_dir) if factory.seeds_dir else default_seeds_dir())
    allowed = set(train_projects([s.name for s in seeds], factory))
    texts = [
        data.decode()
        for s in seeds
        if s.name in allowed
        for path, data in sorted({**s.source, **s.tests}.items())
        if path.endswith(".py")
    ]
    return texts + [
        prompts.PROMPT_TEMPLATE,
        prompts.ANSWER_FORMAT,
        prompts.ORACLE_TEMPLATE,
        prompts.ORACLE_ANSWER_FORMAT,
    ]


def train_tokenizer(settings: PolicySettings, corpus: list[str]):
    """A byte-level BPE tokenizer trained on `corpus`; deterministic for the same corpus."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=settings.vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|endoftext|>",
        pad_token="<|pad|>",
        model_max_length=settings.max_position_embeddings,
        padding_side="left",
        truncation_side="left",
    )


def qwen2_config(settings: PolicySettings, tokenizer):
    """The Qwen2 architecture of the embedded policy, from the `policy:` section."""
    from transformers import Qwen2Config

    return Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=settings.hidden_size,
        intermediate_size=settings.intermediate_size or settings.hidden_size * 2,
        num_hidden_layers=settings.num_layers,
        num_attention_heads=settings.num_heads,
        num_key_value_heads=max(1, settings.num_heads // 2),
        max_position_embeddings=settings.max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def build_base_policy(settings: PolicySettings, factory: FactorySettings, out_dir: Path) -> Path:
    """Build the untrained embedded policy (config + tokenizer) into out_dir and return it."""
    import torch
    from transformers import Qwen2ForCausalLM

    tokenizer = train_tokenizer(settings, tokenizer_corpus(factory))
    config = qwen2_config(settings, tokenizer)
    torch.manual_seed(settings.seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def base_policy_dir(cfg: Config) -> Path:
    """The base checkpoint: `policy.base_model` if set, else the shipped agent base (`models/base_agent/`) when
    `agent.enabled`, else the shipped pre-trained base (`models/base/`), else an untrained embedded one, built once
    under home."""
    if cfg.policy.base_model:
        return Path(cfg.policy.base_model)
    if cfg.agent.enabled and (SHIPPED_AGENT_BASE / "model.safetensors").exists():
        return SHIPPED_AGENT_BASE  # the base taught to act in the environment (models/agent_base.py)
    if (SHIPPED_BASE / "model.safetensors").exists():
        return SHIPPED_BASE
    path = cfg.home / "models" / "untrained"
    if not (path / "config.json").exists():
        build_base_policy(cfg.policy, cfg.factory, path)
    return path


class Policy:
    """A loaded checkpoint that turns prompts into completions (transformers on CPU, or vLLM on GPUs)."""

    def __init__(self, path: Path, *, name: str, version: str, settings: PolicySettings):
        self.path, self.name, self.version, self.settings = Path(path), name, version, settings
        self._engine: Any = None  # a vLLM LLM, or (model, tokenizer) of transformers; loaded on first use

    def _load(self):
        """(engine, tokenizer): a vLLM LLM or a transformers model, and the checkpoint's tokenizer as saved."""
        if self._engine is None:
            tok = load_tokenizer(self.path)
            if self.settings.engine == "vllm":
                from vllm import LLM  # GPU path: pip install 'postgame[gpu]'

                self._engine = (LLM(model=str(self.path), seed=self.settings.seed), tok)
            else:
                from transformers import AutoModelForCausalLM

                model = AutoModelForCausalLM.from_pretrained(self.path)
                model.eval()
                self._engine = (model, tok)
        return self._engine

    def generate(self, prompts: list[str], *, seed: int | None = None, greedy: bool = False) -> list[Generation]:
        """One completion per prompt: sampled (simulation, RL) or greedy (evaluation, deterministic). Both engines
        read the same ids (`prompt_ids`: the saved tokenizer, the prompt cut to `max_prompt_tokens`)."""
        engine, tok = self._load()
        seed = self.settings.seed if seed is None else seed
        if self.settings.engine == "vllm":
            from vllm import SamplingParams

            params = SamplingParams(
                max_tokens=self.settings.max_new_tokens,
                seed=seed,
                temperature=0.0 if greedy else self.settings.temperature,
            )
            inputs = [{"prompt_token_ids": prompt_ids(tok, p, self.settings.max_prompt_tokens)} for p in prompts]
            start = time.perf_counter()
            outs = engine.generate(inputs, params)
            each_ms = (time.perf_counter() - start) * 1000 / max(1, len(prompts))
            return [
                Generation(
                    tok.decode(o.outputs[0].token_ids, skip_special_tokens=True),
                    len(o.prompt_token_ids),
                    len(o.outputs[0].token_ids),
                    each_ms,
                )
                for o in outs
            ]
        return [self._generate_one(engine, tok, prompt, seed + i, greedy) for i, prompt in enumerate(prompts)]

    def _generate_one(self, model, tok, prompt: str, seed: int, greedy: bool) -> Generation:
        import torch

        ids = prompt_batch(tok, prompt, self.settings.max_prompt_tokens)
        torch.manual_seed(seed)
        start = time.perf_counter()
        with torch.no_grad():
            sampling = {"do_sample": False} if greedy else {"do_sample": True, "temperature": self.settings.temperature}
            out = model.generate(
                **ids, max_new_tokens=self.settings.max_new_tokens, pad_token_id=tok.pad_token_id, **sampling
            )
        latency = (time.perf_counter() - start) * 1000
        completion = out[0, ids["input_ids"].shape[1] :]
        return Generation(
            tok.decode(completion, skip_special_tokens=True),
            int(ids["input_ids"].shape[1]),
            int(completion.shape[0]),
            latency,
        )


def load_champion(cfg: Config) -> Policy:
    """The policy serving production: the MLflow `champion`, or the base policy before any promotion."""
    from models.registry import champion_version, download_version

    version = champion_version(cfg)
    if version is None:
        return Policy(base_policy_dir(cfg), name=cfg.tracking.registered_model, version="base", settings=cfg.policy)
    path = download_version(cfg, version.version)
    return Policy(path, name=cfg.tracking.registered_model, version=str(version.version), settings=cfg.policy)
