"""Train: one TRL run per cycle, starting from the base policy (or the champion: `train.init_from`), as one recipe
read top to bottom:

    setup (rows, parent checkpoint, MLflow run inputs) → train (the trainer chosen by name) → save (log the model)

    postgame train --mode sft|dpo|grpo [--snapshot ID] [--max-steps N] [--seed S] [--json]

Trainers are chosen by name from `TRAINERS` (`train.method` / `--mode`), rewards from `REWARDS`:

- `sft`  SFTTrainer on verified completions (resolved and accepted sessions: the harness is the filter), loss on the
         completion only;
- `dpo`  DPOTrainer on pairs from the same task (prompt / chosen = verified / rejected = failed or rejected);
- `grpo` GRPOTrainer with the harness as the reward (1.0 resolved, 0.0 not, None on an infrastructure error): the RL
         reward *is* the evaluation. Prompts likeliest to vary come first (curate.order_prompts); TRL's share of
         groups with zero reward variance (nothing to learn from) is logged every step.

`train.method: auto` (`choose_method`) picks by what the curated data holds: `sft` when there are at least
`batch_size` verified completions (measured, BENCHMARKS.md "Learning": at equal CPU, SFT on the base's verified
traffic raised in-domain pass@1 from 16.1% to 23-25% while DPO on the same traffic's few pairs lowered it), else `dpo`
when there are at least `batch_size` pairs (successes and failures on the same tasks), else `grpo` on the prompts
whose traffic outcomes vary, else `grpo` on every prompt (the only mode that needs no success yet).

LoRA through PEFT with `train.lora: {r, alpha, dropout, target_modules}`; the saved model has the adapters merged.

Resume: the data order is a plan fixed by the seed (`data_plan`), consumed in sequence; checkpoints are atomic
(`models.checkpoints`) every `train.save_steps`. The work folder is keyed by what the run learns from (`work_key`), so
a training killed with SIGKILL and run again resumes from its last checkpoint; the ids each step trained on are
recorded and checked against the plan at the end, so a resume that skips or repeats an example fails loudly.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from models import checkpoints
from models.tokenizer import answer_ids, prompt_ids
from postgame.config import Config, PolicySettings, TrainSettings
from postgame.curate import CuratedDataset, load_rows, rows_of
from postgame.settings.agent import AgentSettings

if TYPE_CHECKING:
    from transformers import TrainerCallback

RewardFn = Callable[..., list[float | None]]
MetricsSink = Callable[[int, dict[str, float]], None]
EXAMPLE_ID = "example_id"
# How rows become token ids (2: answers' prompts cut as the policy cuts them, `completion_features`): a run made the
# older way is not resumed as if it were this one.
FEATURES_VERSION = 2
PREFERENCE_MASKS = ("chosen_masks", "rejected_masks")  # trajectory DPO: each side's assistant mask
# TRL's log keys → the names the issue and the MLflow curves use; other numeric keys are logged as TRL names them.
METRIC_NAMES = {
    "reward": "reward_mean",
    "frac_reward_zero_std": "zero_variance_share",
    "completions/mean_length": "completion_length",
}
# The metrics a summary (`postgame train --json`) shows, each with its first-step value as the baseline.
SUMMARY_METRICS = (
    "loss",
    "grad_norm",
    "learning_rate",
    "reward_mean",
    "reward_std",
    "zero_variance_share",
    "kl",
    "completion_length",
    "mean_token_accuracy",
    "rewards/accuracies",
    "rewards/margins",
)


class DataOrderError(RuntimeError):
    """The examples a run trained on differ from its data plan: a resume skipped or repeated an example."""


@dataclass
class Usage:
    """Compute spent: wall, CPU and GPU seconds, tokens generated and trained on (prompt + completion)."""

    wall_s: float = 0.0
    cpu_s: float = 0.0
    gpu_s: float = 0.0
    tokens_generated: int = 0
    tokens_trained: int = 0

    def record(self) -> checkpoints.UsageRecord:
        return checkpoints.UsageRecord(
            wall_s=self.wall_s,
            cpu_s=self.cpu_s,
            gpu_s=self.gpu_s,
            tokens_generated=self.tokens_generated,
            tokens_trained=self.tokens_trained,
        )

    def usd(self, usd_per_cpu_hour: float, usd_per_gpu_hour: float) -> float:
        return self.cpu_s / 3600 * usd_per_cpu_hour + self.gpu_s / 3600 * usd_per_gpu_hour


@dataclass
class TrainResult:
    method: str
    output_dir: str
    steps: int
    examples: int
    seconds: float
    train_loss: float | None
    metrics: dict[str, float] = field(default_factory=dict)  # the last step's
    first_metrics: dict[str, float] = field(default_factory=dict)  # the first step's (the parent on the first batch)
    usage: Usage = field(default_factory=Usage)
    resumed_from_step: int = 0
    seen: list[list[str]] = field(default_factory=list)  # example ids of each step

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TrainResult:
        data = json.loads(text)
        return cls(**{**data, "usage": Usage(**data["usage"])})


@dataclass(frozen=True)
class Candidate:
    run_id: str
    model_uri: str
    model_dir: str
    parent_version: str
    method: str
    steps: int
    train_loss: float | None
    seconds: float
    dataset_sha256: str
    snapshot_ids: tuple[str, ...]
    metrics: dict[str, float] = field(default_factory=dict)
    baselines: dict[str, float] = field(default_factory=dict)
    cost_usd: float = 0.0
    usage: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class TrainJob:
    """One training run, all it needs: the mode, the checkpoint to start from, its rows, where to work, the settings.
    `reward_fn` is GRPO's (None = `train.reward` by name); `callbacks` are extra TRL callbacks."""

    method: str
    policy_dir: Path
    rows: list[dict]
    work_dir: Path
    settings: TrainSettings
    policy: PolicySettings = field(default_factory=PolicySettings)
    reward_fn: RewardFn | None = None
    on_metrics: MetricsSink | None = None
    callbacks: Sequence[Any] = ()
    tools: list[dict] | None = None  # the agent's tool schemas: sft on trajectories renders them as traffic did
    rollout: Any = None  # GRPO in the environment: a models.rollout.EpisodeRollout (TRL's rollout_func)


