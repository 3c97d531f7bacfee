"""Train: one TRL run per cycle, starting from the champion (or the base policy), tracked in the cycle's MLflow run.

`train.method: auto` runs SFT when the curated set holds accepted patches, else GRPO whose reward is the evaluation
harness itself (`evals.harness.make_reward_fn`): the RL reward *is* the evaluation. The run records its inputs
(dataset URI and sha256, snapshot id, parent version) so that lineage leads from the model back to the log objects.
No retries: a failed training is a failure, not a transient.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from prefect import task

from postgame.config import Config
from tasks.curate import CuratedDataset, load_rows


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


def choose_method(cfg: Config, rows: list[dict]) -> str:
    if cfg.train.method != "auto":
        return cfg.train.method
    return "sft" if sum(1 for r in rows if r.get("completion")) >= cfg.train.batch_size else "grpo"


def train_candidate(cfg: Config, dataset: CuratedDataset, run_id: str) -> Candidate:
    import mlflow
    import pandas as pd

    from evals.factory.catalog import load_tasks
    from evals.harness import make_reward_fn
    from models import registry
    from models.policy import base_policy_dir
    from models.train import train_grpo, train_sft
    from postgame.runtime import tracking_uri

    rows = load_rows(cfg, dataset)
    method = choose_method(cfg, rows)
    champion = registry.champion_version(cfg)
    parent_dir = registry.download_version(cfg, champion.version) if champion else base_policy_dir(cfg)
    parent = champion.version if champion else "base"
    mlflow.set_tracking_uri(tracking_uri(cfg))
    with mlflow.start_run(run_id=run_id) as run:
        mlflow.log_params({"method": method, "max_steps": cfg.train.max_steps, "lr": cfg.train.learning_rate,
                           "batch_size": cfg.train.batch_size, "parent_version": parent,
                           "dataset_sha256": dataset.sha256, "snapshot_ids": ",".join(dataset.snapshot_ids),
                           "prompts": dataset.prompts, "sft_examples": dataset.sft_examples})
        frame = pd.DataFrame([{"instance_id": r["instance_id"], "has_completion": "completion" in r} for r in rows])
        mlflow.log_input(mlflow.data.from_pandas(frame, source=dataset.uri, name=f"curated-{dataset.sha256[:12]}"),
                         context="training")
        out_dir = cfg.home / "runs" / run.info.run_id
        if method == "sft":
            result = train_sft(parent_dir, [r for r in rows if r.get("completion")], settings=cfg.train,
                               out_dir=out_dir)
        else:
            train_ids = {r["instance_id"] for r in rows}
            instances = {i.instance_id: i for i in load_tasks(cfg, "train") if i.instance_id in train_ids}
            reward = make_reward_fn(instances, repos_dir=None, settings=cfg.eval)
            prompts = [{"prompt": r["prompt"], "instance_id": r["instance_id"]} for r in rows][:cfg.train.max_prompts]
            result = train_grpo(parent_dir, prompts, reward, settings=cfg.train, policy=cfg.policy, out_dir=out_dir)
        mlflow.log_metrics({f"train.{k.replace('/', '.')}": v for k, v in result.metrics.items()})
        mlflow.log_metrics({"train.seconds": result.seconds, "train.steps": result.steps})
        model_uri = registry.log_policy(cfg, Path(result.output_dir), run_id=run.info.run_id)
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


@task(name="train")
def train(cfg: Config, dataset: CuratedDataset, run_id: str) -> Candidate:
    return train_candidate(cfg, dataset, run_id)
