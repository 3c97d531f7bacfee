"""Settings of the curate and train stages (sections `curate:` and `train:` of postgame.yaml)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CurateSettings(_Section):
    """What curate keeps from validated snapshots: SFT rows, DPO pairs and GRPO prompts, train split only."""

    min_records: int = Field(
        1, ge=0, description="Fewer curated train prompts stop the cycle with DataValidationError."
    )
    max_examples: int = Field(512, gt=0, description="At most this many rows of each kind (sft, dpo, grpo).")
    max_pairs_per_task: int = Field(
        4, gt=0, description="DPO: at most this many (chosen, rejected) pairs per instance."
    )
    replay_snapshots: int = Field(
        4,
        ge=0,
        description="Also learn from the newest N snapshots earlier cycles "
        "trained on (their verified traffic is still good data, and a "
        "rejected candidate's traffic is not wasted); 0 = only the "
        "pending snapshots the cycle claimed.",
    )


class LoraSettings(_Section):
    """LoRA through PEFT: train low-rank adapters instead of every weight; the saved model has them merged."""

    r: int = Field(8, gt=0, description="Rank of the adapters.")
    alpha: int = Field(16, gt=0, description="Scaling numerator (lora_alpha); the update is scaled by alpha / r.")
    dropout: float = Field(0.0, ge=0, lt=1, description="Dropout on the adapter input.")
    target_modules: list[str] | Literal["all-linear"] = Field(
        "all-linear", description="Module names to adapt (e.g. [q_proj, v_proj]) or 'all-linear'."
    )


class TrainSettings(_Section):
    """One training run per cycle, through TRL. `method: auto` picks by what the curated data holds
    (`models.train.choose_method` states the rule)."""

    method: Literal["auto", "sft", "dpo", "grpo"] = Field(
        "auto",
        description="Trainer by name (models.train.TRAINERS). auto: sft with >= batch_size verified "
        "completions, else dpo with >= batch_size pairs, else grpo (models.train.choose_method).",
    )
    reward: Literal["harness"] = Field(
        "harness",
        description="GRPO reward by name (models.train.REWARDS); the "
        "harness grades each completion: 1.0 resolved, "
        "0.0 not, None on an infrastructure error.",
    )
    breakage_penalty: float = Field(
        0.5,
        ge=0,
        description="GRPO: a patch that breaks a PASS_TO_PASS test earns its grade minus this (-0.5 for an "
        "unresolved one), so breaking working code is worse than changing nothing; 0 = the grade alone.",
    )
    truncated_episodes: Literal["mask", "score"] = Field(
        "mask",
        description="GRPO in the environment (agent.enabled): an episode cut by a limit rather than ended by the "
        "policy (budget_exhausted, timeout, the context window full). mask = out of the loss like an infrastructure "
        "error (DeepSWE's compact filtering: a cut episode says nothing of whether its approach would have worked); "
        "score = the environment's reward (0.0, or the grade with agent.grade_unsubmitted).",
    )
    init_from: Literal["base", "champion"] = Field(
        "base",
        description="Where every candidate starts. base = the base policy, fine-tuned on all the verified traffic "
        "curate hands it (this cycle's snapshots and the `curate.replay_snapshots` replayed ones): expert iteration as "
        "ReST-EM runs it, each round from the base, so a candidate never inherits the last one's over-fitting; "
        "champion = continue from the serving model (in the default demo, continued SFT from a promoted champion "
        "lost 10 of its 17 solved bugs: BENCHMARKS.md).",
    )
    max_steps: int = Field(32, gt=0, description="Optimizer steps per run (32 SFT steps of 4 on the base: ~45 CPU s).")
    learning_rate: float = Field(
        1e-4,
        gt=0,
        description="Optimizer learning rate of sft and dpo (TRL's). 1e-4, chosen on the dev split: SFT on the "
        "agent's verified traffic at 5e-4 lost more of the base's solved bugs than it won, from the shipped base "
        "(31 of 70 against its 34) and from one that never saw the traffic's bugs (14 against 15); at 1e-4 35 and "
        "17-18 (BENCHMARKS.md, sessions 19, 22 and 32).",
    )
    grpo_learning_rate: float = Field(
        5e-5,
        gt=0,
        description="GRPO's learning rate, below SFT's as RL fine-tuning usually takes: at 5e-4 two updates "
        "turned the agent base's tool calls into invalid actions on every rollout, at 2e-4 32 steps ended 62 of 70 "
        "dev episodes in invalid actions (BENCHMARKS.md).",
    )
    batch_size: int = Field(
        4, gt=0, description="Per-device batch (for GRPO: completions, a multiple of num_generations)."
    )
    num_generations: int = Field(4, ge=2, description="GRPO completions per prompt (the group).")
    kl_beta: float = Field(0.0, ge=0, description="GRPO KL coefficient (0 = no reference model, as in TRL's default).")
    dpo_beta: float = Field(
        0.5,
        gt=0,
        description="DPO temperature beta (how far from the reference policy; 0.5 "
        "beat 0.1 on our traffic, BENCHMARKS.md).",
    )
    dpo_sft_weight: float = Field(
        1.0,
        ge=0,
        description="DPO: weight of an NLL term on the chosen answer beside the "
        "preference loss (TRL loss_type [sigmoid, sft], RPO's "
        "alpha = 1.0); 0 = pure DPO, which unlearned the base's "
        "format on our traffic (BENCHMARKS.md).",
    )
    max_prompts: int = Field(
        8,
        gt=0,
        description="GRPO prompts per run (each costs num_generations gradings); "
        "the tasks likeliest to vary when sampled come first (curate.order_prompts).",
    )
    save_steps: int = Field(
        1,
        gt=0,
        description="Write an atomic checkpoint every N optimizer steps; a killed run resumes from the last one.",
    )
    keep_checkpoints: int = Field(2, gt=0, description="Checkpoints kept per training run (the newest).")
    lora: LoraSettings | None = Field(
        None, description="Train LoRA adapters (PEFT) instead of the full model; unset = full fine-tuning."
    )
    use_gpu: bool = Field(False, description="Train on the GPU (CUDA); false = CPU.")
    precision: Literal["auto", "fp32", "bf16"] = Field(
        "auto",
        description="Number format of the training steps: auto = bf16 on a GPU, fp32 on the CPU (TRL's configs "
        "default to bf16 even there, and a CPU without native bfloat16, AVX2 only like most laptops, runs it ~14x "
        "slower: a cycle's 32 SFT steps took 448 s against ~30 s; BENCHMARKS.md, \"the cycle's training step\").",
    )
    use_vllm: bool = Field(
        False,
        description="GRPO generation through vLLM (TRL use_vllm, colocated on the "
        "training GPU); needs use_gpu and pip install 'postgame[gpu]'.",
    )
    vllm_gpu_memory_utilization: float = Field(
        0.3, gt=0, le=1, description="Share of GPU memory vLLM may take when colocated."
    )
    seed: int = Field(
        0, description="Seeds data order, sampling and initialisation: same seed + config on CPU = same weights."
    )

    def rate(self, method: str) -> float:
        """The learning rate of one training mode."""
        return self.grpo_learning_rate if method == "grpo" else self.learning_rate

    def bf16(self) -> bool:
        """Train in bf16 autocast (`precision`; auto = on a GPU only)."""
        return self.use_gpu if self.precision == "auto" else self.precision == "bf16"

    @model_validator(mode="after")
    def _check(self) -> TrainSettings:
        """batch_size is a multiple of num_generations; use_vllm needs use_gpu."""
        if self.batch_size % self.num_generations:
            raise ValueError(
                f"train.batch_size={self.batch_size} must be a multiple of train.num_generations={self.num_generations}"
            )
        if self.use_vllm and not self.use_gpu:
            raise ValueError("train.use_vllm=true needs train.use_gpu=true (vLLM runs on GPUs only)")
        return self