# --- the data order ------------------------------------------------------------------------------------------------


def data_plan(rows: list[dict], per_step: int, max_steps: int, seed: int) -> list[dict]:
    """The rows in the order training consumes them: max_steps × per_step rows, epochs shuffled by the seed."""
    if not rows:
        raise ValueError("no rows to train on")
    plan: list[dict] = []
    epoch = 0
    while len(plan) < per_step * max_steps:
        order = list(rows)
        random.Random(f"{seed}:{epoch}").shuffle(order)
        plan += order
        epoch += 1
    return plan[: per_step * max_steps]


def plan_sha256(plan: list[dict]) -> str:
    return hashlib.sha256(json.dumps([r[EXAMPLE_ID] for r in plan]).encode()).hexdigest()


# --- the trainer mixin: atomic checkpoints, the ledger of example ids, usage -----------------------------------------


class _IdCollator:
    """Wraps a collator: takes each example's id off (the model never sees it) and queues the batch's ids."""

    def __init__(self, inner, queue: deque):
        self.inner, self.queue = inner, queue

    def __call__(self, features: list[dict]):
        self.queue.append([f.pop(EXAMPLE_ID) for f in features])
        return self.inner(features)


if TYPE_CHECKING:

    class _TrainerHost:
        """What `_Recorded` uses of the TRL trainer it is mixed into (SFTTrainer, DPOTrainer or GRPOTrainer)."""

        args: Any
        state: Any
        data_collator: Any
        _signature_columns: list[str] | None

        def _set_signature_columns_if_needed(self) -> None: ...
        def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> Any: ...
        def _generate_and_score_completions(self, inputs: Any) -> Any: ...  # GRPOTrainer only
        def _get_output_dir(self, trial: Any) -> Any: ...
        def _save_checkpoint(self, model: Any, trial: Any) -> None: ...
        def _prepare_dataset(self, dataset: Any, *args: Any, **kwargs: Any) -> Any: ...

else:
    _TrainerHost = object  # at run time the trainer class comes after the mixin in the MRO (`_recorded`)


