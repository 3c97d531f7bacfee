"""What a command prints when it fails on something other than a named postgame error (or, for `postgame cycle`, on
anything): one line on the console — which service was unavailable and what to do, when that was the cause — and the
traceback in a log file under home.

    error: MLflow at http://127.0.0.1:5000 did not answer ...: start the stack again with `postgame up` ...
           (traceback: .postgame/logs/error-20261130T171500.log)
"""

from __future__ import annotations

import time
import traceback

import typer

from postgame import runtime


def report_unexpected(exc: BaseException) -> int:
    """Print one line for `exc`, write its traceback under `<home>/logs/`; returns the exit code (1)."""
    cfg = runtime.current_config()
    logs = cfg.home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    path = logs / f"error-{time.strftime('%Y%m%dT%H%M%S')}.log"
    path.write_text("".join(traceback.format_exception(exc)))
    line = f"{type(exc).__name__}: {_first_line(exc)}"
    if _transient(exc):
        down = runtime.down_services(cfg)
        if down:
            line = str(runtime.unavailable(cfg, down[0]))
    typer.echo(f"error: {line}\n       (traceback: {path})", err=True)
    return 1


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def _transient(exc: BaseException) -> bool:
    from tasks.retry import is_transient

    return is_transient(exc)
