"""Helpers for tests of every kind: configs on free loopback ports, a real SeaweedFS server, and the `postgame` CLI in
its own process (with the local stack it starts and stops).

Importable (`from tests.support import make_config`); the fixtures built on them live in tests/conftest.py.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from postgame.config import Config, load_config

ROOT = Path(__file__).resolve().parents[1]
DATABASE = "sqlite"  # stack.database of every config below: `pytest --db postgres` (tests/conftest.py) sets it


SANDBOX_NEEDS = ("bwrap", "pids")


def sandbox_shortfall(need: str) -> str | None:
    """Why the sandbox cannot give a test what it `need`s here, or None when it can: "bwrap" (bubblewrap installed and
    working: namespaces, no network, read-only host), "pids" (a fork bomb containable: RLIMIT_NPROC for a normal user,
    a pids cgroup as root, since root ignores RLIMIT_NPROC even in a user namespace)."""
    import shutil

    if need not in SANDBOX_NEEDS:
        raise ValueError(f"sandbox need {need!r}: one of {SANDBOX_NEEDS}")
    if need == "bwrap":
        if not shutil.which("bwrap"):
            return "bubblewrap is not installed (apt-get install bubblewrap)"
        from evals.harness.sandbox import probe

        found = probe()
        return None if found.bwrap_ok else f"bubblewrap does not work here: {found.reason}"
    from evals.harness import cgroups

    if os.geteuid() == 0 and not any(p.controller == "pids" for p in cgroups.available()):
        return "running as root with no usable pids cgroup: a fork bomb cannot be contained"
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def free_port_block(size: int = 7) -> int:
    """The first of `size` consecutive free loopback ports (SeaweedFS needs a block)."""
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(20000, 60000)
        if all(_bindable(base + i) for i in range(size)):
            return base
    raise RuntimeError("no block of free ports found")


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def tiny_qwen2(seed: int = 0, **config: Any) -> Any:
    """A randomly initialised Qwen2 causal LM small enough for a unit test (torch seeded with `seed` first); `config`
    overrides the Qwen2Config's fields (vocab_size, the ids of eos and pad, ...)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    fields = {
        "vocab_size": 64,
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "tie_word_embeddings": True,
        **config,
    }
    return Qwen2ForCausalLM(Qwen2Config(**fields))


def make_config(home: Path, **sections) -> Config:
    """A config whose home is `home`, with the stack and the deployment's runner on free loopback ports (tests never
    touch the defaults: two test sessions on one machine, or a `make demo` beside them, would collide), the
    database of `pytest --db` (SQLite unless the run says postgres) and the policy answering once unless `agent=`
    says otherwise.

    It is written to `home/postgame.yaml` as well, for code that reloads the config by path (flows, the CLI)."""
    stack = {
        "prefect_port": free_port(),
        "mlflow_port": free_port(),
        "s3_port": free_port(),
        "weed_port_base": free_port_block(),
        **({"database": "postgres", "postgres_port": free_port()} if DATABASE == "postgres" else {}),
        **sections.pop("stack", {}),
    }
    operate = {"runner_port": free_port(), **sections.pop("operate", {})}  # `up --serve`: the runner's /health
    # The policy answers once unless a test asks for the agent (the default, `agent.enabled`): the flows, services and
    # data tests look at the pipeline around the policy, and an answer costs a fraction of an episode. The agent's
    # own tests (tests/flows/test_agent_mode.py, test_guard_refuses_breaking_candidate.py, the unit tests of
    # evals/agent) turn it on.
    agent = {"enabled": False, **sections.pop("agent", {})}
    data: dict = {"home": str(home), "stack": stack, "operate": operate, "agent": agent, **sections}
    path = home / "postgame.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_config(path=path, env={})


class SeaweedServer:
    """A real SeaweedFS S3 gateway (the stack's own service spec) that a test can stop and start again."""

    def __init__(self, cfg: Config):
        self.cfg = cfg

    def start(self) -> None:
        from infra.stack import up

        up(self.cfg, only=("s3",), log=lambda *_: None)

    def stop(self) -> None:
        from infra.stack import down

        down(self.cfg, log=lambda *_: None)

    @property
    def endpoint_url(self) -> str:
        return f"http://{self.cfg.stack.host}:{self.cfg.stack.s3_port}"

    def store(self, bucket: str = "postgame"):
        from postgame import runtime

        return runtime.store(self.cfg, f"s3://{bucket}")


