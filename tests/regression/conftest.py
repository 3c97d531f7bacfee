"""Fixtures of the regression tests."""

from __future__ import annotations

import pytest

from tests.support import SeaweedServer, make_config


@pytest.fixture
def server(tmp_path):
    """A real SeaweedFS of the stack in a home of its own (restarts and buckets touch no other test's server)."""
    (tmp_path / "home").mkdir()
    server = SeaweedServer(make_config(tmp_path / "home"))
    server.start()
    yield server
    server.stop()
