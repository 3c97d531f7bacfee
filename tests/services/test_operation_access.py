"""`postgame up --auth`: basic auth on the real Prefect server and MLflow (`--app-name basic-auth`). Wrong or missing
credentials get 401; the right ones work, also for a whole (empty) cycle; the password appears in no log, no state
file and no command output. One stack for the module."""

from __future__ import annotations

import json
import subprocess
import uuid

import httpx
import pytest

from tests.support import cli_env, free_port, make_config, postgame_cli, running_stack

pytestmark = pytest.mark.services

PASSWORD = f"pw-{uuid.uuid4().hex}"


def cli(cfg, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`postgame` with the password in its environment, as an operator runs it."""
    return postgame_cli(cfg, *args, check=check, env=cli_env(POSTGAME_AUTH_PASSWORD=PASSWORD))


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    cfg = make_config(
        tmp_path_factory.mktemp("auth-home"),
        stack={"start_timeout_s": 300},
        operate={"runner_port": free_port(), "service_timeout_s": 30},
    )
    with running_stack(cfg, "--auth", env=cli_env(POSTGAME_AUTH_PASSWORD=PASSWORD)):
        yield cfg


def _prefect(cfg, auth) -> int:
    return httpx.post(
        f"http://127.0.0.1:{cfg.stack.prefect_port}/api/flows/filter", json={}, auth=auth, timeout=30
    ).status_code


def _mlflow(cfg, auth) -> int:
    return httpx.get(
        f"http://127.0.0.1:{cfg.stack.mlflow_port}/api/2.0/mlflow/experiments/search",
        params={"max_results": 1},
        auth=auth,
        timeout=30,
    ).status_code


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
