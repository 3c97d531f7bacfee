"""Code under test reaches no network: a listener on the host's loopback receives no connection."""

import socket

import pytest

from evals.harness import evaluate
from tests.harness_fixtures import calc_instance, in_add, quick_settings

pytestmark = pytest.mark.sandbox("bwrap")


def test_no_connection_reaches_a_host_loopback_listener(tmp_path):
    tiny = calc_instance(tmp_path)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    body = f"""
import socket
for host in ("127.0.0.1", "localhost"):
    try:
        socket.create_connection((host, {port}), timeout=3).close()
        print("CONNECTED", host)
    except OSError as exc:
        print("REFUSED", host, type(exc).__name__)
"""
    try:
        result = evaluate(tiny.instance, in_add(tiny, body), repos_dir=tiny.repos_dir, settings=quick_settings())
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
    assert "CONNECTED" not in result.log and "REFUSED" in result.log
