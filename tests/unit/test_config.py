"""The one typed config: every shipped config loads; a bad key or value fails with one line naming it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from postgame.config import Config, load_config
from postgame.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted([ROOT / "postgame.yaml.example", *(ROOT / "infra").glob("postgame.*.yaml")])


def test_the_shipped_configs_are_found():
    assert {p.name for p in SHIPPED} >= {"postgame.yaml.example", "postgame.production.yaml"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_config_loads(path: Path):
    cfg = load_config(path, env={})
    assert isinstance(cfg, Config)
    assert cfg.home.is_absolute()


def test_defaults_need_no_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = load_config(env={})
    assert cfg.home == tmp_path / ".postgame"
    assert cfg.stack.host == "127.0.0.1"


def test_unknown_key_names_the_key(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("train:\n  max_stepz: 3\n")
    with pytest.raises(ConfigError, match=r"unknown key 'train.max_stepz' \(value 3\)"):
        load_config(path, env={})


def test_bad_value_names_key_value_and_rule(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("policy:\n  engine: tensorrt\n")
    with pytest.raises(ConfigError) as err:
        load_config(path, env={})
    assert "policy.engine = 'tensorrt'" in str(err.value)
    assert "transformers" in str(err.value) and "vllm" in str(err.value)


def test_env_override_and_home(tmp_path):
    cfg = load_config(
        env={"POSTGAME_HOME": str(tmp_path / "h"), "POSTGAME_EVAL__TIMEOUT_S": "7.5", "POSTGAME_TRAIN__METHOD": "grpo"}
    )
    assert cfg.home == tmp_path / "h"
    assert cfg.eval.timeout_s == 7.5
    assert cfg.train.method == "grpo"


@pytest.mark.parametrize("file_section", ["tasks", "factory"])
@pytest.mark.parametrize("env_section", ["TASKS", "FACTORY"])
def test_env_override_of_a_section_with_two_names_merges_with_the_files(tmp_path, file_section, env_section):
    """`factory:` is also spelled `tasks:`; an override in either spelling adds to the file's section, in either."""
    path = tmp_path / "c.yaml"
    path.write_text(f"{file_section}:\n  seed: 7\n")
    cfg = load_config(path, env={f"POSTGAME_{env_section}__SIMULATE__SECRET_RATE": "0.1"})
    assert (cfg.factory.seed, cfg.factory.simulate.secret_rate) == (7, 0.1)


def test_bad_env_override_names_the_key():
    with pytest.raises(ConfigError, match=r"stack.prefect_port = 'abc'"):
        load_config(env={"POSTGAME_STACK__PREFECT_PORT": "abc"})


def test_cross_field_rule_names_both_fields():
    with pytest.raises(ConfigError, match=r"train.batch_size=6 must be a multiple of train.num_generations=4"):
        load_config(env={"POSTGAME_TRAIN__BATCH_SIZE": "6"})


def test_secrets_are_not_printed_in_repr():
    cfg = load_config(env={"POSTGAME_STORE__SECRET_ACCESS_KEY": "hunter2-secret"})
    assert "hunter2-secret" not in repr(cfg) and "hunter2-secret" not in cfg.model_dump_json()
    assert cfg.store.secret_access_key.get_secret_value() == "hunter2-secret"


def test_cli_bad_config_exits_2_with_one_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("eval:\n  timeout_s: -1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "postgame", "--config", str(path), "status"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines == ["config error: eval.timeout_s = -1: Input should be greater than 0"]
    assert proc.stdout == ""


def test_by_default_the_policy_acts_as_an_agent_from_the_agent_base(tmp_path, monkeypatch):
    from models.policy import SHIPPED_AGENT_BASE, SHIPPED_BASE, base_policy_dir
    from postgame.config import answering_once

    monkeypatch.chdir(tmp_path)
    cfg = load_config(env={})
    assert cfg.agent.enabled and base_policy_dir(cfg) == SHIPPED_AGENT_BASE  # traffic, evaluation, the gate: episodes
    once = answering_once(cfg)  # what the single answer's benchmarks run
    assert not once.agent.enabled and base_policy_dir(once) == SHIPPED_BASE
    assert not load_config(env={"POSTGAME_AGENT__ENABLED": "false"}).agent.enabled