class _Recorded(_TrainerHost):
    """Mixed into a TRL trainer class (`_recorded(SFTTrainer)`)."""

    postgame_plan_sha: str = ""
    postgame_keep: int = 2
    postgame_group: int = 1
    postgame_seen: list[list[str]]
    postgame_usage: Usage
    postgame_started: tuple[float, float] = (0.0, 0.0)
    postgame_prior: Usage
    postgame_batch: list[str]

    def postgame_setup(self, *, plan_sha: str, keep: int, group: int, resume: Path | None) -> None:
        self.postgame_plan_sha, self.postgame_keep, self.postgame_group = plan_sha, keep, group
        self.postgame_seen, self.postgame_usage, self.postgame_prior = [], Usage(), Usage()
        self._postgame_ids: deque = deque()
        self._postgame_staging: Path | None = None
        if resume is not None:
            manifest = checkpoints.read_manifest(resume)
            if manifest.plan_sha256 != plan_sha:
                raise checkpoints.CheckpointError(
                    f"{resume} was written for another data order ({manifest.plan_sha256[:12]} != {plan_sha[:12]})"
                )
            self.postgame_seen = [list(ids) for ids in manifest.seen]
            self.postgame_prior = Usage(**manifest.usage)
        if not isinstance(self.data_collator, _IdCollator) and group == 1:
            self.data_collator = _IdCollator(self.data_collator, self._postgame_ids)

    def _set_signature_columns_if_needed(self):
        super()._set_signature_columns_if_needed()
        if self._signature_columns is not None and EXAMPLE_ID not in self._signature_columns:
            self._signature_columns = [*self._signature_columns, EXAMPLE_ID, *PREFERENCE_MASKS]

    def _prepare_dataset(self, dataset, *args, **kwargs):  # DPO: trajectory pairs come tokenised, with their masks
        if "prompt_ids" in (getattr(dataset, "column_names", None) or []):
            return dataset
        return super()._prepare_dataset(dataset, *args, **kwargs)

    def training_step(self, model, inputs, num_items_in_batch=None):
        if isinstance(inputs, list):  # GRPO: the raw rows, each prompt repeated num_generations times
            ids = [row[EXAMPLE_ID] for row in inputs][:: self.postgame_group]
        else:
            ids = self._postgame_ids.popleft()
            self.postgame_usage.tokens_trained += int(
                sum(v.sum() for k, v in inputs.items() if k.endswith("attention_mask"))
            )
        self.postgame_seen.append(ids)
        return super().training_step(model, inputs, num_items_in_batch)

    def _generate_and_score_completions(self, inputs):  # GRPO only
        self.postgame_batch = [row.get("instance_id") for row in inputs]  # what an episode rollout plays
        out = super()._generate_and_score_completions(inputs)
        mask = out["completion_mask"] * out["tool_mask"] if "tool_mask" in out else out["completion_mask"]
        generated = int(mask.sum())  # the model's tokens: an episode's tool results are not generated
        self.postgame_usage.tokens_generated += generated
        self.postgame_usage.tokens_trained += generated + int(out["prompt_mask"].sum())
        return out

    def postgame_total(self) -> Usage:
        """Usage so far: what earlier runs spent up to the checkpoint resumed from, plus this process."""
        wall0, cpu0 = self.postgame_started
        gpus = _gpu_count(self.args)
        wall = time.perf_counter() - wall0
        p, u = self.postgame_prior, self.postgame_usage
        return Usage(
            wall_s=p.wall_s + wall,
            cpu_s=p.cpu_s + time.process_time() - cpu0,
            gpu_s=p.gpu_s + wall * gpus,
            tokens_generated=p.tokens_generated + u.tokens_generated,
            tokens_trained=p.tokens_trained + u.tokens_trained,
        )

    def _get_output_dir(self, trial):
        return str(self._postgame_staging) if self._postgame_staging else super()._get_output_dir(trial)

    def _save_checkpoint(self, model, trial):
        root = Path(self.args.output_dir)
        self._postgame_staging = checkpoints.staging_dir(root)
        try:
            super()._save_checkpoint(model, trial)
        finally:
            staging, self._postgame_staging = self._postgame_staging, None
        step = self.state.global_step
        seen = self.postgame_seen[:step]
        manifest = checkpoints.Manifest(
            step=step,
            examples_consumed=sum(len(ids) for ids in seen),
            plan_sha256=self.postgame_plan_sha,
            seen=seen,
            usage=self.postgame_total().record(),
        )
        checkpoints.publish(staging / f"checkpoint-{step}", root / f"checkpoint-{step}", manifest)
        checkpoints.prune(root, self.postgame_keep)


def _recorded(trainer_cls: type) -> type:
    return type(f"Recorded{trainer_cls.__name__}", (_Recorded, trainer_cls), {})


def _gpu_count(args) -> int:
    import torch

    return 0 if args.use_cpu or not torch.cuda.is_available() else 1


class _StepMetrics:
    """A TRL callback: each logged step's numeric metrics to a sink (MLflow in a cycle), first and last kept."""

    def __init__(self, sink: MetricsSink | None):
        from transformers import TrainerCallback

        self.sink = sink
        self.first: dict[str, float] = {}
        self.last: dict[str, float] = {}
        self.callback = type("StepMetrics", (TrainerCallback,), {"on_log": self._on_log})()

    def _on_log(self, args, state, control, logs=None, **_):
        metrics = {
            METRIC_NAMES.get(k, k): float(v)
            for k, v in (logs or {}).items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        }
        if "loss" not in metrics and "reward_mean" not in metrics:
            return  # the end-of-training summary, not a step
        self.first = self.first or metrics
        self.last = metrics
        if self.sink is not None:
            self.sink(int(state.global_step), metrics)


def step_progress(progress: Callable[[str, int], None], max_steps: int) -> TrainerCallback:
    """A TRL callback that tells `progress(f"step {n}/{max_steps}", steps just done)` at each step's end; a resumed
    run's first step counts the steps it resumed past, so the bar ends at `max_steps`."""
    from transformers import TrainerCallback

    class StepProgress(TrainerCallback):
        told = 0

        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            step = int(state.global_step)
            progress(f"step {step}/{max_steps}", step - self.told)
            self.told = step

    return StepProgress()


# --- trainers, by name ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainerSpec:
    """A training mode: which curated rows it reads, how many it consumes a step, and how TRL is set up."""

    kind: str
    per_step: Callable[[TrainSettings], int]
    build: Callable[[TrainJob, Any, Any, dict, Any], Any]  # (job, model, tokenizer, common args, dataset) → trainer


def _peft_config(settings: TrainSettings):
    if settings.lora is None:
        return None
    from peft import LoraConfig

    lora = settings.lora
    return LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        task_type="CAUSAL_LM",
        target_modules=lora.target_modules,
    )


