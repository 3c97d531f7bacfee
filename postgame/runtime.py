"""Resolved handles for a command or flow run: the config, the object store, the MLflow tracking URI.

The embedded default needs no settings: when the local stack (`postgame up`) runs, its servers are used; when it does
not, the same code runs in-process on a folder store and a SQLite MLflow store under `home`.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from postgame.config import Config, load_config
from postgame.store import ObjectStore, open_store

_config_path: str | None = None

# The stack's SeaweedFS accepts any credentials unless configured otherwise; these are the embedded defaults.
EMBEDDED_S3_KEY = "postgame"
EMBEDDED_S3_SECRET = "postgame-local-secret"
EMBEDDED_BUCKET = "postgame"


def set_config_path(path: str | None) -> None:
    global _config_path
    _config_path = path
    current_config.cache_clear()


def config_path_arg() -> str | None:
    """The `--config` given on the command line, if any (flows reload the config from it)."""
    return _config_path


@lru_cache(maxsize=1)
def current_config() -> Config:
    return load_config(_config_path)


def stack_state_file(cfg: Config) -> Path:
    return cfg.home / "stack.json"


def running_stack(cfg: Config) -> dict | None:
    """The stack's recorded URLs when `postgame up` started it and its processes are alive, else None."""
    path = stack_state_file(cfg)
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    for svc in state.get("services", {}).values():
        pid = svc.get("pid")
        if not pid or not process_alive(pid):
            return None
    return state


def process_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (exited, not yet reaped) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def store_uri(cfg: Config) -> str:
    if cfg.store.uri:
        return cfg.store.uri
    return f"s3://{EMBEDDED_BUCKET}" if running_stack(cfg) else str(cfg.home / "store")


def log_source(cfg: Config) -> str:
    """Where production logs are read: `ingest.source`, else the store's log prefix (where the simulator writes)."""
    if cfg.ingest.source:
        return cfg.ingest.source
    base = store_uri(cfg).rstrip("/")
    return f"{base}/{cfg.factory.simulate.log_prefix.strip('/')}/"


def s3_endpoint(cfg: Config) -> str:
    if cfg.store.endpoint_url:
        return cfg.store.endpoint_url
    stack = running_stack(cfg)
    if stack:
        return stack["services"]["s3"]["url"]
    return os.environ.get("AWS_ENDPOINT_URL", "")


def store(cfg: Config, uri: str | None = None) -> ObjectStore:
    """The object store for `uri` (default: the configured/embedded one), with credentials from config or env."""
    uri = uri or store_uri(cfg)
    stack = running_stack(cfg)
    key = cfg.store.access_key_id.get_secret_value() or os.environ.get("AWS_ACCESS_KEY_ID") or (EMBEDDED_S3_KEY if stack else "")
    secret = cfg.store.secret_access_key.get_secret_value() or os.environ.get("AWS_SECRET_ACCESS_KEY") or (
        EMBEDDED_S3_SECRET if stack else "")
    return open_store(uri, endpoint_url=s3_endpoint(cfg), access_key_id=key, secret_access_key=secret,
                      region=cfg.store.region)


def tracking_uri(cfg: Config) -> str:
    if cfg.tracking.tracking_uri:
        return cfg.tracking.tracking_uri
    stack = running_stack(cfg)
    if stack:
        return stack["services"]["mlflow"]["url"]
    return f"sqlite:///{cfg.home / 'mlflow.db'}"


def prefect_api_url(cfg: Config) -> str | None:
    stack = running_stack(cfg)
    return stack["services"]["prefect"]["url"] + "/api" if stack else None
