"""Fixtures shared by every kind of test: an isolated POSTGAME_HOME, a config, and real servers on free ports."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from postgame.config import Config
from tests.support import SeaweedServer, make_config

# Prefect's ephemeral API server logs its shutdown from an atexit hook, after pytest has closed the captured streams;
# without this every such test run ends with a "--- Logging error ---" traceback that is noise, not a failure.
logging.raiseExceptions = False


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


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
