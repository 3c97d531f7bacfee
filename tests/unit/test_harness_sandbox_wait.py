"""`sandbox.wait_exit`: how every sandboxed run waits for its process (a run's end, or its timeout)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from evals.harness import sandbox


def _sleeper(seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])


@pytest.fixture(params=["pidfd", "no pidfd"])
def pidfd(request, monkeypatch):
    if request.param == "no pidfd":  # an older kernel or Python: Popen.wait's own timeout

        def missing(pid):
            raise OSError("pidfd_open not supported")

        monkeypatch.setattr(os, "pidfd_open", missing)
    return request.param


def test_a_process_that_exits_is_waited_for_and_reaped(pidfd):
    proc = _sleeper(0.1)
    assert sandbox.wait_exit(proc, 30) is True
    assert proc.returncode == 0


def test_a_process_past_the_timeout_is_reported_and_left_to_kill(pidfd):
    proc = _sleeper(30)
    try:
        assert sandbox.wait_exit(proc, 0.2) is False
        assert proc.poll() is None  # still running: the caller kills the tree
    finally:
        proc.kill()
        proc.wait()


def test_with_a_pidfd_the_wait_wakes_on_the_exit_not_on_popen_waits_sleep_steps(monkeypatch):
    # Popen.wait(timeout=) sleeps in steps of up to 50 ms; it added 15-35 ms to every 0.3 s sandboxed test run
    # (BENCHMARKS "Session 26"). Where a pidfd exists, the only Popen.wait is the reaping one, after the exit.
    timeouts = []
    wait = subprocess.Popen.wait

    def spy(self, timeout=None):
        timeouts.append(timeout)
        return wait(self, timeout)

    monkeypatch.setattr(subprocess.Popen, "wait", spy)
    proc = _sleeper(0.2)
    assert sandbox.wait_exit(proc, 30) is True
    assert timeouts == [None] and proc.returncode == 0
