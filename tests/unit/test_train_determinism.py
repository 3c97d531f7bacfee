"""The same config and seed on CPU give the same trained weights (SFT and GRPO; GRPO with a deterministic reward),
and another seed gives other weights (so the seed reaches data order and sampling)."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.train import TrainJob, fit
from postgame.config import PolicySettings
from postgame.settings.train import TrainSettings

POLICY = PolicySettings(max_new_tokens=8, temperature=1.0)
ROWS = {
    kind: [
        {
            "kind": kind,
            "example_id": f"{kind}:{i}",
            "instance_id": f"t{i}",
            "prompt": f"def g{i}(a, b):\n    return a",
            "completion": f" - b * {i}\n",
        }
        for i in range(6)
    ]
    for kind in ("sft", "grpo")
}


def parity_reward(prompts=None, completions=None, **_columns) -> list[float]:
    return [float(len(c) % 2) for c in completions]


def train(method: str, base: Path, work: Path, seed: int) -> dict:
    from safetensors.torch import load_file

    settings = TrainSettings(method=method, max_steps=3, batch_size=4, num_generations=2, save_steps=10, seed=seed)
    result = fit(
        TrainJob(
            method=method,
            policy_dir=base,
            rows=ROWS[method],
            work_dir=work,
            settings=settings,
            policy=POLICY,
            reward_fn=parity_reward,
        )
    )
    return load_file(str(Path(result.output_dir) / "model.safetensors"))


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a)


@pytest.mark.parametrize("method", ["sft", "grpo"])
def test_same_seed_same_weights(method, base_policy, tmp_path):
    first = train(method, base_policy, tmp_path / "a", seed=11)
    second = train(method, base_policy, tmp_path / "b", seed=11)
    assert same(first, second), "two runs with the same config and seed trained different weights"
    other = train(method, base_policy, tmp_path / "c", seed=12)
    assert not same(first, other), "the seed changed nothing"
