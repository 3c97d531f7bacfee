"""The embedded policy is built locally (no download) and round-trips through the MLflow registry by alias."""

from __future__ import annotations

import json
from importlib import metadata

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
    assert first.prompt_tokens > 0 and 0 < first.completion_tokens <= 8 and first.latency_ms > 0


def test_greedy_ignores_the_seed_and_sampling_follows_it(base_policy):
    # Evaluation depends on greedy decoding being deterministic. Every call seeds torch, so comparing two greedy calls
    # with the same seed would pass with `greedy` ignored; different seeds tell greedy from sampling.
    policy = Policy(base_policy, name="p", version="base", settings=PolicySettings(max_new_tokens=8))
    prompts = ["def add(a, b):\n", "x = ", "class Stack:\n    def push(self, item):\n", "import "]
    greedy = [[g.text for g in policy.generate(prompts, seed=seed, greedy=True)] for seed in (0, 1, 2)]
    assert greedy[0] == greedy[1] == greedy[2]
    sampled = [[g.text for g in policy.generate(prompts, seed=seed)] for seed in (0, 1)]
    assert sampled[0] != sampled[1]  # sampling draws differ with the seed: the greedy check above can fail
    assert sampled[0] == [g.text for g in policy.generate(prompts, seed=0)]  # and repeat with the same seed


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
    # the logged model names what loading it imports, at the versions it was logged with (not MLflow's guess)
    logged = cfg.home / "cache" / "models" / cfg.tracking.registered_model / version.version / "requirements.txt"
    required = logged.read_text().split()
    assert {f"{name}=={metadata.version(name)}" for name in ("torch", "transformers", "mlflow")} <= set(required)


def _version(cfg, label: str) -> str:
    """A tiny fake checkpoint logged as a real MLflow model and registered (no weights needed to move aliases)."""
    import mlflow

    from postgame.runtime import resolve

    resolve(cfg)
    ckpt = cfg.home / "fake" / label
    ckpt.mkdir(parents=True)
    (ckpt / "config.json").write_text(json.dumps({"label": label}))
    run_id = mlflow.MlflowClient().create_run(mlflow.set_experiment("registry-test").experiment_id).info.run_id
    return registry.register(cfg, registry.log_policy(cfg, ckpt, run_id=run_id), tags={}).version


def test_champion_moves_are_compare_and_set_recorded_and_rolled_back(cfg):
    from postgame.errors import RollbackError, StaleChampion

    v1, v2, v3 = (_version(cfg, name) for name in ("a", "b", "c"))
    assert registry.version_by_alias(cfg, registry.CHALLENGER).version == v3  # the latest registered is under review
    registry.clear_challenger(cfg, v2)  # not the challenger: nothing happens
    assert registry.version_by_alias(cfg, registry.CHALLENGER).version == v3
    registry.clear_challenger(cfg, v3)
    assert registry.version_by_alias(cfg, registry.CHALLENGER) is None

    with pytest.raises(RollbackError, match="no previous champion"):
        registry.rollback(cfg)
    registry.move_champion(cfg, v1, expected=None, why="base", by="bootstrap")
    registry.move_champion(cfg, v2, expected=v1, why="beats v1", by="gate")
    with pytest.raises(StaleChampion, match="is v2, not v1") as stale:
        registry.move_champion(cfg, v3, expected=v1, why="beats v1 (stale read)", by="gate")
    assert (stale.value.expected, stale.value.actual) == (v1, v2)
    assert registry.champion_version(cfg).version == v2

    back = registry.rollback(cfg, why="errors in production", by="oncall")
    assert (back.from_, back.to, back.by) == (
        v2,
        v1,
        "oncall",
    ) and back.why == "rollback from v2 to v1: errors in production"
    assert registry.champion_version(cfg).version == v1
    assert registry.get_version(cfg, v1).tags["champion.by"] == "oncall"
    with pytest.raises(RollbackError, match="already champion"):
        registry.rollback(cfg, to=v1)
    registry.rollback(cfg, to=v3, why="named", by="oncall")
    history = registry.champion_history(cfg)
    assert [(m.from_, m.to, m.by) for m in history] == [
        (None, v1, "bootstrap"),
        (v1, v2, "gate"),
        (v2, v1, "oncall"),
        (v1, v3, "oncall"),
    ]


def test_scores_round_trip_through_the_run_by_cache_key(cfg):
    import mlflow

    from models.evaluate import InstanceOutcome, SplitScores
    from postgame.runtime import resolve

    resolve(cfg)
    run_id = mlflow.MlflowClient().create_run(mlflow.set_experiment("registry-test").experiment_id).info.run_id
    scores = SplitScores(
        "indomain",
        "k" * 64,
        (
            InstanceOutcome("a-1", "a", True, p2p_broken=True, reward=1.0),
            InstanceOutcome("b-1", "b", False, error=True),
        ),
        cpu_seconds=3.5,
    )
    registry.store_scores(cfg, run_id, scores)
    assert registry.load_scores(cfg, run_id, "k" * 64) == scores
    assert registry.load_scores(cfg, run_id, "x" * 64) is None  # another key: graded again


def test_the_base_becomes_the_first_champion_and_never_replaces_a_trained_one(cfg, base_policy):
    first, made = registry.register_base(cfg, base_policy, tags={"eval.resolved_rate": "0.125"})
    champion = registry.champion_version(cfg)
    assert made and champion.version == first.version and champion.aliases == ("champion",)  # no `challenger` left
    assert champion.tags["origin"] == "bootstrap" and champion.metric("resolved_rate") == pytest.approx(0.125)
    rebuilt, made = registry.register_base(cfg, base_policy)
    assert made and registry.champion_version(cfg).version == rebuilt.version  # a newer base replaces an older one
    trained = _version(cfg, "trained")
    registry.set_champion(cfg, trained, why="promoted")
    later, made = registry.register_base(cfg, base_policy)
    assert not made and registry.champion_version(cfg).version == trained  # never over a trained champion
    assert [m.why for m in registry.champion_history(cfg)][:1] == ["the base policy: the first champion"]


def test_a_candidate_starts_from_the_base_unless_told_to_continue_from_the_champion(cfg):
    from models.policy import base_policy_dir
    from models.train import starting_point

    assert starting_point(cfg) == ("base", base_policy_dir(cfg))  # no champion yet
    trained = _version(cfg, "trained")
    registry.set_champion(cfg, trained, why="promoted")
    assert starting_point(cfg) == ("base", base_policy_dir(cfg))  # the default: every round from the base
    cont = cfg.model_copy(update={"train": cfg.train.model_copy(update={"init_from": "champion"})})
    parent, path = starting_point(cont)
    assert parent == trained and json.loads((path / "config.json").read_text()) == {"label": "trained"}
