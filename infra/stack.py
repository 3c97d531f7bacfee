"""The local stack: a Prefect server, an MLflow tracking server and a SeaweedFS S3 store, on loopback; with
`stack.database: postgres` Prefect and MLflow keep their state in PostgreSQL (infra/postgres.py: a local server
started first, or the external one of `stack.database_url`), else in SQLite files under home.

    postgame up [--serve] [--auth]   # start (idempotent), health-checked, logs under $POSTGAME_HOME/logs
    postgame status                  # URLs and health, the deployment and its last runs (--json)
    postgame down                    # stop every process it started

`--serve` adds the deployment's runner (`postgame serve`) once the servers are healthy. `--auth` turns on basic auth
for the Prefect server (PREFECT_SERVER_API_AUTH_STRING) and MLflow (`--app-name basic-auth`), with the credentials of
`operate.auth` (password from POSTGAME_AUTH_PASSWORD): they are passed in the services' environment, never on a
command line, in `stack.json` or in a log.

Each service runs in its own process group so that `down` leaves nothing behind. Its pid and URL are recorded in
`$POSTGAME_HOME/stack.json`, which is how other commands find the stack.
"""

from __future__ import annotations

import json
import os
import pwd
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from infra import postgres
from postgame.config import Config, mask_url
from postgame.errors import StackError
from postgame.runtime import (
    EMBEDDED_BUCKET,
    EMBEDDED_S3_KEY,
    EMBEDDED_S3_SECRET,
    forget,
    process_alive,
    running_stack,
    stack_state_file,
)

SERVICES = ("s3", "mlflow", "prefect")
DATABASE = "postgres"  # the local PostgreSQL, started before the services that use it
RUNNER = "serve"  # the deployment's runner: started after SERVICES are healthy
WEED_PORT_FLAGS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port.grpc",
)
# Where a starting SeaweedFS's probe objects go: a prefix nothing of postgame lists (logs, tasks, ledger claims and
# projects have their own).
S3_PROBE_PREFIX = "_health/probe-"


@dataclass
class ServiceSpec:
    name: str
    argv: list[str]
    env: dict[str, str]
    url: str
    health_url: str
    ports: dict[str, int]
    ui: str = ""
    run_as: pwd.struct_passwd | None = None  # root only: the unprivileged user the process runs as


@dataclass
class ServiceStatus:
    name: str
    url: str
    healthy: bool
    pid: int | None = None
    ui: str = ""
    detail: str = ""


@dataclass
class StackStatus:
    running: bool
    home: str
    services: dict[str, ServiceStatus] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "running": self.running,
            "home": self.home,
            "services": {k: asdict(v) for k, v in self.services.items()},
        }


def _bin(name: str) -> str:
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


def services(cfg: Config) -> tuple[str, ...]:
    """What `postgame up` starts: the local PostgreSQL first when there is one, then SERVICES."""
    return ((DATABASE,) if postgres.local(cfg) else ()) + SERVICES


