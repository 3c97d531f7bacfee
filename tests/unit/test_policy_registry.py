"""The embedded policy is built locally (no download) and round-trips through the MLflow registry by alias."""

from __future__ import annotations

import json

import pytest

from models import registry
from models.policy import Policy, load_champion
from postgame.config import PolicySettings


def test_base_policy_is_built_from_a_config_and_a_local_tokenizer(base_policy):
    config = json.loads((base_policy / "config.json").read_text())
    assert config["model_type"] == "qwen2"
    assert (base_policy / "tokenizer.json").exists()
    policy = Policy(base_policy, name="p", version="base", settings=PolicySettings(max_new_tokens=8))
    first = policy.generate(["def add(a, b):\n"], greedy=True)[0]
    again = policy.generate(["def add(a, b):\n"], greedy=True)[0]
    assert first.text == again.text  # greedy decoding is deterministic: evaluation depends on it
    assert first.prompt_tokens > 0 and 0 < first.completion_tokens <= 8 and first.latency_ms > 0


def test_register_alias_download_and_load_champion(cfg, base_policy):
    import mlflow

    from postgame.runtime import resolve

    resolve(cfg)  # points MLflow at the stack
    experiment = mlflow.set_experiment("registry-test")
    run_id = mlflow.MlflowClient().create_run(experiment.experiment_id).info.run_id
    assert load_champion(cfg).version == "base"  # no champion yet: the base policy serves

    uri = registry.log_policy(cfg, base_policy, run_id=run_id)
    version = registry.register(cfg, uri, tags={"eval.resolved_rate": "0.25"}, description="first")
    assert version.aliases == ("challenger",)
    assert registry.champion_version(cfg) is None

    registry.set_champion(cfg, version.version)
    champion = registry.champion_version(cfg)
    assert champion.version == version.version and champion.metric("resolved_rate") == pytest.approx(0.25)
    served = load_champion(cfg)
    assert served.version == version.version
    assert (served.path / "config.json").read_text() == (base_policy / "config.json").read_text()
    assert served.generate(["x = "], greedy=True)[0].completion_tokens > 0
