"""The `factory:` config section (formerly `tasks:`, still read) fails at load with the key, the value and what is allowed."""

from __future__ import annotations

import pytest

from postgame.config import load_config
from postgame.errors import ConfigError


def load(tmp_path, text: str):
    path = tmp_path / "postgame.yaml"
    path.write_text(text)
    return load_config(path, env={})


def test_defaults_load_and_shape_a_300_instance_build(tmp_path):
    cfg = load(tmp_path, "factory: {seed: 3}\n")
    assert cfg.factory.seed == 3 and cfg.factory.validation_runs == 2
    assert 12 * cfg.factory.instances_per_project >= 300
    assert (
        cfg.factory.simulate.duplicate_rate
        == cfg.factory.simulate.malformed_rate
        == cfg.factory.simulate.secret_rate
        == 0
    )


@pytest.mark.parametrize(
    "text, words",
    [
        ("factory: {operators: [flip_everything]}", ["factory.operators", "flip_everything", "flip_comparison"]),
        ("factory: {split_fractions: {train: 0.9, eval: 0.2, holdout: 0.2}}", ["split_fractions", "sum to 1"]),
        ("factory: {split_fractions: {train: 1.0}}", ["split_fractions", "exactly"]),
        ("factory: {split_projects: {train: [textkit], eval: [textkit]}}", ["textkit", "more than one split"]),
        ("factory: {validation_runs: 1}", ["factory.validation_runs", "1"]),
        ("factory: {simulate: {duplicate_rate: 1.5}}", ["factory.simulate.duplicate_rate", "1.5"]),
        ("factory: {instances_per_project: 50, candidates_per_project: 10}", ["instances_per_project", "50", "10"]),
        ("factory: {seeed: 1}", ["unknown key", "factory.seeed"]),
    ],
)
def test_bad_values_name_key_value_and_rule(tmp_path, text, words):
    with pytest.raises(ConfigError) as err:
        load(tmp_path, text + "\n")
    for word in words:
        assert word in str(err.value), (word, str(err.value))


def test_the_old_section_name_tasks_still_loads(tmp_path):
    assert load(tmp_path, "tasks: {seed: 5}\n").factory.seed == 5