def service_specs(cfg: Config, *, auth: bool = False, config_file: str | None = None) -> dict[str, ServiceSpec]:
    """The command lines of the services (and the deployment's runner), all data under cfg.home."""
    s, home, host = cfg.stack, cfg.home, cfg.stack.host
    base_env = {"PYTHONUNBUFFERED": "1"}
    db = postgres.database(cfg)
    mlflow_store = db.url("mlflow", "psycopg2") if db else f"sqlite:///{home / 'mlflow' / 'mlflow.db'}"
    prefect_store = db.url("prefect", "asyncpg") if db else f"sqlite+aiosqlite:///{home / 'prefect' / 'prefect.db'}"
    db_env = db.env() if db else {}
    weed_dir = home / "seaweedfs"
    weed_ports = {flag: s.weed_port_base + i for i, flag in enumerate(WEED_PORT_FLAGS)}
    s3 = ServiceSpec(
        name="s3",
        argv=[
            _bin("weed"),
            "server",
            f"-dir={weed_dir}",
            f"-ip={host}",
            f"-ip.bind={host}",
            *(f"-{flag}={port}" for flag, port in weed_ports.items()),
            "-s3",
            f"-s3.port={s.s3_port}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-s3.config={home / 'seaweedfs-s3.json'}",
            "-master.volumeSizeLimitMB=64",
            "-volume.max=1000",  # each bucket grows 7 volumes; unwritten volumes are sparse, so slots cost no disk
            "-master.telemetry=false",
        ],
        env=base_env,
        url=f"http://{host}:{s.s3_port}",
        health_url=f"http://{host}:{s.s3_port}/healthz",
        ports={"s3": s.s3_port, **weed_ports},
        ui=f"http://{host}:{weed_ports['filer.port']}",
    )
    mlflow_dir = home / "mlflow"
    mlflow = ServiceSpec(
        name="mlflow",
        argv=[
            _bin("mlflow"),
            "server",
            "--backend-store-uri",
            mlflow_store,
            "--artifacts-destination",
            str(mlflow_dir / "artifacts"),
            "--host",
            host,
            "--port",
            str(s.mlflow_port),
            "--workers",
            "1",
        ],
        env={
            **base_env,
            **db_env,
            "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
            "MLFLOW_DISABLE_TELEMETRY": "true",
        },
        url=f"http://{host}:{s.mlflow_port}",
        health_url=f"http://{host}:{s.mlflow_port}/health",
        ports={"mlflow": s.mlflow_port},
        ui=f"http://{host}:{s.mlflow_port}",
    )
    prefect_home = home / "prefect"
    prefect = ServiceSpec(
        name="prefect",
        argv=[_bin("prefect"), "server", "start", "--host", host, "--port", str(s.prefect_port)],
        env={
            **base_env,
            **db_env,
            "PREFECT_HOME": str(prefect_home),
            "PREFECT_SERVER_API_PORT": str(s.prefect_port),
            "PREFECT_SERVER_API_HOST": host,
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_API_DATABASE_CONNECTION_URL": prefect_store,
            "PREFECT_UI_API_URL": f"http://{host}:{s.prefect_port}/api",
        },
        url=f"http://{host}:{s.prefect_port}",
        health_url=f"http://{host}:{s.prefect_port}/api/health",
        ports={"prefect": s.prefect_port},
        ui=f"http://{host}:{s.prefect_port}",
    )
    runner_port = cfg.operate.runner_port
    serve = ServiceSpec(
        name=RUNNER,
        argv=[
            sys.executable,
            "-m",
            "postgame",
            *(["--config", str(Path(config_file).absolute())] if config_file else []),
            "serve",
            "--health",
        ],
        env={
            **base_env,
            "PREFECT_API_URL": f"{prefect.url}/api",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_HOME": str(home / "prefect-client"),
            "PREFECT_RUNNER_SERVER_HOST": host,
            "PREFECT_RUNNER_SERVER_PORT": str(runner_port),
            "PREFECT_RUNNER_POLL_FREQUENCY": "2",  # a triggered cycle starts within 2 s, not Prefect's 10
            "POSTGAME_HOME": str(home),  # its cwd is home: without this, a config without `home:` would nest one
        },
        url=f"http://{host}:{runner_port}",
        health_url=f"http://{host}:{runner_port}/health",
        ports={"runner": runner_port},
        ui=f"{prefect.ui}/deployments",
    )
    specs = {"s3": s3, "mlflow": mlflow, "prefect": prefect, RUNNER: serve}
    if db and postgres.local(cfg):
        specs = {DATABASE: _database_spec(cfg, db), **specs}
    if auth:
        _with_auth(cfg, specs)
    return specs


def _database_spec(cfg: Config, db: postgres.Database) -> ServiceSpec:
    """The local PostgreSQL; its `url` (printed by up and status) names the server, never the password."""
    return ServiceSpec(
        name=DATABASE,
        argv=postgres.argv(cfg),
        env={},
        url=db.server,
        health_url=db.server,
        ports={"postgres": cfg.stack.postgres_port},
        run_as=postgres.os_user(),
    )


def _healthy(cfg: Config, spec: ServiceSpec) -> bool:
    """Does the service answer its health check (the database: accept a connection)? Read-only: `status` and an
    idempotent `up` call it on a running stack."""
    return postgres.ready(cfg) if spec.name == DATABASE else healthy(spec.health_url)


