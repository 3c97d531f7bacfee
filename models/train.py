"""Training recipes on TRL: GRPO with the evaluation harness as the reward, and SFT on accepted patches.

Each recipe reads top to bottom: load the dataset → load the policy → build the TRL trainer → train → save. The
output folder is a complete checkpoint (weights + tokenizer) plus `train_result.json`; nothing else is written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from postgame.config import PolicySettings, TrainSettings

RewardFn = Callable[..., list[float | None]]


@dataclass
class TrainResult:
    method: str
    output_dir: str
    steps: int
    examples: int
    seconds: float
    train_loss: float | None
    metrics: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)


def _common_args(settings: TrainSettings, out_dir: Path) -> dict:
    return dict(output_dir=str(out_dir / "trainer"), max_steps=settings.max_steps,
                learning_rate=settings.learning_rate, per_device_train_batch_size=settings.batch_size,
                seed=settings.seed, data_seed=settings.seed, use_cpu=not settings.use_gpu, report_to=[],
                logging_steps=1, save_strategy="no", disable_tqdm=True, dataloader_num_workers=0)


def _load(policy_dir: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(policy_dir)
    model = AutoModelForCausalLM.from_pretrained(policy_dir)
    return model, tokenizer


def _finish(trainer, method: str, out_dir: Path, examples: int, started: float) -> TrainResult:
    out = trainer.train()
    model_dir = out_dir / "model"
    trainer.save_model(str(model_dir))
    trainer.processing_class.save_pretrained(model_dir)
    logs = [entry for entry in trainer.state.log_history if "loss" in entry]
    metrics = {k: float(v) for k, v in (logs[-1] if logs else {}).items() if isinstance(v, (int, float))}
    result = TrainResult(method=method, output_dir=str(model_dir), steps=int(out.global_step), examples=examples,
                         seconds=time.perf_counter() - started, train_loss=float(out.training_loss), metrics=metrics)
    (out_dir / "train_result.json").write_text(result.to_json())
    return result


def train_grpo(policy_dir: Path, rows: list[dict], reward_fn: RewardFn, *, settings: TrainSettings,
               policy: PolicySettings, out_dir: Path) -> TrainResult:
    """GRPO: `rows` have `prompt` and `instance_id`; the reward is the harness's grade of each completion."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    started = time.perf_counter()
    model, tokenizer = _load(policy_dir)
    args = GRPOConfig(**_common_args(settings, out_dir), num_generations=settings.num_generations,
                      max_completion_length=policy.max_new_tokens, temperature=policy.temperature,
                      beta=settings.kl_beta)
    trainer = GRPOTrainer(model=model, reward_funcs=[reward_fn], args=args, train_dataset=Dataset.from_list(rows),
                          processing_class=tokenizer)
    return _finish(trainer, "grpo", out_dir, len(rows), started)


def train_sft(policy_dir: Path, rows: list[dict], *, settings: TrainSettings, out_dir: Path) -> TrainResult:
    """SFT on prompt/completion pairs (accepted patches); the loss is on the completion only."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    started = time.perf_counter()
    model, tokenizer = _load(policy_dir)
    args = SFTConfig(**_common_args(settings, out_dir), completion_only_loss=True)
    trainer = SFTTrainer(model=model, args=args, processing_class=tokenizer,
                         train_dataset=Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]}
                                                          for r in rows]))
    return _finish(trainer, "sft", out_dir, len(rows), started)
