"""`postgame watch` and `postgame ingest --watch`: poll the log source and emit one `postgame.logs.landed` per poll
that finds new or changed log objects. Prefect's events API is a real HTTP server on loopback (`http.server` in a
thread) that records the events and answers with the status a test sets; an event it refuses is sent again at the
next poll."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support import ROOT, cli_env, free_port, make_config, postgame_cli


class FakeEvents:
    """POST /api/events: records the events and answers `status`; GET (the stack's health probe): 200."""

    def __init__(self, port: int):
        self.port, self.status, self.events = port, 200, []
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path == "/api/events" and fake.status == 200:
                    fake.events += body
                self.send_response(fake.status if self.path == "/api/events" else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

        return Handler

    def objects(self) -> list[int]:
        return [e["payload"]["objects"] for e in self.events]

    def start(self) -> FakeEvents:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def world(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    port = free_port()
    cfg = make_config(tmp_path, ingest={"source": str(logs)}, operate={"service_timeout_s": 5})
    (tmp_path / "stack.json").write_text(json.dumps({"services": {"prefect": {"url": f"http://127.0.0.1:{port}"}}}))
    server = FakeEvents(port).start()
    yield cfg, logs, server
    server.stop()


def test_each_new_or_changed_log_object_is_announced_once(world):
    cfg, logs, server = world
    (logs / "a.jsonl").write_text("{}\n")
    (logs / "b.jsonl.gz").write_bytes(b"\x1f\x8b")
    (logs / "_SUCCESS").write_text("")  # not a log object
    out = postgame_cli(cfg, "watch", "--once").stdout
    assert f"2 new log object(s) under {logs}: postgame.logs.landed sent" in out
    assert server.objects() == [2]
    assert {e["event"] for e in server.events} == {"postgame.logs.landed"}
    assert server.events[0]["payload"]["source"] == str(logs)

    postgame_cli(cfg, "watch", "--once")  # nothing new: nothing sent
    (logs / "a.jsonl").write_text('{"changed": true}\n')
    postgame_cli(cfg, "watch", "--once")
    assert server.objects() == [2, 1]


def test_an_event_prefect_did_not_take_is_sent_at_the_next_poll(world):
    cfg, logs, server = world
    (logs / "a.jsonl").write_text("{}\n")
    server.status = 503
    out = postgame_cli(cfg, "watch", "--once").stdout
    assert "1 new log object(s)" in out and "not sent" in out and server.events == []
    server.status = 200
    postgame_cli(cfg, "watch", "--once")
    assert server.objects() == [1]


def _wait(condition, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_ingest_watch_polls_until_stopped_and_reads_nothing_itself(world):
    cfg, logs, server = world
    (logs / "a.jsonl").write_text("{}\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "postgame",
            "--config",
            str(cfg.home / "postgame.yaml"),
            "ingest",
            "--watch",
            "--interval",
            "0.2",
        ],
        env=cli_env(),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []  # read as they come: the watcher prints its line after the event reached the server
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        _wait(lambda: server.objects() == [1])
        (logs / "b.jsonl").write_text("{}\n")
        _wait(lambda: server.objects() == [1, 1])
        _wait(lambda: sum("new log object(s)" in line for line in lines) == 2)
        assert proc.poll() is None  # still polling
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        reader.join(timeout=30)
    assert sum("new log object(s)" in line for line in lines) == 2
    assert not list(cfg.home.rglob("manifest.json"))  # the cycle ingests; the watcher only announces


def test_ingest_watch_takes_no_source_or_json(world):
    cfg, _, _ = world
    proc = postgame_cli(cfg, "ingest", "--watch", "--json", check=False)
    assert proc.returncode == 2 and "no --source or --json" in proc.stderr