def _started(cfg: Config, spec: ServiceSpec) -> str:
    """Why a starting service is not up yet ("" once it is): healthy, and for the object store, serving objects."""
    if not _healthy(cfg, spec):
        return "no health answer"
    return s3_probe(cfg, spec.url) if spec.name == "s3" else ""


def s3_probe(cfg: Config, endpoint: str) -> str:
    """SeaweedFS answers `/healthz` before its filer and volume server serve objects: a GetObject right after a start
    failed with InternalError. Serving means a probe object written, read back and deleted in the bucket the stack
    keeps postgame's store in (not a bucket of its own: each SeaweedFS bucket is a collection that grows volumes),
    under a key of its own (two probes at once never see each other's). Returns "" when it round-trips, else the
    error's code (never the credentials). A store that is not on this SeaweedFS is not probed."""
    from botocore.exceptions import BotoCoreError, ClientError

    from postgame.store import S3Store

    bucket = _stack_bucket(cfg, endpoint)
    if bucket is None:
        return ""
    key, secret = _s3_credentials(cfg)
    probe = S3Store(
        bucket,
        endpoint_url=endpoint,
        access_key_id=key,
        secret_access_key=secret,
        connect_timeout=2.0,
        read_timeout=5.0,
        max_attempts=1,
    )
    name = f"{S3_PROBE_PREFIX}{os.getpid()}-{uuid.uuid4().hex}"
    data = name.encode()
    try:
        probe.put(name, data)
        same = probe.get(name) == data
        probe.delete(name)
    except ClientError as exc:
        return str(exc.response.get("Error", {}).get("Code") or "ClientError")
    except BotoCoreError as exc:
        return type(exc).__name__
    return "" if same else "read back other bytes"


def _stack_bucket(cfg: Config, endpoint: str) -> str | None:
    """The bucket of postgame's store when it lives on the stack's SeaweedFS at `endpoint` (the embedded default, or
    an `s3://` store with no endpoint or this one); None when the store is a folder or another S3."""
    if not cfg.store.uri:
        return EMBEDDED_BUCKET
    parsed = urlparse(cfg.store.uri)
    local = not cfg.store.endpoint_url or cfg.store.endpoint_url.rstrip("/") == endpoint.rstrip("/")
    return parsed.netloc if parsed.scheme.lower() == "s3" and parsed.netloc and local else None


def _with_auth(cfg: Config, specs: dict[str, ServiceSpec]) -> None:
    """Basic auth on Prefect and MLflow; secrets go into the environment only."""
    from postgame.errors import StackError

    auth = cfg.operate.auth
    user, password = auth.user(), auth.secret()
    if not password:
        raise StackError("auth is on but no password is set: export POSTGAME_AUTH_PASSWORD (or operate.auth.password)")
    mlflow_dir = cfg.home / "mlflow"
    ini = mlflow_dir / "basic_auth.ini"
    specs["mlflow"].argv += ["--app-name", "basic-auth"]
    specs["mlflow"].env |= {
        "MLFLOW_AUTH_CONFIG_PATH": str(ini),
        "MLFLOW_FLASK_SERVER_SECRET_KEY": auth.flask_key(),
        "MLFLOW_AUTH_ADMIN_USERNAME": user,
        "MLFLOW_AUTH_ADMIN_PASSWORD": password,
    }
    specs["prefect"].env["PREFECT_SERVER_API_AUTH_STRING"] = f"{user}:{password}"
    specs[RUNNER].env |= {
        "PREFECT_API_AUTH_STRING": f"{user}:{password}",
        "MLFLOW_TRACKING_USERNAME": user,
        "MLFLOW_TRACKING_PASSWORD": password,
    }


def _write_auth_config(cfg: Config) -> None:
    """MLflow's auth app keeps its users in a database of its own: under home, not in the server's working folder."""
    mlflow_dir = cfg.home / "mlflow"
    mlflow_dir.mkdir(parents=True, exist_ok=True)
    ini = mlflow_dir / "basic_auth.ini"
    ini.write_text(
        "[mlflow]\ndefault_permission = READ\n"
        f"database_uri = sqlite:///{mlflow_dir / 'basic_auth.db'}\n"
        "authorization_function = mlflow.server.auth:authenticate_request_basic_auth\n"
    )


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _wait_port_free(host: str, port: int, *, seconds: float) -> bool:
    """A port a stopped service just released can stay busy for a moment; a port in real use stays busy."""
    deadline = time.monotonic() + seconds
    while not port_free(host, port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.25)
    return True


def healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status < 500
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except (OSError, ValueError):
        return False


def _s3_credentials(cfg: Config) -> tuple[str, str]:
    """The one identity the local SeaweedFS accepts: the configured credentials, else the environment's, else the
    embedded defaults."""
    key = cfg.store.access_key_id.get_secret_value() or os.environ.get("AWS_ACCESS_KEY_ID") or EMBEDDED_S3_KEY
    secret = (
        cfg.store.secret_access_key.get_secret_value() or os.environ.get("AWS_SECRET_ACCESS_KEY") or EMBEDDED_S3_SECRET
    )
    return key, secret


def _write_s3_identities(cfg: Config) -> None:
    """SeaweedFS's S3 gateway accepts only these credentials (embedded defaults, or the configured ones)."""
    key, secret = _s3_credentials(cfg)
    identities = {
        "identities": [
            {
                "name": "postgame",
                "credentials": [{"accessKey": key, "secretKey": secret}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }
        ]
    }
    path = cfg.home / "seaweedfs-s3.json"
    path.write_text(json.dumps(identities))
    path.chmod(0o600)


def up(
    cfg: Config,
    *,
    log=print,
    only: tuple[str, ...] | None = None,
    serve: bool = False,
    auth: bool = False,
    config_file: str | None = None,
) -> StackStatus:
    """Start the services (all of `services(cfg)`, or `only` some; with `serve` the deployment's runner after them);
    wait until every one is healthy. Idempotent. The local PostgreSQL, when Prefect or MLflow needs it, is started
    (and its databases created) before them."""
    auth = auth or cfg.operate.auth.enabled
    only = services(cfg) if only is None else only
    uses_db = bool({"mlflow", "prefect"} & set(only)) and cfg.stack.database == "postgres"
    only = ((DATABASE,) if uses_db and postgres.local(cfg) else ()) + tuple(n for n in only if n != DATABASE)
    if uses_db and postgres.local(cfg):
        postgres.prepare(cfg, log=log)  # initdb once (a missing server is one line before anything starts)
    all_specs = service_specs(cfg, auth=auth, config_file=config_file)
    specs = {name: spec for name, spec in all_specs.items() if name in only}
    wanted = set(specs) | ({RUNNER} if serve else set())
    current = running_stack(cfg)
    if current and set(current["services"]) == wanted and all(_healthy(cfg, all_specs[n]) for n in wanted):
        log(f"stack already running (home {cfg.home})")
        return status(cfg)
    if current or stack_state_file(cfg).exists():  # half-alive stack from an earlier run: stop it first
        down(cfg, log=lambda *_: None)
    for spec in specs.values():
        for label, port in spec.ports.items():
            if not _wait_port_free(cfg.stack.host, port, seconds=5.0):
                raise StackError(
                    f"port {port} on {cfg.stack.host} ({spec.name} {label}) is already in use by another process: "
                    f"free it or set stack.{_port_key(spec.name, label)} in postgame.yaml"
                )
    logs = cfg.home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (cfg.home / "seaweedfs").mkdir(parents=True, exist_ok=True)
    (cfg.home / "mlflow" / "artifacts").mkdir(parents=True, exist_ok=True)
    (cfg.home / "prefect").mkdir(parents=True, exist_ok=True)
    _write_s3_identities(cfg)
    if auth:
        _write_auth_config(cfg)
    state: dict = {"home": str(cfg.home), "auth": auth, "services": {}}
    if DATABASE in specs:
        _start(cfg, {DATABASE: specs.pop(DATABASE)}, state, log)
    if uses_db:
        try:
            postgres.create_databases(cfg, log=log)
        except StackError:
            down(cfg, log=lambda *_: None)
            raise
    _start(cfg, specs, state, log)
    if serve:
        _start(cfg, {RUNNER: all_specs[RUNNER]}, state, log)
    forget()  # what this process resolved before the stack ran is stale now
    return status(cfg)


def _start(cfg: Config, specs: dict[str, ServiceSpec], state: dict, log) -> None:
    logs = cfg.home / "logs"
    child_env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "MLFLOW_"))}
    for spec in specs.values():
        out = open(logs / f"{spec.name}.log", "ab")
        user = spec.run_as
        ids = {} if user is None else {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        proc = subprocess.Popen(
            spec.argv,
            env={**child_env, **spec.env},
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd="/" if user else cfg.home,  # the unprivileged user may not be allowed into home
            start_new_session=True,
            **ids,  # type: ignore[arg-type]
        )
        out.close()
        state["services"][spec.name] = {"pid": proc.pid, "url": spec.url, "ui": spec.ui, "argv": spec.argv}
    stack_state_file(cfg).write_text(json.dumps(state, indent=2))
    deadline = time.monotonic() + cfg.stack.start_timeout_s
    pending = dict(specs)
    why: dict[str, str] = {}
    while pending and time.monotonic() < deadline:
        for name, spec in list(pending.items()):
            pid = state["services"][name]["pid"]
            if not process_alive(pid):
                down(cfg, log=lambda *_: None)
                raise StackError(f"{name} exited during start; see {logs / (name + '.log')}")
            why[name] = _started(cfg, spec)
            if not why[name]:
                log(f"{name:8s} up   {mask_url(spec.url)}")
                del pending[name]
        time.sleep(0.5)
    if pending:
        down(cfg, log=lambda *_: None)
        names = ", ".join(f"{n} ({why.get(n) or 'not checked'})" for n in pending)
        raise StackError(f"{names} not healthy after {cfg.stack.start_timeout_s:.0f}s; see logs under {logs}")


def _port_key(service: str, label: str) -> str:
    return {"s3": "s3_port", "mlflow": "mlflow_port", "prefect": "prefect_port", "postgres": "postgres_port"}.get(
        label, "weed_port_base"
    )


def down(cfg: Config, *, log=print, grace_s: float = 15.0) -> None:
    """Stop every process group the stack started (TERM, then KILL after grace_s).

    SeaweedFS keeps running for 20 s and more after TERM (seen with 4.48); its writes are synced before they are
    acknowledged, so it gets only a short grace before KILL."""
    path = stack_state_file(cfg)
    if not path.exists():
        log("stack not running")
        return
    state = json.loads(path.read_text())
    services = {name: svc["pid"] for name, svc in state.get("services", {}).items() if svc.get("pid")}
    # the runner's flow runs live in sessions of their own: stop them with it
    services |= {f"flow-run-{pid}": pid for pid in _descendants(services.get(RUNNER))}
    pids = list(services.values())
    for name, pid in services.items():
        try:  # PostgreSQL's TERM waits for its clients to leave; INT is its fast shutdown
            os.killpg(pid, signal.SIGINT if name == DATABASE else signal.SIGTERM)
        except ProcessLookupError:
            pass
    started = time.monotonic()
    graces = {pid: (min(grace_s, 3.0) if name == "s3" else grace_s) for name, pid in services.items()}
    while any(_group_alive(pid) for pid in pids):
        _reap(pids)
        elapsed = time.monotonic() - started
        for pid in pids:
            if elapsed > graces[pid] and _group_alive(pid):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if elapsed > grace_s + 5:
            break
        time.sleep(0.2)
    _reap(pids)
    path.unlink(missing_ok=True)
    forget()
    log("stack stopped")


def _descendants(pid: int | None) -> list[int]:
    if not pid:
        return []
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[-1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo += children.get(child, [])
    return found


def _reap(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    # A group whose only members are zombies is gone for our purposes.
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().split(")")[-1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def status(cfg: Config) -> StackStatus:
    state = running_stack(cfg)
    recorded = (state or {}).get("services", {})
    specs = {n: s for n, s in service_specs(cfg).items() if (n in recorded if state else n in services(cfg))}
    result = StackStatus(running=bool(state), home=str(cfg.home))
    for name, spec in specs.items():
        ok = bool(state) and _healthy(cfg, spec)
        result.services[name] = ServiceStatus(
            name=name,
            url=spec.url,
            healthy=ok,
            ui=spec.ui,
            pid=recorded.get(name, {}).get("pid"),
            detail="" if state else "not started (postgame up)",
        )
    result.running = bool(state) and all(s.healthy for s in result.services.values())
    return result
