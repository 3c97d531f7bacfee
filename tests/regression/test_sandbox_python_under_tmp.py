"""A harness whose Python (venv) lives under /tmp — as in a CI clone there — must still run tests in the bwrap sandbox.

The sandbox's private /tmp is a tmpfs; binding the venv *before* it hid the venv, the bwrap probe failed, and the
harness silently fell back to rlimits (the fork-bomb test then failed). The venv must be bound after the tmpfs.
"""

from __future__ import annotations

from evals.harness import sandbox
from postgame.settings.harness import HarnessSettings


def test_python_dirs_under_tmp_are_bound_after_the_private_tmp(monkeypatch, tmp_path):
    venv = str(tmp_path / "venv")
    monkeypatch.setattr(sandbox, "_python_dirs", lambda: [venv])
    args = sandbox.bwrap_args(HarnessSettings(), tmp_path / "copy", {"PATH": "/usr/bin"})
    tmpfs_at = max(i for i in range(len(args) - 1) if args[i] == "--tmpfs" and args[i + 1] == "/tmp")
    bind_at = next(i for i in range(len(args) - 2) if args[i : i + 3] == ["--ro-bind", venv, venv])
    assert bind_at > tmpfs_at
