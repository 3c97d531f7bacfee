"""`postgame trigger` against a Prefect server that is busy: a 503 or 429 answer, or a refused connection, is tried
again with backoff and the same idempotency key (so a retry never starts a second cycle); a 404 or 422 fails at once
with one line. Seen: under load the Prefect server answered 503 to one of two concurrent create_flow_run calls.

The server is a real HTTP server on loopback (`http.server` in a thread) speaking the three calls `trigger` makes;
it answers `create_flow_run` with the statuses a test scripts and records every request body.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from flows.deploy import trigger
from postgame.errors import ServiceUnavailable, TriggerError
from tests.support import free_port, make_config

DEPLOYMENT_ID = "0b4c1a52-0000-4000-8000-000000000001"


class FakePrefect:
    """GET deployments/name/... (200, or 404 when `deployment` is False), POST flow_runs/filter (no runs), POST
    deployments/{id}/create_flow_run answered with `statuses` in turn (then 201); bodies land in `created`."""

    def __init__(self, port: int, statuses: list[int], *, deployment: bool = True):
        self.port, self.statuses, self.deployment = port, list(statuses), deployment
        self.created: list[dict] = []
        self.reads = 0
        self.server: ThreadingHTTPServer | None = None

    def handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                fake.reads += 1
                if fake.deployment and self.path == "/api/deployments/name/continuous-cycle/continuous":
                    self._send(200, {"id": DEPLOYMENT_ID, "schedules": [], "paused": False})
                else:
                    self._send(404, {"detail": "Deployment not found"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                if self.path == "/api/flow_runs/filter":
                    return self._send(200, [])
                if self.path != f"/api/deployments/{DEPLOYMENT_ID}/create_flow_run":
                    return self._send(404, {"detail": "Not found"})
                fake.created.append(body)
                status = fake.statuses.pop(0) if fake.statuses else 201
                if status == 201:
                    return self._send(
                        201,
                        {"id": "5d1e0000-0000-4000-8000-000000000002", "name": "brave-fox", "state_name": "Scheduled"},
                    )
                if status == 422:
                    return self._send(
                        422,
                        {
                            "exception_message": "Invalid request received.",
                            "exception_detail": [{"loc": ["body", "parameters"], "msg": "bad"}],
                        },
                    )
                self._send(status, {"detail": "busy"})

        return Handler

    def start(self) -> FakePrefect:
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self.handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()

    def keys(self) -> list[str]:
        return [body.get("idempotency_key") for body in self.created]


@pytest.fixture
def world(tmp_path):
    port = free_port()
    cfg = make_config(tmp_path, operate={"retries": 3, "retry_delay_s": 0.2, "service_timeout_s": 5})
    (tmp_path / "stack.json").write_text(json.dumps({"services": {"prefect": {"url": f"http://127.0.0.1:{port}"}}}))
    servers: list[FakePrefect] = []

    def serve(statuses: list[int], **kw) -> FakePrefect:
        servers.append(FakePrefect(port, statuses, **kw).start())
        return servers[-1]

    yield cfg, port, serve
    for server in servers:
        server.stop()


def test_503_twice_then_201_starts_one_run_with_one_key(world):
    cfg, _, serve = world
    server = serve([503, 503])
    run = trigger(cfg, reason="api: test")
    assert run.id == "5d1e0000-0000-4000-8000-000000000002"
    assert len(server.created) == 3
    [key] = set(server.keys())  # the same key every time: the server starts one run however many tries reach it
    assert key and key.startswith("postgame-trigger-")
    assert {body["parameters"]["reason"] for body in server.created} == {"api: test"}


def test_a_given_key_is_the_one_retried_and_429_is_retried(world):
    cfg, _, serve = world
    server = serve([429])
    trigger(cfg, reason="api: test", idempotency_key="retrain-2026-11-30")
    assert server.keys() == ["retrain-2026-11-30", "retrain-2026-11-30"]


def test_a_refused_connection_is_retried_until_the_server_is_up(world):
    cfg, port, serve = world
    started: list[FakePrefect] = []
    timer = threading.Timer(0.4, lambda: started.append(serve([])))  # nothing listens on the port until then
    timer.start()
    t0 = time.monotonic()
    run = trigger(cfg, reason="api: test")
    timer.join()
    assert run.name == "brave-fox" and time.monotonic() - t0 >= 0.4
    assert len(started[0].created) == 1


def test_503_every_time_ends_in_one_line_after_bounded_tries(world):
    cfg, _, serve = world
    server = serve([503] * 10)
    with pytest.raises(ServiceUnavailable) as caught:
        trigger(cfg, reason="api: test")
    assert len(server.created) == 1 + cfg.operate.retries and len(set(server.keys())) == 1
    assert "answered 503 Service Unavailable on 4 tries" in str(caught.value) and "\n" not in str(caught.value)


def test_an_unknown_deployment_fails_at_once(world):
    cfg, _, serve = world
    server = serve([], deployment=False)
    with pytest.raises(TriggerError, match="no deployment 'continuous-cycle/continuous'"):
        trigger(cfg, reason="api: test")
    assert server.reads == 1 and server.created == []


def test_422_fails_at_once_with_one_line_on_the_console(world):
    cfg, _, serve = world
    server = serve([422, 503])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POSTGAME_", "PREFECT_", "MLFLOW_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "postgame", "--config", str(cfg.home / "postgame.yaml"), "trigger"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("error: TriggerError: the Prefect server at http://127.0.0.1:")
    assert f"rejected POST /api/deployments/{DEPLOYMENT_ID}/create_flow_run with 422 Unprocessable Entity" in line
    assert len(server.created) == 1  # not retried
