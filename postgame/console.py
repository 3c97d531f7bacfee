"""What every command prints: one JSON object with --json (and nothing else on stdout), else short lines."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO


def echo_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, sort_keys=True, default=str))


def quiet_stdout(as_json: bool) -> contextlib.AbstractContextManager:
    """With --json, stdout carries the JSON object alone: what libraries print (MLflow's "View run ... at") goes to
    stderr instead."""
    return contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext()


@contextlib.contextmanager
def progress_bar(
    title: str, total: int | None, *, enabled: bool, file: TextIO | None = None
) -> Iterator[Callable[[str, int], None]]:
    """A progress bar on stderr while the block runs (rich; every long command and the demo draw this one); yields
    `tell(text, done)`, which shows what runs now beside the title and advances the bar by `done` of `total`, with
    the time left once some is done. `total` None (not known up front): a spinner with the elapsed time. Off, `tell`
    doing nothing, when not `enabled` (--json) or when stderr is not a terminal (a CI log, a pipe): there only the
    command's lines appear. `file`: where the bar goes instead of stderr (`terminal_stderr()` while library output
    is redirected)."""
    from rich.console import Console

    console = Console(file=file, stderr=file is None, highlight=False, soft_wrap=True)
    if not enabled or not console.is_terminal:
        yield _quiet
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    counted: list[ProgressColumn] = [BarColumn(bar_width=24), MofNCompleteColumn()] if total is not None else []
    left: list[ProgressColumn] = [TextColumn("left"), TimeRemainingColumn()] if total is not None else []
    # redirect_*=False: what libraries print meanwhile goes where it went, not above the bar
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        *counted,
        TimeElapsedColumn(),
        *left,
        console=console,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
    ) as progress:
        task = progress.add_task(title, total=total)

        def tell(text: str, done: int = 0) -> None:
            progress.update(task, description=f"{title}: {text}" if text else title, advance=done)

        yield tell


@contextlib.contextmanager
def terminal_stderr() -> Iterator[TextIO]:
    """A stream to where stderr goes now, which stays there while `library_output_to` sends file descriptor 2 to
    the log: enter it first, and a progress bar drawn on it stays on the terminal."""
    import io
    import os

    sys.stderr.flush()
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, io.UnsupportedOperation):  # stderr is an in-memory stream (a test's capture)
        yield sys.stderr
        return
    with os.fdopen(os.dup(fd), "w", buffering=1) as stream:
        yield stream


def _quiet(text: str, done: int = 0) -> None:
    """A progress bar's `tell` where none is drawn."""


@contextlib.contextmanager
def library_output_to(path: Path) -> Iterator[TextIO]:
    """While inside, whatever libraries and child processes write to stdout and stderr (warnings, TRL's per-step
    dicts, MLflow's "View run" lines, Prefect's task logs) is appended to `path`; yields a stream to the terminal for
    what the user should see. File descriptors 1 and 2 are redirected, so writes from C code and children go too.

    Prefect's console log handlers keep writing to `path` after the block: what Prefect logs once the command is done
    (the temporary server stopping at exit, a log worker draining) is library output too, not a line for the user."""
    import os
    from datetime import UTC, datetime

    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved_out, saved_err = os.dup(1), os.dup(2)
    terminal = os.fdopen(os.dup(saved_out), "w", buffering=1)
    with open(path, "a", buffering=1) as log:
        log.write(f"\n===== {datetime.now(UTC).isoformat(timespec='seconds')} {' '.join(sys.argv)}\n")
        log.flush()
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            yield terminal
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved_out, 1)
            os.dup2(saved_err, 2)
            os.close(saved_out)
            os.close(saved_err)
            terminal.close()
            _prefect_console_to(path)


def _prefect_console_to(path: Path) -> None:
    """Point Prefect's console handlers (root, `prefect`, ... : logging.yml's `console`) at `path` for the rest of the
    process. Nothing to do when Prefect's logging was never set up."""
    import logging

    handlers_module = sys.modules.get("prefect.logging.handlers")
    if handlers_module is None:
        return
    loggers = [
        logging.getLogger(),
        *(lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)),
    ]
    handlers = {id(h): h for lg in loggers for h in lg.handlers if isinstance(h, handlers_module.PrefectConsoleHandler)}
    if not handlers:
        return
    stream = open(path, "a", buffering=1)  # left open: the handlers write to it until the process exits
    for handler in handlers.values():
        handler.setStream(stream)
        handler.console.file = stream