def trajectory_features(tokenizer, rows: list[dict], tools: list[dict] | None) -> list[dict]:
    """Trajectory rows (curated from schema-v2 sessions: `messages`) as token ids and an assistant mask: the chat
    template's {% generation %} turns are what the loss sees, tool results and prompts never (the compact template
    of models/agent.py when the checkpoint has none)."""
    from models.agent import COMPACT_TEMPLATE, template_messages

    if not tokenizer.chat_template:
        tokenizer.chat_template = COMPACT_TEMPLATE
    out = []
    for row in rows:
        enc = tokenizer.apply_chat_template(
            template_messages(row["messages"]),
            tools=tools or None,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
        )
        out.append(
            {
                EXAMPLE_ID: row[EXAMPLE_ID],
                "input_ids": list(enc["input_ids"]),
                "assistant_masks": list(enc["assistant_masks"]),
            }
        )
    return out


def completion_features(tokenizer, rows: list[dict], max_prompt_tokens: int) -> list[dict]:
    """Prompt-completion rows (SFT on verified answers) as the token ids the policy reads and writes: the prompt cut
    as the policy cuts it, the completion tokenised on its own as it is generated, then EOS; `completion_mask` puts
    the loss on the completion. Left to TRL, the whole prompt (up to 600 tokens of a 320-token policy) and the
    prompt and completion tokenised as one text would be what the candidate learns from: a context it never sees."""
    out = []
    for row in rows:
        prompt = prompt_ids(tokenizer, row["prompt"], max_prompt_tokens)
        completion = answer_ids(tokenizer, row["completion"])
        out.append(
            {
                EXAMPLE_ID: row[EXAMPLE_ID],
                "input_ids": prompt + completion,
                "completion_mask": [0] * len(prompt) + [1] * len(completion),
            }
        )
    return out


def pair_features(tokenizer, rows: list[dict], max_prompt_tokens: int) -> list[dict]:
    """DPO pairs of answers (`prompt`, `chosen`, `rejected`) as token ids, the prompt cut as the policy cuts it and
    each answer tokenised on its own with EOS (see `completion_features`)."""
    return [
        {
            EXAMPLE_ID: row[EXAMPLE_ID],
            "prompt_ids": prompt_ids(tokenizer, row["prompt"], max_prompt_tokens),
            "chosen_ids": answer_ids(tokenizer, row["chosen"]),
            "rejected_ids": answer_ids(tokenizer, row["rejected"]),
        }
        for row in rows
    ]


def cut_prompts(tokenizer, rows: list[dict], max_prompt_tokens: int) -> list[dict]:
    """GRPO prompts as text (TRL tokenises and samples from them): each cut to the text of its last
    `max_prompt_tokens` tokens, the context the policy answers from in production."""
    return [
        {**row, "prompt": tokenizer.decode(prompt_ids(tokenizer, row["prompt"], max_prompt_tokens))} for row in rows
    ]


def preference_features(tokenizer, rows: list[dict], tools: list[dict] | None) -> list[dict]:
    """Trajectory pairs (`chosen_messages` / `rejected_messages`, curated from the same task) as DPO's token ids: the
    prompt is what the two conversations share, each side the rest with its assistant mask, so the preference is
    scored on the policy's turns only, never on a tool result."""
    out = []
    for row in rows:
        chosen, rejected = (
            trajectory_features(tokenizer, [{EXAMPLE_ID: row[EXAMPLE_ID], "messages": row[side]}], tools)[0]
            for side in ("chosen_messages", "rejected_messages")
        )
        c, r = chosen["input_ids"], rejected["input_ids"]
        shared = next((n for n, (a, b) in enumerate(zip(c, r)) if a != b), min(len(c), len(r)))
        c_mask, r_mask = chosen["assistant_masks"][shared:], rejected["assistant_masks"][shared:]
        out.append(
            {
                EXAMPLE_ID: row[EXAMPLE_ID],
                "prompt_ids": c[:shared],
                "chosen_ids": c[shared:],
                "rejected_ids": r[shared:],
                "chosen_masks": c_mask,
                "rejected_masks": r_mask,
            }
        )
    return out


class _AssistantOnlyPreferences:
    """Wraps TRL's preference collator: its completion mask (every token after the prompt) becomes the assistant
    mask of each side, truncated and padded as TRL truncates and pads the ids."""

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, examples: list[dict]):
        import torch

        out = self.inner(examples)
        masks = [[0] * len(e["prompt_ids"]) + list(e["chosen_masks"]) for e in examples]
        masks += [[0] * len(e["prompt_ids"]) + list(e["rejected_masks"]) for e in examples]
        limit = self.inner.max_length
        if limit is not None:
            masks = [m[:limit] if self.inner.truncation_mode == "keep_start" else m[-limit:] for m in masks]
        width = out["completion_mask"].shape[1]
        out["completion_mask"] = torch.tensor([m + [0] * (width - len(m)) for m in masks], dtype=torch.long)
        return out


