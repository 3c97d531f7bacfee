"""The config reference cannot go stale: postgame.yaml.example and docs/config.md are what the settings models
generate (`python -m postgame.configref`), the example loads to exactly the defaults, and every key says what it is."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from postgame.config import Config, load_config
from postgame.configref import COMMAND, EXAMPLE, REFERENCE, example_yaml, keys, reference_md

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("path", "generate"), [(EXAMPLE, example_yaml), (REFERENCE, reference_md)], ids=[str(EXAMPLE), str(REFERENCE)]
)
def test_the_committed_reference_is_what_the_models_generate(path: Path, generate):
    # guards: a default, rule or description changed in a settings model without the reference following it
    committed = (ROOT / path).read_text() if (ROOT / path).exists() else ""
    assert committed == generate(), f"{path} differs from the settings models: run `{COMMAND}` in the repository root"


def test_the_example_loads_to_exactly_the_defaults():
    # guards: a default written as something YAML reads back differently (a string read as a number, a dropped key)
    loaded = load_config(ROOT / EXAMPLE, env={})
    assert loaded == Config().model_copy(update={"home": Config().home.absolute()})


def test_the_example_names_every_key_of_every_section():
    # guards: a field the generator skips (an optional section such as train.lora is written commented out)
    text = example_yaml()
    for k in keys(Config):
        assert f"{k.path[-1]}:" in text, ".".join(k.path)
    assert "\n  lora: null" in text and "\n    # r: 8" in text


def test_every_key_has_a_description():
    # guards: a new setting added without saying what it does (the reference would show an empty cell)
    missing = [".".join(k.path) for k in keys(Config) if not k.description.strip()]
    assert missing == [], f"give these settings a description= in their model, then run `{COMMAND}`"


def test_rules_read_off_the_models():
    by_path = {k.path: k for k in keys(Config)}
    assert by_path[("stack", "prefect_port")].rule == "int >= 1, <= 65535"
    assert by_path[("train", "method")].rule == "auto | sft | dpo | grpo"
    assert by_path[("eval", "env_store_prefix")].rule == "str, not empty"
    assert by_path[("factory",)].also == ("tasks",)
    assert ("validate", "min_records") in by_path  # the YAML key (alias), not the Python name validate_


def test_check_names_a_stale_file_and_the_command(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / EXAMPLE).write_text(example_yaml().replace("max_steps: 32", "max_steps: 2"))
    (tmp_path / REFERENCE).write_text(reference_md())
    proc = subprocess.run(
        [sys.executable, "-m", "postgame.configref", "--check", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"{tmp_path / EXAMPLE} differs from the settings models: run `{COMMAND}`"
