"""Helpers for tests of every kind: configs on free loopback ports and a real SeaweedFS server.

Importable (`from tests.support import make_config`); the fixtures built on them live in tests/conftest.py.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

import yaml

from postgame.config import Config, load_config


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


def make_config(home: Path, **sections) -> Config:
    """A config whose home is `home`, with the stack on free loopback ports (tests never touch the defaults).

    It is written to `home/postgame.yaml` as well, for code that reloads the config by path (flows, the CLI)."""
    stack = {"prefect_port": free_port(), "mlflow_port": free_port(), "s3_port": free_port(),
             "weed_port_base": free_port_block(),
             **sections.pop("stack", {})}
    data: dict = {"home": str(home), "stack": stack, **sections}
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
