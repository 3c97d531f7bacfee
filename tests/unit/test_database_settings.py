"""`stack.database` and `stack.database_url`: bad values name the key and the value, a URL's password is never
printed, and Prefect and MLflow get URLs without it (the password travels as PGPASSWORD)."""

from __future__ import annotations

import pytest

from infra import postgres
from infra.stack import service_specs
from postgame.config import load_config, mask_url
from postgame.errors import ConfigError, StackError

SECRET = "s3cr3t-pw"


def _load(**env: str):
    return load_config(env={f"POSTGAME_STACK__{k.upper()}": v for k, v in env.items()})


def test_sqlite_is_the_default():
    cfg = load_config(env={})
    assert cfg.stack.database == "sqlite" and postgres.database(cfg) is None and not postgres.local(cfg)


def test_an_unknown_database_names_the_key_and_the_value():
    with pytest.raises(ConfigError, match=r"stack\.database = 'mysql': allowed: 'sqlite' or 'postgres'"):
        _load(database="mysql")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"database_url": f"postgresql://u:{SECRET}@db:5432"}, "database_url is set but database = 'sqlite'"),
        ({"database": "postgres", "database_url": f"mysql://u:{SECRET}@db"}, "must be the postgresql:// URL"),
        ({"database": "postgres", "database_url": f"postgresql://u:{SECRET}@db/prefect"}, "no database name"),
    ],
)
def test_a_bad_database_url_is_named_without_its_password(env, message):
    with pytest.raises(ConfigError) as err:
        _load(**env)
    assert message in str(err.value) and "u:***@db" in str(err.value)
    assert SECRET not in str(err.value)


def test_mask_url_hides_only_the_password():
    assert (
        mask_url(f"see postgresql://user:{SECRET}@h:1?sslmode=require.")
        == "see postgresql://user:***@h:1?sslmode=require."
    )
    assert mask_url("postgresql://user@h:1") == "postgresql://user@h:1"


def test_an_external_server_is_used_without_starting_one_and_its_password_stays_in_the_environment(tmp_path):
    cfg = _load(database="postgres", database_url=f"postgresql://team:{SECRET}@db.internal:6543?sslmode=require")
    assert not postgres.local(cfg)
    specs = service_specs(cfg)
    assert "postgres" not in specs
    mlflow_uri = specs["mlflow"].argv[specs["mlflow"].argv.index("--backend-store-uri") + 1]
    assert mlflow_uri == "postgresql+psycopg2://team@db.internal:6543/mlflow?sslmode=require"
    prefect_url = specs["prefect"].env["PREFECT_API_DATABASE_CONNECTION_URL"]
    assert prefect_url == "postgresql+asyncpg://team@db.internal:6543/prefect?sslmode=require"
    assert specs["mlflow"].env["PGPASSWORD"] == SECRET == specs["prefect"].env["PGPASSWORD"]
    assert all(SECRET not in " ".join(spec.argv) for spec in specs.values())


def test_the_local_server_listens_on_loopback_only_at_its_port(tmp_path):
    cfg = load_config(env={"POSTGAME_HOME": str(tmp_path), "POSTGAME_STACK__DATABASE": "postgres"})
    try:
        argv = postgres.argv(cfg)
    except StackError as exc:  # no server binaries here: the command line cannot be built
        pytest.skip(str(exc))
    assert "listen_addresses=127.0.0.1" in argv and "unix_socket_directories=" in argv
    assert argv[argv.index("-p") + 1] == str(cfg.stack.postgres_port)
    assert list(service_specs(cfg))[0] == "postgres"  # started before the services that use it
