"""`postgame train` as a person uses it: an unknown mode names the valid ones; nothing pending says what to do.
(The whole command, curate → TRL → MLflow, is exercised by the cycle flow test through the same functions.)"""

from __future__ import annotations

from tests.support import postgame_inprocess


def test_unknown_mode_lists_the_valid_ones(monkeypatch, capsys, cli_home):
    code, _out, err = postgame_inprocess(monkeypatch, capsys, "train", "--mode", "ppo")
    assert code == 2
    assert "unknown trainer; valid names: dpo, grpo, sft" in err and "Traceback" not in err


def test_nothing_pending_says_what_to_do(monkeypatch, capsys, cli_home):
    code, out, err = postgame_inprocess(monkeypatch, capsys, "train", "--mode", "sft", "--json")
    assert code == 1 and out == ""
    assert "no pending snapshot" in err and "postgame ingest" in err
