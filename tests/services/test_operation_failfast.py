"""Fail fast, fail clearly: with a service of the stack gone, a command ends within the configured bound with one line
naming the service and what to do (the traceback in a log file under home), never silently on a different store;
and a command on a brand-new POSTGAME_HOME creates the folders it needs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support import make_config

pytestmark = pytest.mark.services

TIMEOUT_S = 5


def cli(cfg_path, *args: str, env_extra: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTGAME_", "PREFECT_", "MLFLOW_"))}
    env.update(env_extra or {})
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "postgame", *(["--config", str(cfg_path)] if cfg_path else []), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    return proc, time.monotonic() - started


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    cfg = make_config(
        tmp_path_factory.mktemp("failfast-home"),
        stack={"start_timeout_s": 300},
        operate={"service_timeout_s": TIMEOUT_S},
    )
    proc, _ = cli(cfg.home / "postgame.yaml", "up")
    assert proc.returncode == 0, proc.stderr
    yield cfg
    cli(cfg.home / "postgame.yaml", "down")


def test_mlflow_stopped_one_line_within_the_bound(stack):
    state = json.loads((stack.home / "stack.json").read_text())
    os.killpg(state["services"]["mlflow"]["pid"], signal.SIGKILL)
    started = time.monotonic()  # what importing the cycle's code costs on this machine, right now (busy: a minute)
    subprocess.run([sys.executable, "-c", "import flows.cycle, mlflow, models.train"], check=True, timeout=600)
    startup = time.monotonic() - started
    proc, seconds = cli(stack.home / "postgame.yaml", "cycle")
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert len(lines) <= 2, lines  # the error, and where its details are
    assert lines[0].startswith("error: ") and "MLflow" in lines[0] and "postgame up" in lines[0], lines
    assert seconds < startup + TIMEOUT_S + 30, (seconds, startup)  # not minutes of silent retries
    assert not (stack.home / "store").exists()  # never a silent switch to the folder store
    assert not (stack.home / "mlflow.db").exists()  # nor to a SQLite MLflow


def test_a_new_home_gets_the_folders_it_needs(tmp_path):
    home = tmp_path / "brand" / "new" / "home"
    proc, seconds = cli(None, "cycle", "--json", env_extra={"POSTGAME_HOME": str(home)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["status"] == "skipped"
    assert (home / "prefect-ephemeral").is_dir() and (home / "logs").is_dir()