def _build_sft(job: TrainJob, model, tokenizer, common: dict, dataset):
    from trl import SFTConfig, SFTTrainer

    if "assistant_masks" in dataset.column_names:  # trajectories, tokenised with their assistant masks
        args = SFTConfig(**common, max_length=job.policy.max_position_embeddings, train_sampling_strategy="sequential")
        columns = [EXAMPLE_ID, "input_ids", "assistant_masks"]
    else:  # answers, tokenised as the policy reads and writes them (completion_features)
        args = SFTConfig(
            **common,
            completion_only_loss=True,
            max_length=job.policy.max_position_embeddings,
            train_sampling_strategy="sequential",
        )
        columns = [EXAMPLE_ID, "input_ids", "completion_mask"]
    return _recorded(SFTTrainer)(
        model=model,
        args=args,
        processing_class=tokenizer,
        peft_config=_peft_config(job.settings),
        train_dataset=dataset.select_columns(columns),
    )


def _build_dpo(job: TrainJob, model, tokenizer, common: dict, dataset):
    from trl import DPOConfig, DPOTrainer

    s = job.settings
    # sigmoid = DPO's loss; sft = NLL on the chosen answer, weighted (RPO, Pang et al. 2024): pure DPO pushes both
    # answers' likelihood down and, on a few pairs, took the base's answer format with it.
    losses: dict[str, Any] = (
        {"loss_type": ["sigmoid", "sft"], "loss_weights": [1.0, s.dpo_sft_weight]} if s.dpo_sft_weight else {}
    )
    args = DPOConfig(
        **common,
        beta=s.dpo_beta,
        max_length=job.policy.max_position_embeddings,
        train_sampling_strategy="sequential",
        **losses,
    )
    trajectories = PREFERENCE_MASKS[0] in dataset.column_names  # tokenised with assistant masks
    columns = ["prompt_ids", "chosen_ids", "rejected_ids", *(PREFERENCE_MASKS if trajectories else ())]
    trainer = _recorded(DPOTrainer)(
        model=model,
        args=args,
        processing_class=tokenizer,
        peft_config=_peft_config(job.settings),
        train_dataset=dataset.select_columns([EXAMPLE_ID, *columns]),
    )
    if trajectories:
        trainer.data_collator = _AssistantOnlyPreferences(trainer.data_collator)
    return trainer


def _build_grpo(job: TrainJob, model, tokenizer, common: dict, dataset):
    from trl import GRPOConfig, GRPOTrainer

    s = job.settings
    if job.rollout is not None:  # whole episodes in the environment (models/rollout.py)
        from models.rollout import episode_reward

        reward, extra = episode_reward, {"rollout_func": job.rollout}
    elif job.reward_fn is not None:
        reward, extra = job.reward_fn, {}
    else:
        raise ValueError("grpo needs a reward function (train.reward) or an episode rollout")
    vllm: dict[str, Any] = (
        dict(use_vllm=True, vllm_mode="colocate", vllm_gpu_memory_utilization=s.vllm_gpu_memory_utilization)
        if s.use_vllm
        else {}
    )
    args = GRPOConfig(
        **common,
        num_generations=s.num_generations,
        max_completion_length=job.policy.max_new_tokens,
        temperature=job.policy.temperature,
        beta=s.kl_beta,
        shuffle_dataset=False,
        **vllm,
    )
    return _recorded(GRPOTrainer)(
        model=model,
        reward_funcs=[reward],
        args=args,
        processing_class=tokenizer,
        train_dataset=dataset,
        peft_config=_peft_config(s),
        **extra,
    )


