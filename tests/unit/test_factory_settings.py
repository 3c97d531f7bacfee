"""The `tasks:` config section fails at load with the key, the value and what is allowed."""

from __future__ import annotations

import pytest

from postgame.config import load_config
from postgame.errors import ConfigError


def load(tmp_path, text: str):
    path = tmp_path / "postgame.yaml"
    path.write_text(text)
    return load_config(path, env={})


def test_defaults_load_and_shape_a_300_instance_build(tmp_path):
    cfg = load(tmp_path, "tasks: {seed: 3}\n")
    assert cfg.tasks.seed == 3 and cfg.tasks.validation_runs == 2
    assert 12 * cfg.tasks.instances_per_project >= 300
    assert cfg.tasks.simulate.duplicate_rate == cfg.tasks.simulate.malformed_rate == cfg.tasks.simulate.secret_rate == 0


@pytest.mark.parametrize("text, words", [
    ("tasks: {operators: [flip_everything]}", ["tasks.operators", "flip_everything", "flip_comparison"]),
    ("tasks: {split_fractions: {train: 0.9, eval: 0.2, holdout: 0.2}}", ["split_fractions", "sum to 1"]),
    ("tasks: {split_fractions: {train: 1.0}}", ["split_fractions", "exactly"]),
    ("tasks: {split_projects: {train: [textkit], eval: [textkit]}}", ["textkit", "more than one split"]),
    ("tasks: {validation_runs: 1}", ["tasks.validation_runs", "1"]),
    ("tasks: {simulate: {duplicate_rate: 1.5}}", ["tasks.simulate.duplicate_rate", "1.5"]),
    ("tasks: {instances_per_project: 50, candidates_per_project: 10}", ["instances_per_project", "50", "10"]),
    ("tasks: {seeed: 1}", ["unknown key", "tasks.seeed"]),
])
def test_bad_values_name_key_value_and_rule(tmp_path, text, words):
    with pytest.raises(ConfigError) as err:
        load(tmp_path, text + "\n")
    for word in words:
        assert word in str(err.value), (word, str(err.value))
