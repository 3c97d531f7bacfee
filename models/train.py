"""Train: one TRL run per cycle, starting from the champion (or the base policy), as one recipe read top to bottom:

    setup (rows, parent checkpoint, MLflow run inputs) → train (the trainer chosen by name) → save (log the model)

    postgame train --snapshot ID [--json]

Trainers are chosen by name from `TRAINERS` (`train.method`; `auto` = SFT when the curated set holds enough accepted
patches, else GRPO), rewards from `REWARDS`. The GRPO reward is the evaluation harness itself
(`evals.harness.make_reward_fn`): the RL reward *is* the evaluation. The run records its inputs (dataset URI and
sha256, snapshot ids, parent version) so that lineage leads from the model back to the log objects. A trainer writes
a complete checkpoint (weights + tokenizer) plus `train_result.json` under its output folder, nothing else.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from postgame.config import Config, PolicySettings, TrainSettings
from postgame.curate import CuratedDataset, load_rows

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


@dataclass(frozen=True)
class TrainInputs:
    """What a trainer gets: the curated rows, the checkpoint to start from, where to write, and the settings."""

    rows: list[dict]
    parent_dir: Path
    out_dir: Path
    cfg: Config


# --- trainers, by name ---------------------------------------------------------------------------------------------

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


def _run_sft(inputs: TrainInputs) -> TrainResult:
    rows = [r for r in inputs.rows if r.get("completion")]
    return train_sft(inputs.parent_dir, rows, settings=inputs.cfg.train, out_dir=inputs.out_dir)


def _run_grpo(inputs: TrainInputs) -> TrainResult:
    cfg = inputs.cfg
    reward = get_reward(cfg.train.reward)(cfg, {r["instance_id"] for r in inputs.rows})
    prompts = [{"prompt": r["prompt"], "instance_id": r["instance_id"]} for r in inputs.rows][:cfg.train.max_prompts]
    return train_grpo(inputs.parent_dir, prompts, reward, settings=cfg.train, policy=cfg.policy,
                      out_dir=inputs.out_dir)


TRAINERS: dict[str, Callable[[TrainInputs], TrainResult]] = {"sft": _run_sft, "grpo": _run_grpo}


def get_trainer(name: str) -> Callable[[TrainInputs], TrainResult]:
    try:
        return TRAINERS[name]
    except KeyError:
        raise KeyError(f"train.method = {name!r}: unknown trainer; valid names: {', '.join(sorted(TRAINERS))}, "
                       f"auto") from None


# --- rewards, by name ----------------------------------------------------------------------------------------------

def _harness_reward(cfg: Config, instance_ids: set[str]) -> RewardFn:
    """The evaluation harness as the reward: 1.0 resolved, 0.0 not, None on an infrastructure error."""
    from evals.factory.instances import load_split
    from evals.harness import make_reward_fn

    instances = {i.instance_id: i for i in load_split(cfg, "train") if i.instance_id in instance_ids}
    return make_reward_fn(instances, repos_dir=None, settings=cfg.eval)


REWARDS: dict[str, Callable[[Config, set[str]], RewardFn]] = {"harness": _harness_reward}


def get_reward(name: str) -> Callable[[Config, set[str]], RewardFn]:
    try:
        return REWARDS[name]
    except KeyError:
        raise KeyError(f"train.reward = {name!r}: unknown reward; valid names: {', '.join(sorted(REWARDS))}") from None


def choose_method(cfg: Config, rows: list[dict]) -> str:
    if cfg.train.method != "auto":
        return cfg.train.method
    return "sft" if sum(1 for r in rows if r.get("completion")) >= cfg.train.batch_size else "grpo"


# --- the recipe ----------------------------------------------------------------------------------------------------

def new_training_run(cfg: Config, name: str) -> str:
    """A fresh MLflow run of the experiment, for training outside a cycle."""
    from mlflow import MlflowClient

    from postgame import runtime

    client = MlflowClient(tracking_uri=runtime.tracking_uri(cfg))
    experiment = client.get_experiment_by_name(cfg.tracking.experiment)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(cfg.tracking.experiment)
    return client.create_run(experiment_id, run_name=name).info.run_id


def train_candidate(cfg: Config, dataset: CuratedDataset, run_id: str) -> Candidate:
    """setup → train → save, tracked in the MLflow run `run_id`."""
    import mlflow
    import pandas as pd

    from models import registry
    from models.policy import base_policy_dir
    from postgame.lineage import CHECKPOINT_TAG, tree_sha256

    # setup
    rows = load_rows(cfg, dataset)
    method = choose_method(cfg, rows)
    trainer = get_trainer(method)
    champion = registry.champion_version(cfg)
    parent_dir = registry.download_version(cfg, champion.version) if champion else base_policy_dir(cfg)
    parent = champion.version if champion else "base"
    with mlflow.start_run(run_id=run_id) as run:
        mlflow.log_params({"method": method, "max_steps": cfg.train.max_steps, "lr": cfg.train.learning_rate,
                           "batch_size": cfg.train.batch_size, "parent_version": parent,
                           "dataset_sha256": dataset.sha256, "snapshot_ids": ",".join(dataset.snapshot_ids),
                           "prompts": dataset.prompts, "sft_examples": dataset.sft_examples})
        frame = pd.DataFrame([{"instance_id": r["instance_id"], "has_completion": "completion" in r} for r in rows])
        mlflow.log_input(mlflow.data.from_pandas(frame, source=dataset.uri, name=f"curated-{dataset.sha256[:12]}"),
                         context="training")
        out_dir = cfg.home / "runs" / run.info.run_id
        # train
        result = trainer(TrainInputs(rows=rows, parent_dir=parent_dir, out_dir=out_dir, cfg=cfg))
        mlflow.log_metrics({f"train.{k.replace('/', '.')}": v for k, v in result.metrics.items()})
        mlflow.log_metrics({"train.seconds": result.seconds, "train.steps": result.steps})
        # save
        model_uri = registry.log_policy(cfg, Path(result.output_dir), run_id=run.info.run_id)
        mlflow.set_tag(CHECKPOINT_TAG, tree_sha256(result.output_dir))  # pins the logged checkpoint (lineage)
        candidate = Candidate(run_id=run.info.run_id, model_uri=model_uri, model_dir=result.output_dir,
                              parent_version=parent, method=method, steps=result.steps, train_loss=result.train_loss,
                              seconds=result.seconds, dataset_sha256=dataset.sha256,
                              snapshot_ids=dataset.snapshot_ids)
        mlflow.log_dict(asdict(candidate), "candidate.json")
    (out_dir / "candidate.json").write_text(json.dumps(asdict(candidate), indent=2))
    return candidate


def load_candidate(cfg: Config, run_id: str) -> Candidate:
    """A candidate trained earlier (by `postgame train` or a cycle), from its run folder under home."""
    path = cfg.home / "runs" / run_id / "candidate.json"
    if not path.exists():
        raise FileNotFoundError(f"no candidate for run {run_id!r}: {path} does not exist")
    data = json.loads(path.read_text())
    return Candidate(**{**data, "snapshot_ids": tuple(data["snapshot_ids"])})