def cli_env(**extra: str) -> dict[str, str]:
    """This process's environment for a `postgame` subprocess: no POSTGAME_/PREFECT_/MLFLOW_ variable (the config file
    decides where the world is), this checkout first on PYTHONPATH, then `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTGAME_", "PREFECT_", "MLFLOW_"))}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return {**env, **extra}


def postgame_cli(
    config: Config | Path, *args: str, check: bool = True, env: dict[str, str] | None = None, timeout: float = 900
) -> subprocess.CompletedProcess:
    """`postgame --config CONFIG ARGS` in its own process; with `check`, a non-zero exit fails with both streams."""
    path = config.home / "postgame.yaml" if isinstance(config, Config) else config
    proc = subprocess.run(
        [sys.executable, "-m", "postgame", "--config", str(path), *args],
        capture_output=True,
        text=True,
        env=cli_env() if env is None else env,
        timeout=timeout,
        cwd=ROOT,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"postgame {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def postgame_inprocess(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """`postgame ARGS` in this process, as the console script runs it: (exit code, stdout, stderr). For commands that
    need no stack; `cli_home` (tests/conftest.py) gives them a home."""
    from postgame import cli, runtime

    monkeypatch.setattr(sys, "argv", ["postgame", *args])
    runtime.set_config_path(None)
    try:
        cli.main()
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    finally:  # `--config F` is process state: a later test's runtime.current_config() must not read F
        runtime.set_config_path(None)
    out, err = capsys.readouterr()
    return code, out, err


@contextmanager
def running_stack(cfg: Config, *flags: str, env: dict[str, str] | None = None) -> Iterator[Config]:
    """The local stack of `cfg` (`postgame up FLAGS`) for the time of the block; `postgame down` after, also when `up`
    failed half-way."""
    try:
        postgame_cli(cfg, "up", *flags, env=env)
        yield cfg
    finally:
        postgame_cli(cfg, "down", check=False, env=env)
        forget_database(cfg)


def forget_database(cfg: Config) -> None:
    """As root the local PostgreSQL of a temporary home lives outside it (infra/postgres.py): delete it with the test's
    stack, or every run leaves a cluster of ~75 MB behind."""
    if cfg.stack.database != "postgres":
        return
    from infra.postgres import data_dir

    data = data_dir(cfg)
    if cfg.home not in data.parents:
        shutil.rmtree(data, ignore_errors=True)


def rest_json(req: urllib.request.Request | str) -> Any:
    """One REST call (a URL, or a prepared request) answered with JSON, retried on 503 as a REST client (and Prefect's
    own client) does: the Prefect server answers 503 while its SQLite database is busy (seen in a fresh-clone CI run,
    on POST /flow_runs/{id}/resume)."""
    for attempt in range(6):
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            if exc.code != 503 or attempt == 5:
                raise
            time.sleep(0.5 * 2**attempt)
    raise AssertionError("unreachable")


# A fine-grained GitHub token of the shape the parallel ingest path stored in clear before 5e3908b (not a real one).
PLANTED_TOKEN = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"


def ingest_the_old_way(cfg: Config, source: str) -> str:
    """Ingest `source` as the parallel path did before the pre-filter fix (no line sent to redaction unless the
    exact path was needed for another reason): a `github_pat_` token alone on its line is stored in clear.
    Returns the snapshot id."""
    from unittest import mock

    import numpy as np

    from postgame.ingest import objects
    from postgame.ingest.pipeline import run_ingest

    with mock.patch.object(objects, "needs_slow_path", lambda block, starts: np.zeros(len(starts), bool)):
        snapshot_id = run_ingest(source, cfg=cfg, mapper=map).snapshot_id
    assert snapshot_id is not None
    return snapshot_id


def plant_old_snapshot(
    cfg: Config, logs: Path, *, sessions: int, seed: int, at: int, text: str, message: int = -1
) -> str:
    """A leaky snapshot as old ingests stored it: `sessions` synthetic sessions into `logs/a.jsonl` (made here),
    session `at`'s message `message` replaced by `text` (which holds PLANTED_TOKEN), ingested the old way and
    recorded as trained on. Returns its id."""
    from postgame import ledger
    from postgame.contract.synthetic import sessions as synthetic

    logs.mkdir(parents=True, exist_ok=True)
    records = list(synthetic(sessions, seed=seed))
    records[at]["messages"][message]["content"] = text
    (logs / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    old = ingest_the_old_way(cfg, str(logs))
    ledger.record(cfg, [old], "trained")
    return old


def put_in_a_new_bucket(store, key: str, data: bytes, timeout_s: float = 60) -> None:
    """The first writes to a new bucket wait while SeaweedFS grows the volumes of its collection (InternalError
    meanwhile, for longer than boto's retries on a busy machine). Not what this test is about: it waits."""
    from botocore.exceptions import ClientError

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            store.put(key, data)
            return
        except ClientError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
