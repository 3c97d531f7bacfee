"""Where the world is, resolved once per command or flow run: the object store, the MLflow tracking URI, the
Prefect API — one small typed `Stack`.

The embedded default needs no settings: when the local stack (`postgame up`) runs, its servers are used; when it does
not, the same code runs in-process on a folder store and a SQLite MLflow store under `home`. `resolve(cfg)` reads
`stack.json` and probes the stack's processes once; every later call in the process gets the same `Stack` (a flow run
starts with `resolve(cfg, refresh=True)`). It is also the one place that points MLflow's client at the tracking URI.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from postgame.config import Config, load_config
from postgame.errors import ServiceUnavailable
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


def recorded_stack(cfg: Config) -> dict | None:
    """What `postgame up` recorded (until `postgame down`), whether or not its processes still run."""
    path = stack_state_file(cfg)
    try:
        return json.loads(path.read_text()) if path.exists() else None
    except (OSError, json.JSONDecodeError):
        return None


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


@dataclass(frozen=True)
class Stack:
    """The handles of one command or flow run. Credentials are not kept here: `store()` reads them when it opens."""

    store_uri: str
    s3_endpoint: str
    tracking_uri: str
    prefect_api_url: str | None
    embedded: bool  # the local stack of `postgame up` runs

    def urls(self) -> dict[str, str]:
        urls = {"mlflow": self.tracking_uri}
        if self.prefect_api_url:
            urls["prefect"] = self.prefect_api_url.removesuffix("/api")
        return urls


_resolved: dict[str, Stack] = {}

SERVICE_NAMES = {"s3": "the object store (SeaweedFS S3)", "mlflow": "MLflow", "prefect": "the Prefect server"}


def resolve(cfg: Config, *, refresh: bool = False) -> Stack:
    """The stack for `cfg`, resolved once (again with `refresh`), and MLflow's client pointed at it.

    When `postgame up` started a stack (its `stack.json` is there), its servers are used — never silently a different
    store: a service of it that does not answer within `operate.service_timeout_s` raises `ServiceUnavailable`, one
    line naming the service and what to do."""
    key = cfg.model_dump_json()
    if refresh or key not in _resolved:
        ensure_dirs(cfg)
        stack = recorded_stack(cfg)
        if stack:
            require_services(cfg, stack)
        services = stack["services"] if stack else {}  # `postgame up` may run only some services (tests do)
        store = cfg.store.uri or (f"s3://{EMBEDDED_BUCKET}" if "s3" in services else str(cfg.home / "store"))
        endpoint = cfg.store.endpoint_url or (
            services["s3"]["url"] if "s3" in services else os.environ.get("AWS_ENDPOINT_URL", "")
        )
        tracking = cfg.tracking.tracking_uri or (
            services["mlflow"]["url"] if "mlflow" in services else f"sqlite:///{cfg.home / 'mlflow.db'}"
        )
        api = services["prefect"]["url"] + "/api" if "prefect" in services else None
        _resolved[key] = Stack(
            store_uri=store, s3_endpoint=endpoint, tracking_uri=tracking, prefect_api_url=api, embedded="s3" in services
        )
    resolved = _resolved[key]
    _point_mlflow_at(cfg, resolved.tracking_uri)
    return resolved


def ensure_dirs(cfg: Config) -> None:
    """Every command creates the folders it needs: home, its logs, and the ephemeral Prefect server's home."""
    for path in (cfg.home, cfg.home / "logs", cfg.home / "prefect-ephemeral"):
        path.mkdir(parents=True, exist_ok=True)


def service_health(cfg: Config, stack: dict | None = None) -> dict[str, bool]:
    """Each recorded service: does its health endpoint answer (one quick probe each)?"""
    import urllib.error
    import urllib.request

    state = stack if stack is not None else (recorded_stack(cfg) or {})
    health = {"s3": "/healthz", "mlflow": "/health", "prefect": "/api/health"}
    result: dict[str, bool] = {}
    for name, svc in state.get("services", {}).items():
        if name not in health:
            continue
        try:
            with urllib.request.urlopen(svc["url"] + health[name], timeout=2) as resp:
                result[name] = resp.status < 500
        except urllib.error.HTTPError as exc:
            result[name] = exc.code < 500
        except (OSError, ValueError):
            result[name] = False
    return result


