"""Fixtures shared by every kind of test: an isolated POSTGAME_HOME, a config, and real servers on free ports."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from postgame.config import Config
from tests import support
from tests.support import SANDBOX_NEEDS, SeaweedServer, in_ci, make_config, sandbox_shortfall

# Prefect's ephemeral API server logs its shutdown from an atexit hook, after pytest has closed the captured streams;
# without this every such test run ends with a "--- Logging error ---" traceback that is noise, not a failure.
logging.raiseExceptions = False


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--db",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="stack.database of every test config (tests.support.make_config): `make test` runs the services tests "
        "once more with postgres",
    )


def pytest_configure(config: pytest.Config) -> None:
    support.DATABASE = config.getoption("--db")


# `make test` runs the suite on two xdist workers (`-n 2 --dist loadfile`). A scope is one worker's unit of work, run
# there in collection order: each module is one (its module fixtures are built once), and so are all of tests/flows
# (they share the session's built world and its first cycle: tests/flows/conftest.py) and all of tests/services (one
# local stack at a time on 2 cores: their time bounds were measured beside one stack, not two).
SHARED_SCOPES = {"tests/flows/": "tests/flows", "tests/services/": "tests/services"}
# Longest first (the `--durations` of `make test`): the services and then the flows scope start at once, one on
# each worker, and the short modules fill in behind them, so that no long scope is left to start last.
FIRST = ("tests/services", "tests/flows")


def scope_of(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return next((scope for prefix, scope in SHARED_SCOPES.items() if path.startswith(prefix)), path)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`--dist loadfile` with the shared scopes above, in collection order (the workers sort it: longest first).
    (Not `--dist loadgroup` with `xdist_group` marks: with pytest 9 xdist 3.8 drops the group from the node id and
    runs such tests one by one, module fixtures built on both workers.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedScopes(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    config.option.loadscopereorder = False  # xdist's default puts the scopes with most tests first, not the longest
    return SharedScopes(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, the longest scopes first (above). Then `--db postgres` without PostgreSQL's server: every
    test is skipped with the reason on a developer's machine; in CI (CI=true), where `make test` installs it, the run
    stops instead."""
    if hasattr(config, "workerinput"):
        rank = {scope: i for i, scope in enumerate(FIRST)}
        items.sort(key=lambda item: rank.get(scope_of(item.nodeid), len(rank)))  # stable: the rest keep their order
    if support.DATABASE != "postgres":
        return
    from infra.postgres import bindir
    from postgame.errors import StackError

    try:
        bindir()
    except StackError as exc:
        if in_ci():
            pytest.exit(f"--db postgres in CI: {exc}", returncode=1)
        skip = pytest.mark.skip(reason=f"--db postgres: {exc}")
        for item in items:
            item.add_marker(skip)


def pytest_sessionstart(session: pytest.Session) -> None:
    """The sandbox must never degrade silently. In CI (CI=true, whose set-up installs bubblewrap) every part of it
    must work — bubblewrap, and fork bombs containable (a pids cgroup as root) — or the run stops here with the
    reason, so that CI green means the sandbox held. Elsewhere, bubblewrap installed but unusable also stops the run
    (the isolation tests would turn into skips and the harness into rlimits); a machine without it skips those tests
    with the reason (`-ra`). `POSTGAME_TEST_ALLOW_NO_SANDBOX=1` is the explicit way out on a machine known to forbid
    namespaces."""
    if os.environ.get("POSTGAME_TEST_ALLOW_NO_SANDBOX") == "1":
        return
    if in_ci():
        missing = [reason for need in SANDBOX_NEEDS if (reason := sandbox_shortfall(need))]
        if missing:
            pytest.exit("CI needs the whole sandbox and it is not usable here: " + "; ".join(missing), returncode=1)
        return
    if shutil.which("bwrap") and (reason := sandbox_shortfall("bwrap")):
        pytest.exit(f"bubblewrap is installed but unusable, so the sandbox tests cannot run: {reason}", returncode=1)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """`@pytest.mark.sandbox("bwrap"|"pids")`: the test needs that part of the sandbox. Without it a developer's
    machine skips the test with the reason; CI fails it (and the session start has already said why)."""
    for marker in item.iter_markers("sandbox"):
        for need in marker.args:
            if reason := sandbox_shortfall(need):
                if in_ci() and os.environ.get("POSTGAME_TEST_ALLOW_NO_SANDBOX") != "1":
                    pytest.fail(f"CI needs the sandbox: {reason}", pytrace=False)
                pytest.skip(reason)


@pytest.fixture(scope="session")
def new_mlflow_db(tmp_path_factory) -> Path:
    """An MLflow SQLite database as MLflow makes it on first use (its tables and ~50 migrations), made once per test
    session (each xdist worker has its own): 5 s of these 2 cores when quiet, 25 s when busy, for every home."""
    from mlflow.tracking import MlflowClient

    path = tmp_path_factory.mktemp("new-mlflow") / "mlflow.db"
    MlflowClient(tracking_uri=f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture
def home(tmp_path: Path, new_mlflow_db: Path) -> Path:
    """A new POSTGAME_HOME. Its embedded MLflow database (`<home>/mlflow.db`, postgame.runtime.resolve) is a copy of a
    new one; the flows and services tests, which build their homes with `make_config`, make theirs as a user would."""
    path = tmp_path / "home"
    path.mkdir()
    shutil.copyfile(new_mlflow_db, path / "mlflow.db")
    return path


@pytest.fixture
def cli_home(monkeypatch, home: Path) -> Path:
    """`home` as the world of an in-process `postgame` command (tests.support.postgame_inprocess): POSTGAME_HOME set,
    no config file or store endpoint from the environment, the working directory there."""
    monkeypatch.setenv("POSTGAME_HOME", str(home))
    for name in ("POSTGAME_CONFIG", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(home)
    return home


@pytest.fixture
def cfg(home: Path) -> Config:
    return make_config(home)


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory) -> Iterator[SeaweedServer]:
    """One SeaweedFS server for the test session; tests use their own bucket names."""
    server = SeaweedServer(make_config(tmp_path_factory.mktemp("seaweed-home")))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def base_policy(tmp_path_factory) -> Path:
    """The embedded base policy (tiny Qwen2 + local tokenizer), built once per test session."""
    from models.policy import build_base_policy
    from postgame.config import PolicySettings
    from postgame.settings.factory import FactorySettings

    return build_base_policy(PolicySettings(), FactorySettings(), tmp_path_factory.mktemp("base-policy"))