TRAINERS: dict[str, TrainerSpec] = {
    "sft": TrainerSpec("sft", lambda s: s.batch_size, _build_sft),
    "dpo": TrainerSpec("dpo", lambda s: s.batch_size, _build_dpo),
    "grpo": TrainerSpec("grpo", lambda s: s.batch_size // s.num_generations, _build_grpo),
}


def get_trainer(name: str) -> TrainerSpec:
    try:
        return TRAINERS[name]
    except KeyError:
        raise KeyError(
            f"train.method = {name!r}: unknown trainer; valid names: {', '.join(sorted(TRAINERS))}, auto"
        ) from None


# --- rewards, by name ----------------------------------------------------------------------------------------------


def _harness_reward(cfg: Config, instance_ids: set[str]) -> RewardFn:
    """The evaluation harness as the reward: 1.0 resolved, 0.0 not, None on an infrastructure error; a patch that
    breaks a PASS_TO_PASS test earns `train.breakage_penalty` less."""
    from evals.factory.instances import load_split
    from evals.harness import make_reward_fn

    instances = {i.instance_id: i for i in load_split(cfg, "train") if i.instance_id in instance_ids}
    return make_reward_fn(instances, repos_dir=None, settings=cfg.eval, breakage_penalty=cfg.train.breakage_penalty)


REWARDS: dict[str, Callable[[Config, set[str]], RewardFn]] = {"harness": _harness_reward}


def get_reward(name: str) -> Callable[[Config, set[str]], RewardFn]:
    try:
        return REWARDS[name]
    except KeyError:
        raise KeyError(f"train.reward = {name!r}: unknown reward; valid names: {', '.join(sorted(REWARDS))}") from None


def choose_method(settings: TrainSettings, rows: list[dict]) -> str:
    """`train.method`, or for `auto` the rule of the module docstring: sft ≥ batch_size verified completions, else
    dpo ≥ batch_size pairs, else grpo."""
    if settings.method != "auto":
        return settings.method
    if len(rows_of(rows, "sft")) >= settings.batch_size:
        return "sft"
    return "dpo" if len(rows_of(rows, "dpo")) >= settings.batch_size else "grpo"


def training_rows(method: str, rows: list[dict], settings: TrainSettings, *, trajectories: bool = False) -> list[dict]:
    """The curated rows the mode trains on (GRPO: the first `max_prompts`, varied outcomes first). An agent
    (`trajectories`) learns sft and dpo from whole trajectories only, a single-turn policy from single answers only:
    each keeps the form it acts in."""
    chosen = rows_of(rows, get_trainer(method).kind)
    if method == "sft":
        chosen = [r for r in chosen if bool(r.get("messages")) == trajectories]
    elif method == "dpo":
        chosen = [r for r in chosen if bool(r.get("chosen_messages")) == trajectories]
    return chosen[: settings.max_prompts] if method == "grpo" else chosen


# --- one training run: fit -----------------------------------------------------------------------------------------


def work_key(
    method: str,
    parent: str,
    dataset_sha256: str,
    settings: TrainSettings,
    policy: PolicySettings,
    agent: AgentSettings | None = None,
) -> str:
    """What a run learns from and how: the same key after a kill means the same run, resumed. An agent's run also
    depends on its environment (the tools it renders, the limits its episodes run under)."""
    spec = json.dumps(
        {
            "method": method,
            "parent": parent,
            "data": dataset_sha256,
            "train": settings.model_dump(mode="json"),
            "sampling": [policy.max_new_tokens, policy.temperature, policy.max_prompt_tokens],
            "features": FEATURES_VERSION,
            **({"agent": agent.model_dump(mode="json")} if agent is not None else {}),
        },
        sort_keys=True,
    )
    return hashlib.sha256(spec.encode()).hexdigest()[:16]


def fit(job: TrainJob) -> TrainResult:
    """Train `job.method` on `job.rows` from `job.policy_dir`, resuming from the last checkpoint under
    `job.work_dir`; the model lands in `job.work_dir / "model"`. A finished job returns its recorded result."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, set_seed

    from models.tokenizer import load_tokenizer

    done = job.work_dir / "train_result.json"
    if done.exists():
        return TrainResult.from_json(done.read_text())
    s = job.settings
    spec = get_trainer(job.method)
    per_step = spec.per_step(s)
    plan = data_plan(job.rows, per_step, s.max_steps, s.seed)
    ckpt_root = job.work_dir / "checkpoints"
    resume = checkpoints.latest(ckpt_root)

    set_seed(s.seed)
    tokenizer = load_tokenizer(job.policy_dir)
    model = AutoModelForCausalLM.from_pretrained(job.policy_dir, dtype=torch.float32)
    common = dict(
        output_dir=str(ckpt_root),
        max_steps=s.max_steps,
        learning_rate=s.rate(job.method),
        per_device_train_batch_size=s.batch_size,
        gradient_accumulation_steps=1,
        seed=s.seed,
        data_seed=s.seed,
        use_cpu=not s.use_gpu,
        bf16=s.bf16(),  # TRL's configs say bf16=True even on the CPU (train.precision)
        report_to=[],
        logging_steps=1,
        save_strategy="steps",
        save_steps=s.save_steps,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    step_metrics = _StepMetrics(job.on_metrics)
    if job.method == "sft" and plan[0].get("messages"):
        data = Dataset.from_list(trajectory_features(tokenizer, plan, job.tools))
    elif job.method == "dpo" and plan[0].get("chosen_messages"):
        data = Dataset.from_list(preference_features(tokenizer, plan, job.tools))
    elif job.method == "sft":
        data = Dataset.from_list(completion_features(tokenizer, plan, job.policy.max_prompt_tokens))
    elif job.method == "dpo":
        data = Dataset.from_list(pair_features(tokenizer, plan, job.policy.max_prompt_tokens))
    elif job.rollout is None:
        data = Dataset.from_list(cut_prompts(tokenizer, plan, job.policy.max_prompt_tokens))
    else:
        data = Dataset.from_list(plan)
    trainer = spec.build(job, model, tokenizer, common, data)
    trainer.add_callback(step_metrics.callback)
    for callback in job.callbacks:
        trainer.add_callback(callback)
    trainer.postgame_setup(
        plan_sha=plan_sha256(plan),
        keep=s.keep_checkpoints,
        group=s.num_generations if job.method == "grpo" else 1,
        resume=resume,
    )
    trainer.postgame_started = (time.perf_counter(), time.process_time())
    out = trainer.train(resume_from_checkpoint=str(resume) if resume else None)

    expected = [r[EXAMPLE_ID] for r in plan]
    if [i for ids in trainer.postgame_seen for i in ids] != expected:
        raise DataOrderError(
            f"{job.method}: the examples trained on differ from the data plan "
            f"({sum(map(len, trainer.postgame_seen))} seen, {len(expected)} planned)"
        )
    usage = trainer.postgame_total()
    model_dir = _save_model(trainer, job.work_dir)
    resumed = checkpoints.read_manifest(resume).step if resume else 0
    result = TrainResult(
        method=job.method,
        output_dir=str(model_dir),
        steps=int(out.global_step),
        examples=len(job.rows),
        seconds=usage.wall_s,
        train_loss=float(out.training_loss),
        metrics=step_metrics.last,
        first_metrics=step_metrics.first,
        usage=usage,
        resumed_from_step=resumed,
        seen=trainer.postgame_seen,
    )
    done.write_text(result.to_json())
    shutil.rmtree(ckpt_root, ignore_errors=True)  # finished: the model and the result are what is kept
    return result


def _save_model(trainer, work_dir: Path) -> Path:
    """The trained weights (LoRA adapters merged) + tokenizer, published atomically as `work_dir/model`."""
    model = trainer.model
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    staged = checkpoints.staging_dir(work_dir) / "model"
    model.save_pretrained(staged)
    trainer.processing_class.save_pretrained(staged)
    return checkpoints.publish(staged, work_dir / "model")


# --- the recipe ----------------------------------------------------------------------------------------------------


def new_training_run(cfg: Config, name: str) -> str:
    """A fresh MLflow run of the experiment for one training, tagged with the code and config that ran it (lineage)."""
    from mlflow import MlflowClient

    from postgame import runtime
    from postgame.lineage import CODE_TAG, CONFIG_TAG, code_version, config_sha256

    client = MlflowClient(tracking_uri=runtime.tracking_uri(cfg))
    experiment = client.get_experiment_by_name(cfg.tracking.experiment)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(cfg.tracking.experiment)
    tags = {CODE_TAG: code_version(), CONFIG_TAG: config_sha256(cfg)}
    return client.create_run(experiment_id, run_name=name, tags=tags).info.run_id


def _mlflow_sink(run_id: str) -> MetricsSink:
    from mlflow import MlflowClient
    from mlflow.entities import Metric

    client = MlflowClient()

    def sink(step: int, metrics: dict[str, float]) -> None:
        now = int(time.time() * 1000)
        client.log_batch(run_id, metrics=[Metric(f"train/{k}", v, now, step) for k, v in metrics.items()])

    return sink


def train_candidate(
    cfg: Config, dataset: CuratedDataset, run_id: str, progress: Callable[[str, int], None] | None = None
) -> Candidate:
    """setup → train → save, tracked in the MLflow run `run_id`. `progress(text, steps)`: told at each training
    step's end how many steps were just done, `cfg.train.max_steps` in all (`step_progress`)."""
    import mlflow
    import pandas as pd
    from mlflow.data.pandas_dataset import from_pandas  # what `mlflow.data.from_pandas` is (registered at import)

    from models import registry
    from postgame.lineage import CHECKPOINT_TAG, tree_sha256

    # setup
    all_rows = load_rows(cfg, dataset)
    agent = cfg.agent.enabled
    if agent:  # an agent learns sft from trajectories: single answers do not count towards choosing it
        all_rows = [r for r in all_rows if r.get("kind") != "sft" or r.get("messages")]
    method = choose_method(cfg.train, all_rows)
    rows = training_rows(method, all_rows, cfg.train, trajectories=agent)
    if not rows:
        raise ValueError(
            f"train: no {get_trainer(method).kind} rows in dataset {dataset.sha256[:12]} for method "
            f"{method!r} (sft {dataset.sft_examples}, dpo {dataset.dpo_pairs}, grpo {dataset.prompts})"
        )
    parent, parent_dir = starting_point(cfg)
    ids = {r["instance_id"] for r in rows}
    rollout = episode_rollout(cfg, ids) if method == "grpo" and agent else None
    reward = get_reward(cfg.train.reward)(cfg, ids) if method == "grpo" and rollout is None else None
    with mlflow.start_run(run_id=run_id) as run:
        mlflow.log_params(
            {
                "method": method,
                "max_steps": cfg.train.max_steps,
                "lr": cfg.train.rate(method),
                "batch_size": cfg.train.batch_size,
                "parent_version": parent,
                "init_from": cfg.train.init_from,
                "seed": cfg.train.seed,
                "lora": cfg.train.lora.model_dump_json() if cfg.train.lora else "none",
                "dataset_sha256": dataset.sha256,
                "snapshot_ids": ",".join(dataset.snapshot_ids),
                "prompts": dataset.prompts,
                "sft_examples": dataset.sft_examples,
                "dpo_pairs": dataset.dpo_pairs,
                "varied_prompts": dataset.varied_prompts,
                "train_rows": len(rows),
            }
        )
        frame = pd.DataFrame([{"example_id": r["example_id"], "instance_id": r["instance_id"]} for r in rows])
        mlflow.log_input(
            from_pandas(frame, source=dataset.uri, name=f"curated-{dataset.sha256[:12]}"),
            context="training",
        )
        # train
        # the base by its weights: another base (policy.base_model, the agent base) is other work on the same data
        start = parent if parent != "base" else f"base:{tree_sha256(parent_dir)}"
        work_dir = (
            cfg.home
            / "training"
            / work_key(method, start, dataset.sha256, cfg.train, cfg.policy, cfg.agent if agent else None)
        )
        result = fit(
            TrainJob(
                method=method,
                policy_dir=Path(parent_dir),
                rows=rows,
                work_dir=work_dir,
                settings=cfg.train,
                policy=cfg.policy,
                reward_fn=reward,
                on_metrics=_mlflow_sink(run.info.run_id),
                callbacks=(step_progress(progress, cfg.train.max_steps),) if progress else (),
                tools=_tool_schemas(cfg) if agent else None,
                rollout=rollout,
            )
        )
        usd = result.usage.usd(cfg.cost.usd_per_cpu_hour, cfg.cost.usd_per_gpu_hour)
        mlflow.log_metrics(
            {
                "train.seconds": result.seconds,
                "train.steps": result.steps,
                "train.cpu_seconds": result.usage.cpu_s,
                "train.gpu_seconds": result.usage.gpu_s,
                "train.tokens_generated": result.usage.tokens_generated,
                "train.tokens_trained": result.usage.tokens_trained,
                "train.cost_usd": usd,
                "train.resumed_from_step": result.resumed_from_step,
            }
        )
        # save
        model_uri = registry.log_policy(cfg, Path(result.output_dir), run_id=run.info.run_id)
        mlflow.set_tag(CHECKPOINT_TAG, tree_sha256(result.output_dir))  # pins the logged checkpoint (lineage)
        candidate = Candidate(
            run_id=run.info.run_id,
            model_uri=model_uri,
            model_dir=result.output_dir,
            parent_version=str(parent),
            method=method,
            steps=result.steps,
            train_loss=result.train_loss,
            seconds=result.seconds,
            dataset_sha256=dataset.sha256,
            snapshot_ids=dataset.snapshot_ids,
            metrics=result.metrics,
            baselines=result.first_metrics,
            cost_usd=usd,
            usage=asdict(result.usage),
        )
        mlflow.log_dict(asdict(candidate), "candidate.json")
    out_dir = cfg.home / "runs" / run.info.run_id
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "candidate.json").write_text(json.dumps(asdict(candidate), indent=2))
    return candidate


