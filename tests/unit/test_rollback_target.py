"""Which version a rollback restores, read off the champion history alone (pure: no MLflow)."""

from __future__ import annotations

from models.registry import ChampionMove, promotion_line, rollback_target


def promoted(frm: str | None, to: str) -> ChampionMove:
    return ChampionMove(to=to, from_=frm, why=f"v{to} beats {frm}", by="gate", at=0.0)


def rolled_back(frm: str, to: str) -> ChampionMove:
    return ChampionMove(to=to, from_=frm, why=f"rollback from v{frm} to v{to}", by="oncall", at=0.0, rollback=True)


def test_a_second_rollback_never_restores_the_version_rolled_back_from():
    # Found by hand: v1 champion, v2 promoted, rollback -> v1, rollback again -> v2 served again (the rollback's own
    # move v2 -> v1 was read as "v2 served before v1").
    history = [promoted(None, "1"), promoted("1", "2"), rolled_back("2", "1")]
    assert rollback_target(history, "1") is None
    assert promotion_line(history) == ["1"]


def test_each_rollback_goes_one_further_back_until_there_is_none():
    history = [promoted(None, "1"), promoted("1", "2"), promoted("2", "3")]
    assert rollback_target(history, "3") == "2"
    history.append(rolled_back("3", "2"))
    assert rollback_target(history, "2") == "1"
    history.append(rolled_back("2", "1"))
    assert rollback_target(history, "1") is None


def test_a_version_promoted_after_a_rollback_rolls_back_past_the_bad_one():
    history = [promoted(None, "1"), promoted("1", "2"), rolled_back("2", "1"), promoted("1", "3")]
    assert rollback_target(history, "3") == "1"


def test_a_named_rollback_takes_the_version_it_left_off_the_line():
    # `rollback --to 1` from v3: v3 was rolled back from; v2, skipped, served before v1 came back.
    history = [promoted(None, "1"), promoted("1", "2"), promoted("2", "3"), rolled_back("3", "1")]
    assert promotion_line(history) == ["2", "1"]
    assert rollback_target(history, "1") == "2"


def test_a_deliberate_move_back_to_a_rolled_back_version_puts_it_on_the_line_again():
    history = [promoted(None, "1"), promoted("1", "2"), rolled_back("2", "1"), promoted("1", "2")]
    assert rollback_target(history, "2") == "1"


def test_nothing_to_restore_without_a_champion_or_an_earlier_one():
    assert rollback_target([], None) is None
    assert rollback_target([promoted(None, "1")], "1") is None
    assert rollback_target([promoted(None, "1"), promoted("1", "2")], None) is None


def test_moves_recorded_before_the_rollback_flag_are_read_from_their_reason():
    # Registries written by the earlier code hold rollbacks without the flag; their reason says what they were.
    old = {"from": "2", "to": "1", "why": "rollback from v2 to v1: errors", "by": "oncall", "at": 1.0}
    assert ChampionMove.from_dict(old).rollback
    assert not ChampionMove.from_dict({**old, "why": "beats v2"}).rollback
    move = rolled_back("2", "1")
    assert ChampionMove.from_dict(move.to_dict()) == move
    assert ChampionMove.from_dict({"from": None, "to": 1, "why": "base", "by": "b", "at": 0}).to == "1"
