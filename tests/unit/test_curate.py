"""Curate keeps the train split only, so evaluation never measures what training saw."""

from __future__ import annotations

from postgame.curate import build_rows


def session(sid, instance_id, status="unresolved", feedback="none", answer="<<patch>>", prompt="fix it"):
    return {"session_id": sid, "timestamp": f"2026-11-29T10:00:{sid[-2:]}Z",
            "task": {"instance_id": instance_id}, "outcome": {"status": status, "feedback": feedback},
            "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": prompt},
                         {"role": "assistant", "content": answer}], "patch": answer}


SPLITS = {"a": "train", "b": "train", "e": "eval", "h": "holdout"}


def test_eval_and_holdout_sessions_never_reach_training():
    rows, skipped = build_rows([session("s01", "a"), session("s02", "e"), session("s03", "h"),
                                session("s04", "zzz")], SPLITS, 100)
    assert [r["instance_id"] for r in rows] == ["a"]
    assert skipped == {"not_train_split": 2, "unknown_task": 1, "no_prompt": 0}


def test_sft_target_only_from_resolved_and_accepted_sessions():
    rows, _ = build_rows([session("s01", "a", "resolved", "accepted", answer="good"),
                          session("s02", "b", "resolved", "rejected", answer="bad"),
                          session("s03", "b", "unresolved", "accepted", answer="worse")], SPLITS, 100)
    by_id = {r["instance_id"]: r for r in rows}
    assert by_id["a"]["completion"] == "good"
    assert "completion" not in by_id["b"]
    assert by_id["b"]["sessions"] == ["s02", "s03"]


def test_session_without_user_prompt_is_counted():
    rec = session("s01", "a")
    rec["messages"] = [{"role": "assistant", "content": "x"}]
    rows, skipped = build_rows([rec], SPLITS, 100)
    assert rows == [] and skipped["no_prompt"] == 1


def test_max_examples_caps_rows_deterministically():
    rows, _ = build_rows([session("s02", "b"), session("s01", "a")], SPLITS, 1)
    assert [r["instance_id"] for r in rows] == ["a"]
