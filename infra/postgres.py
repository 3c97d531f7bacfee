"""PostgreSQL for Prefect and MLflow (`stack.database: postgres`): a local server that `postgame up` starts, or the
external server of `stack.database_url`. docs/database.md says how to choose.

    stack: {database: postgres}                          # postgame up: initdb once, start, create the databases
    POSTGAME_STACK__DATABASE_URL=postgresql://u:pw@db:5432  # or this server: nothing is started locally

The local server is the Debian package's (`apt-get install postgresql`, /usr/lib/postgresql/<version>/bin): one
cluster made once by initdb under `<home>/postgres/data`, listening on `stack.host` (loopback) at
`stack.postgres_port` only, no Unix socket, scram-sha-256 password auth for one user, `postgame`, whose random password
is made at initdb and kept in `<home>/postgres/password` (0600). `postgame down` stops it (fast shutdown).

initdb and postgres refuse to run as root. As root (CI) they run as the Debian `postgres` user and the data folder
belongs to it; where that user cannot reach home (a 0700 folder above it, such as /root or pytest's temporary folders)
the cluster lives in /var/lib/postgresql/postgame/<hash of home> instead, and `postgame up` says so.

Prefect and MLflow get the databases `prefect` and `mlflow` (created when missing) as SQLAlchemy URLs without the
password: it travels as PGPASSWORD in their environment, never on a command line, in stack.json or in a log.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from postgame.config import Config, mask_url
from postgame.errors import StackError

DATABASES = ("prefect", "mlflow")
LOCAL_USER = "postgame"
OS_USER = "postgres"  # who runs the local server when postgame runs as root (the Debian package's user)
ROOT_FALLBACK = Path("/var/lib/postgresql/postgame")


@dataclass(frozen=True)
class Database:
    """Where Prefect and MLflow keep their state: `postgresql://user@host:port` (no password) and its password."""

    server: str  # postgresql://user@host:port[?query], no password, no database
    password: str = field(repr=False)

    def url(self, database: str, driver: str = "") -> str:
        """The URL of one database: driver "psycopg2" (MLflow; SQLAlchemy 2.1's default driver is psycopg 3, which
        is not installed), "asyncpg" (Prefect), "" (libpq)."""
        parts = urlsplit(self.server)
        scheme = "postgresql" + (f"+{driver}" if driver else "")
        return f"{scheme}://{parts.netloc}/{database}" + (f"?{parts.query}" if parts.query else "")

    def env(self) -> dict[str, str]:
        """What a server process needs besides the URL: the password, read by libpq (psycopg2) and asyncpg alike."""
        return {"PGPASSWORD": self.password} if self.password else {}


def local(cfg: Config) -> bool:
    """True when `postgame up` starts a PostgreSQL of its own."""
    return cfg.stack.database == "postgres" and not cfg.stack.database_url.get_secret_value()


def database(cfg: Config) -> Database | None:
    """The PostgreSQL of `cfg`, or None for SQLite. The local server's password exists once `prepare` ran."""
    if cfg.stack.database != "postgres":
        return None
    url = cfg.stack.database_url.get_secret_value()
    if url:
        parts = urlsplit(url)
        user = quote(unquote(parts.username or ""), safe="")
        host = parts.hostname or "localhost"
        host = f"[{host}]" if ":" in host else host
        netloc = f"{user}@{host}" if user else host
        netloc += f":{parts.port}" if parts.port else ""
        server = f"postgresql://{netloc}" + (f"?{parts.query}" if parts.query else "")
        return Database(server=server, password=unquote(parts.password or ""))
    password_file = _password_file(cfg)
    password = password_file.read_text().strip() if password_file.exists() else ""
    return Database(server=f"postgresql://{LOCAL_USER}@{cfg.stack.host}:{cfg.stack.postgres_port}", password=password)


def bindir() -> Path:
    """The server's binaries: the newest Debian /usr/lib/postgresql/<version>/bin, else the `postgres` on PATH."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: _version(p.parent.parent.name))
    if found:
        return found[-1].parent
    on_path = shutil.which("postgres")
    if on_path:
        return Path(on_path).resolve().parent
    raise StackError(
        "stack.database = 'postgres' needs PostgreSQL's server, which is not installed: apt-get install postgresql "
        "(or set stack.database_url to an external server, or stack.database: sqlite)"
    )


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(p) for p in name.split(".") if p.isdigit())


def os_user() -> pwd.struct_passwd | None:
    """The unprivileged user the local server runs as when postgame runs as root; None: it runs as this user."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(OS_USER)
    except KeyError:
        raise StackError(
            f"as root, the local PostgreSQL runs as the user {OS_USER!r}, which does not exist: apt-get install "
            "postgresql (it creates the user), or run postgame as a normal user"
        ) from None


