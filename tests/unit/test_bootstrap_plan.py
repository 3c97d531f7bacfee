"""`postgame bootstrap` says up front how much it will grade and how to make it shorter, and shows a progress bar
while it grades only where someone watches: on a terminal, without --json."""

from __future__ import annotations

import pytest

from models.bootstrap_cli import plan_line
from postgame.console import progress_bar


def test_the_plan_counts_every_patch_graded_and_names_the_options_that_shorten_it():
    tasks = {"indomain": 56, "eval": 24, "holdout": 24}
    line = plan_line(tasks, 4, {"indomain": 16, "eval": 8, "holdout": 8})
    # per task: the greedy answer, 4 samples, the empty patch, a random edit = 7; 104 tasks x 7 + 32 promotion
    assert line == (
        "grading 760 patches: indomain 56 tasks x 7, eval 24 tasks x 7, holdout 24 tasks x 7 (greedy + 4 "
        "samples + empty + random-edit), then the promotion sets once (indomain 16, eval 8, holdout 8); "
        "--limit N (tasks per split) and --k K (samples per task) make it shorter"
    )
    assert "\n" not in line


def test_k_1_grades_the_greedy_answer_alone():
    line = plan_line({"indomain": 1, "eval": 5, "holdout": 5}, 1, {"indomain": 5})
    assert line.startswith(
        "grading 38 patches: indomain 1 task x 3, eval 5 tasks x 3, holdout 5 tasks x 3 (greedy + empty + random-edit)"
    )


@pytest.fixture
def terminal(monkeypatch):
    """stderr as rich sees a terminal (FORCE_COLOR), while pytest captures it."""
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")


def test_the_bar_draws_on_a_terminal(terminal, capsys):
    with progress_bar("indomain", 7, enabled=True) as tell:
        tell("graded greedy", 7)
    assert "indomain: graded greedy" in capsys.readouterr().err


def test_the_bar_is_quiet_under_json(terminal, capsys):
    with progress_bar("indomain", 7, enabled=False) as tell:
        tell("graded greedy", 7)
    assert capsys.readouterr() == ("", "")


def test_the_bar_is_quiet_off_a_terminal(monkeypatch, capsys):
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):  # captured stderr is no terminal: as in a CI log, a pipe
        monkeypatch.delenv(name, raising=False)
    with progress_bar("indomain", 7, enabled=True) as tell:
        tell("graded greedy", 7)
    assert capsys.readouterr() == ("", "")