def require_services(cfg: Config, stack: dict, *, timeout_s: float | None = None) -> None:
    """Wait (bounded: `operate.service_timeout_s`) until every recorded service answers; else one clear line."""
    import time

    deadline = time.monotonic() + (cfg.operate.service_timeout_s if timeout_s is None else timeout_s)
    while True:
        down = [name for name, ok in service_health(cfg, stack).items() if not ok]
        if not down or time.monotonic() >= deadline:
            break
        time.sleep(0.5)
    if down:
        raise unavailable(cfg, down[0], stack)


def unavailable(cfg: Config, name: str, stack: dict | None = None) -> ServiceUnavailable:
    state = stack if stack is not None else (recorded_stack(cfg) or {})
    url = state.get("services", {}).get(name, {}).get("url", "")
    return ServiceUnavailable(
        f"{SERVICE_NAMES.get(name, name)} at {url} did not answer for {cfg.operate.service_timeout_s:.0f}s: start "
        f"the stack again with `postgame up` (its log: {cfg.home / 'logs' / (name + '.log')}), or `postgame down` "
        f"to run without it",
        service=name,
    )


def down_services(cfg: Config) -> list[str]:
    """The recorded services that do not answer now (for a command that failed, to say which one)."""
    return [name for name, ok in service_health(cfg).items() if not ok]


def prefect_auth(cfg: Config) -> tuple[str, str] | None:
    """Basic-auth credentials for the stack's Prefect server and MLflow, when `operate.auth` is on or the stack was
    started with `postgame up --auth`."""
    auth = cfg.operate.auth
    on = auth.enabled or bool((recorded_stack(cfg) or {}).get("auth"))
    return (auth.user(), auth.secret()) if on else None


def forget() -> None:
    """Drop what was resolved (after `postgame up`/`down` changed the stack)."""
    _resolved.clear()


def _point_mlflow_at(cfg: Config, uri: str) -> None:
    """The one place that sets MLflow's tracking URI (its fluent API — start_run, log_* — has no other way), and
    bounds its client: the defaults retry a dead server for minutes, silently. Credentials when auth is on."""
    os.environ["MLFLOW_TRACKING_URI"] = uri
    op = cfg.operate
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", str(op.mlflow_http_retries))
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", str(op.mlflow_http_timeout_s))
    os.environ.setdefault("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", str(op.mlflow_http_backoff))
    if prefect_auth(cfg) and uri.startswith("http"):
        os.environ["MLFLOW_TRACKING_USERNAME"], os.environ["MLFLOW_TRACKING_PASSWORD"] = prefect_auth(cfg) or ("", "")
    if "mlflow" in sys.modules:
        import mlflow

        if mlflow.get_tracking_uri() != uri:
            mlflow.set_tracking_uri(uri)


def store_uri(cfg: Config) -> str:
    return resolve(cfg).store_uri


def log_source(cfg: Config) -> str:
    """Where production logs are read: `ingest.source`, else the store's log prefix (where the simulator writes)."""
    if cfg.ingest.source:
        return cfg.ingest.source
    base = store_uri(cfg).rstrip("/")
    source = f"{base}/{cfg.factory.simulate.log_prefix.strip('/')}/"
    if "://" not in source:  # the embedded folder store: its log folder exists even before the first log lands
        Path(source).mkdir(parents=True, exist_ok=True)
    return source


def s3_endpoint(cfg: Config) -> str:
    return resolve(cfg).s3_endpoint


def store(cfg: Config, uri: str | None = None) -> ObjectStore:
    """The object store for `uri` (default: the configured/embedded one), with credentials from config or env."""
    stack = resolve(cfg)
    embedded = stack.embedded
    key = (
        cfg.store.access_key_id.get_secret_value()
        or os.environ.get("AWS_ACCESS_KEY_ID")
        or (EMBEDDED_S3_KEY if embedded else "")
    )
    secret = (
        cfg.store.secret_access_key.get_secret_value()
        or os.environ.get("AWS_SECRET_ACCESS_KEY")
        or (EMBEDDED_S3_SECRET if embedded else "")
    )
    return open_store(
        uri or stack.store_uri,
        endpoint_url=stack.s3_endpoint,
        access_key_id=key,
        secret_access_key=secret,
        region=cfg.store.region,
    )


def tracking_uri(cfg: Config) -> str:
    return resolve(cfg).tracking_uri


def prefect_api_url(cfg: Config) -> str | None:
    return resolve(cfg).prefect_api_url