def starting_point(cfg: Config) -> tuple[str, Path]:
    """(parent, its checkpoint folder): the champion's registered version with `train.init_from: champion` and a
    champion registered, else "base" and the base policy (`models.policy.base_policy_dir`)."""
    from models import registry
    from models.policy import base_policy_dir

    champion = registry.champion_version(cfg) if cfg.train.init_from == "champion" else None
    if champion is None:
        return "base", base_policy_dir(cfg)
    return champion.version, Path(registry.download_version(cfg, champion.version))


def episode_rollout(cfg: Config, instance_ids: set[str]):
    """GRPO's rollout for an agent: an episode per completion in the environment evaluation uses, on the train
    split's instances, its first observation the oracle prompt traffic and evaluation give (models/rollout.py)."""
    import functools

    from evals.agent import make_environment
    from evals.factory.instances import load_split, prompt_for
    from models.rollout import EpisodeRollout

    instances = {i.instance_id: i for i in load_split(cfg, "train") if i.instance_id in instance_ids}
    return EpisodeRollout(
        instances,
        functools.partial(make_environment, cfg.agent, cfg.eval),
        tools=_tool_schemas(cfg),
        contexts={iid: prompt_for(cfg, inst) for iid, inst in instances.items()},
        max_len=cfg.policy.max_position_embeddings,
        max_new_tokens=cfg.policy.max_new_tokens,
        temperature=cfg.policy.temperature,
        breakage_penalty=cfg.train.breakage_penalty,
        truncated=cfg.train.truncated_episodes,
    )


def _tool_schemas(cfg: Config) -> list[dict]:
    from evals.agent import make_environment
    from evals.agent.episode import tool_schemas

    return tool_schemas(make_environment(cfg.agent, cfg.eval))


def load_candidate(cfg: Config, run_id: str) -> Candidate:
    """A candidate trained earlier (by `postgame train` or a cycle), from its run folder under home."""
    path = cfg.home / "runs" / run_id / "candidate.json"
    if not path.exists():
        raise FileNotFoundError(f"no candidate for run {run_id!r}: {path} does not exist")
    data = json.loads(path.read_text())
    return Candidate(**{**data, "snapshot_ids": tuple(data["snapshot_ids"])})
