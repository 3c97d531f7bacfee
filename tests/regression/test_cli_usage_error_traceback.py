"""A missing option or unknown command prints usage and exits 2 — never a traceback (typer vendors its own click)."""

from __future__ import annotations

import subprocess
import sys


def test_missing_option_prints_usage_not_traceback(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "postgame", "simulate"], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 2
    assert "Missing option '--sessions'" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_unknown_command_exits_2(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "postgame", "no-such-command"], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 2 and "No such command" in proc.stderr and "Traceback" not in proc.stderr
