"""`postgame up --auth`: basic auth on the real Prefect server and MLflow (`--app-name basic-auth`). Wrong or missing
credentials get 401; the right ones work, also for a whole (empty) cycle; the password appears in no log, no state
file and no command output. One stack for the module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import httpx
import pytest

from tests.support import free_port, make_config

pytestmark = pytest.mark.services

PASSWORD = f"pw-{uuid.uuid4().hex}"


def cli(cfg, *args: str, check: bool = True, password: str | None = PASSWORD) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTGAME_", "PREFECT_", "MLFLOW_"))}
    if password is not None:
        env["POSTGAME_AUTH_PASSWORD"] = password
    proc = subprocess.run([sys.executable, "-m", "postgame", "--config", str(cfg.home / "postgame.yaml"), *args],
                          capture_output=True, text=True, env=env, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"postgame {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    cfg = make_config(tmp_path_factory.mktemp("auth-home"), stack={"start_timeout_s": 300},
                      operate={"runner_port": free_port(), "service_timeout_s": 30})
    cli(cfg, "up", "--auth")
    yield cfg
    cli(cfg, "down", check=False)


def _prefect(cfg, auth) -> int:
    return httpx.post(f"http://127.0.0.1:{cfg.stack.prefect_port}/api/flows/filter", json={}, auth=auth,
                      timeout=30).status_code


def _mlflow(cfg, auth) -> int:
    return httpx.get(f"http://127.0.0.1:{cfg.stack.mlflow_port}/api/2.0/mlflow/experiments/search",
                     params={"max_results": 1}, auth=auth, timeout=30).status_code


def test_wrong_or_missing_credentials_get_401(stack):
    for auth in (None, ("postgame", "wrong"), ("intruder", PASSWORD)):
        assert _prefect(stack, auth) == 401, auth
        assert _mlflow(stack, auth) == 401, auth


def test_the_right_credentials_work_and_health_stays_open(stack):
    assert _prefect(stack, ("postgame", PASSWORD)) == 200
    assert _mlflow(stack, ("postgame", PASSWORD)) == 200
    assert httpx.get(f"http://127.0.0.1:{stack.stack.prefect_port}/api/health", timeout=30).status_code == 200
    status = json.loads(cli(stack, "status", "--json").stdout)
    assert status["running"] is True


def test_a_cycle_runs_with_the_credentials_from_the_environment(stack):
    report = json.loads(cli(stack, "cycle", "--json").stdout)
    assert report["status"] == "skipped"  # an empty world: every client got through (MLflow run, Prefect API)


def test_the_password_is_never_written_down(stack):
    written = [stack.home / "stack.json", *(stack.home / "logs").glob("*.log")]
    assert len(written) >= 4
    for path in written:
        assert PASSWORD not in path.read_text(errors="replace"), path
    out = cli(stack, "status", "--json")
    assert PASSWORD not in out.stdout + out.stderr