def data_dir(cfg: Config) -> Path:
    """`<home>/postgres/data`; as root, where the `postgres` user cannot reach home, a folder that it can."""
    inside = cfg.home / "postgres" / "data"
    user = os_user()
    if user is None or _reachable(cfg.home, user):
        return inside
    return ROOT_FALLBACK / hashlib.sha256(str(cfg.home).encode()).hexdigest()[:16]


def _reachable(folder: Path, user: pwd.struct_passwd) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    return _as_user(["test", "-x", str(folder)], user, check=False).returncode == 0


def _password_file(cfg: Config) -> Path:
    return cfg.home / "postgres" / "password"


def argv(cfg: Config) -> list[str]:
    """The local server's command line: loopback at its own port, no Unix socket. (Without the binaries it names
    `postgres` alone, so that `status` still answers; `prepare` stops `up` with the reason first.)"""
    try:
        server = str(bindir() / "postgres")
    except StackError:
        server = "postgres"
    return [
        server,
        "-D",
        str(data_dir(cfg)),
        "-p",
        str(cfg.stack.postgres_port),
        "-c",
        f"listen_addresses={cfg.stack.host}",
        "-c",
        "unix_socket_directories=",
    ]


def prepare(cfg: Config, log=print) -> None:
    """Make the local cluster once (initdb, password auth on the listen address only); later calls do nothing."""
    data = data_dir(cfg)
    if (data / "PG_VERSION").exists():
        return
    user = os_user()
    password_file = _password_file(cfg)
    password_file.parent.mkdir(parents=True, exist_ok=True)
    if not password_file.exists():
        password_file.touch(mode=0o600)
        password_file.write_text(secrets.token_urlsafe(24))
    data.mkdir(parents=True, exist_ok=True)
    data.chmod(0o700)
    if user is not None:
        for path in [data, *(p for p in data.parents if p == ROOT_FALLBACK or ROOT_FALLBACK in p.parents)]:
            os.chown(path, user.pw_uid, user.pw_gid)
    if data != cfg.home / "postgres" / "data":
        log(f"postgres: the {OS_USER} user cannot reach {cfg.home}; the cluster lives in {data}")
    fd, pwfile = tempfile.mkstemp(prefix="postgame-pw-")  # initdb reads the password from a file only
    try:
        os.write(fd, password_file.read_text().strip().encode())
        os.close(fd)
        if user is not None:
            os.chown(pwfile, user.pw_uid, user.pw_gid)
        _as_user(
            [
                str(bindir() / "initdb"),
                "-D",
                str(data),
                "-U",
                LOCAL_USER,
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C",
            ],
            user,
        )
    finally:
        Path(pwfile).unlink(missing_ok=True)
    # Password auth over TCP from the listen address only; initdb's other lines (local socket, ::1) stay unused.
    (data / "pg_hba.conf").write_text(
        f"# written by postgame (infra/postgres.py)\nhost all {LOCAL_USER} {cfg.stack.host}/32 scram-sha-256\n"
    )
    if user is not None:
        os.chown(data / "pg_hba.conf", user.pw_uid, user.pw_gid)


def _as_user(cmd: list[str], user: pwd.struct_passwd | None, *, check: bool = True) -> subprocess.CompletedProcess:
    """`cmd` as `user` (root only), else as this process's user; a failure raises StackError with its output."""
    ids = {} if user is None else {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd="/", **ids)  # type: ignore[call-overload]
    if check and proc.returncode != 0:
        raise StackError(f"{Path(cmd[0]).name} failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()}")
    return proc


def ready(cfg: Config, timeout: float = 2.0) -> bool:
    """The server accepts connections (pg_isready: answers without logging in)."""
    db = database(cfg)
    if db is None:
        return False
    parts = urlsplit(db.server)
    try:
        tool = bindir() / "pg_isready"
    except StackError:
        return False
    cmd = [str(tool), "-q", "-h", parts.hostname or "localhost", "-p", str(parts.port or 5432), "-t", str(int(timeout))]
    try:
        return subprocess.run(cmd, capture_output=True, timeout=timeout + 1).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def create_databases(cfg: Config, log=print) -> None:
    """The databases `prefect` and `mlflow` on the server, created when missing (before Prefect or MLflow starts)."""
    import psycopg2

    db = database(cfg)
    assert db is not None
    try:
        conn = psycopg2.connect(db.url("postgres"), password=db.password or None, connect_timeout=10)
    except psycopg2.Error as exc:
        raise StackError(
            f"PostgreSQL at {mask_url(db.server)} refused the connection: {mask_url(str(exc)).strip()}"
        ) from None
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            for name in DATABASES:
                cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
                if cur.fetchone() is None:
                    cur.execute(f'CREATE DATABASE "{name}"')
                    log(f"postgres: created database {name}")
    except psycopg2.Error as exc:
        raise StackError(
            f"PostgreSQL at {mask_url(db.server)}: cannot create the databases {DATABASES}: {exc}".strip()
        ) from None
    finally:
        conn.close()
