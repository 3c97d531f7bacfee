"""`postgame train` as a person uses it: an unknown mode names the valid ones; nothing pending says what to do.
(The whole command, curate → TRL → MLflow, is exercised by the cycle flow test through the same functions.)"""

from __future__ import annotations

import sys

import pytest


def postgame(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    from postgame import cli, runtime

    monkeypatch.setattr(sys, "argv", ["postgame", *args])
    runtime.set_config_path(None)
    try:
        cli.main()
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def env(monkeypatch, home):
    monkeypatch.setenv("POSTGAME_HOME", str(home))
    for name in ("POSTGAME_CONFIG", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(home)
    return home


def test_unknown_mode_lists_the_valid_ones(monkeypatch, capsys, env):
    code, _out, err = postgame(monkeypatch, capsys, "train", "--mode", "ppo")
    assert code == 2
    assert "unknown trainer; valid names: dpo, grpo, sft" in err and "Traceback" not in err


def test_nothing_pending_says_what_to_do(monkeypatch, capsys, env):
    code, out, err = postgame(monkeypatch, capsys, "train", "--mode", "sft", "--json")
    assert code == 1 and out == ""
    assert "no pending snapshot" in err and "postgame ingest" in err
