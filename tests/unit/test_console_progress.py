"""The one progress bar every long command shows (`postgame.console.progress_bar`): where a total is known it counts
M/N and says how long is left; without one, a spinner; on a stream that is no terminal, or under --json, nothing."""

from __future__ import annotations

import io
import re

import pytest

from postgame.console import progress_bar, terminal_stderr


class Terminal(io.StringIO):
    """A stream rich takes for a terminal (FORCE_COLOR below): what a person watching would see, kept as text."""


@pytest.fixture
def terminal(monkeypatch) -> Terminal:
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    return Terminal()


def drawn(stream: io.StringIO) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.getvalue())  # the text, without colours and cursor moves


def test_a_known_total_shows_done_of_total_and_the_time_left(terminal):
    with progress_bar("episodes", 4, enabled=True, file=terminal) as tell:
        tell("acme__calc-1 done", 1)
    text = drawn(terminal)
    assert "episodes: acme__calc-1 done" in text and "1/4" in text
    assert re.search(r"left (-:--:--|\d+:\d\d:\d\d)", text), text  # rich's TimeRemainingColumn


def test_no_total_is_a_spinner_with_no_count_and_no_time_left(terminal):
    with progress_bar("cycle", None, enabled=True, file=terminal) as tell:
        tell("train", 1)
    text = drawn(terminal)
    assert "cycle: train" in text
    assert "left" not in text and not re.search(r"\d+/\d+", text)


def test_under_json_nothing_is_drawn(terminal):
    with progress_bar("episodes", 4, enabled=False, file=terminal) as tell:
        tell("acme__calc-1 done", 1)
    assert terminal.getvalue() == ""


def test_off_a_terminal_nothing_is_drawn(monkeypatch):
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):  # a plain stream, as a CI log or a pipe
        monkeypatch.delenv(name, raising=False)
    log = io.StringIO()
    with progress_bar("episodes", 4, enabled=True, file=log) as tell:
        tell("acme__calc-1 done", 1)
    assert log.getvalue() == ""


def test_terminal_stderr_stays_on_the_terminal_while_fd_2_goes_elsewhere(tmp_path, capfd):
    """`postgame cycle` opens it before library output is sent to the log file: the bar is drawn there."""
    import os

    from postgame.console import library_output_to

    with terminal_stderr() as err, library_output_to(tmp_path / "library.log"):
        os.write(2, b"a library's warning\n")
        err.write("the bar\n")
    assert capfd.readouterr().err == "the bar\n"
    assert "a library's warning" in (tmp_path / "library.log").read_text()


def test_the_demo_draws_the_same_bar_and_closes_each_step_with_one_line(terminal):
    from flows.demo import Screen

    with Screen(terminal).step("cycle 1/3 traffic", total=4) as bar:
        bar.advance(1)
        bar.set(3)  # the deployment's cycle: the stages done so far
        bar.advance(1)
        bar.outcome = "4 sessions"
    text = drawn(terminal)  # the last frame is drawn as the step ends
    assert "4/4" in text and "5/4" not in text and re.search(r"left (-:--:--|\d+:\d\d:\d\d)", text)
    assert text.rstrip().endswith("cycle 1/3 traffic: 4 sessions (0s)")


def test_off_a_terminal_the_demo_prints_each_steps_line_alone(monkeypatch):
    from flows.demo import Screen

    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    log = io.StringIO()
    with Screen(log).step("task world") as bar:
        bar.say("building")
        bar.outcome = "built"
    assert log.getvalue() == "task world: built (0s)\n"
