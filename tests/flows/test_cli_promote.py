"""`postgame promote --version V --json` as a person runs it, in its own process, on the small world of the flow tests
(its real tasks, a real SQLite MLflow, the real harness) under a registered model of its own: the base policy twice,
v1 champion and v2 the candidate. Both answer alike (greedy decoding, the same weights), so the gate must reject v2,
say so in the JSON and on the version, and leave v1 serving. A version that is champion already is refused by name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PROMOTE_KEYS = {
    "version",
    "model_uri",
    "outcome",
    "promoted",
    "reason",
    "candidate",
    "champion",
    "champion_version",
    "compared_with",
    "decision",
}


def postgame(config: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTGAME_", "PREFECT_", "MLFLOW_"))}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "postgame", "--config", str(config), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def twins(small_world):
    """A config for the same home with its own experiment and registered model: v1 (champion) and v2, both the
    base policy."""
    from models import registry
    from models.policy import base_policy_dir
    from models.train import new_training_run
    from postgame.config import load_config

    data = yaml.safe_load((small_world.home / "postgame.yaml").read_text())
    data["tracking"] = {"experiment": "cli-promote", "registered_model": "cli-policy"}
    path = small_world.home / "cli-promote.yaml"
    path.write_text(yaml.safe_dump(data))
    cfg = load_config(path, env={})
    for label in ("v1", "v2"):
        run_id = new_training_run(cfg, label)
        registry.register(cfg, registry.log_policy(cfg, base_policy_dir(cfg), run_id=run_id), tags={})
    registry.set_champion(cfg, "1", why="the base model", by="test")
    return cfg, path


def test_promote_version_json_round_trip(twins):
    from models import registry

    cfg, path = twins
    proc = postgame(path, "promote", "--version", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)  # stdout is the JSON alone
    assert set(out) == PROMOTE_KEYS
    assert (out["version"], out["model_uri"]) == ("2", "models:/cli-policy/2")
    assert (out["outcome"], out["promoted"], out["decision"]["promote"]) == ("rejected", False, False)
    assert (out["champion_version"], out["compared_with"]) == ("1", "1")
    assert out["candidate"] == out["champion"] == out["decision"]["candidate"]  # same weights, same greedy answers
    assert (out["decision"]["wins"], out["decision"]["losses"]) == (0, 0) and out["decision"]["n"] == 2
    assert out["reason"] == out["decision"]["reason"] and out["reason"]
    failed = {c["name"] for c in out["decision"]["checks"] if not c["passed"]}
    assert "significance" in failed
    # What the JSON says is what the registry holds.
    assert registry.champion_version(cfg).version == "1"
    assert registry.get_version(cfg, "2").tags["promotion.decision"] == "rejected"


def test_promote_the_champion_is_refused(twins):
    _, path = twins
    proc = postgame(path, "promote", "--version", "1", "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "v1 is already champion" in proc.stderr and "Traceback" not in proc.stderr
    neither = postgame(path, "promote", "--json")
    assert neither.returncode == 2 and "give exactly one of --run-id RUN or --version V" in neither.stderr
