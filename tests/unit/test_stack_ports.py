"""A busy port gets a clear message naming it, and nothing is started."""

from __future__ import annotations

import socket

import pytest

from infra.stack import up
from postgame.errors import StackError


def test_busy_port_is_named_and_nothing_starts(cfg):
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind((cfg.stack.host, cfg.stack.mlflow_port))
        squatter.listen()
        with pytest.raises(StackError) as err:
            up(cfg, log=lambda *_: None)
    message = str(err.value)
    assert f"port {cfg.stack.mlflow_port}" in message and "mlflow" in message and "stack.mlflow_port" in message
    assert not (cfg.home / "stack.json").exists()
