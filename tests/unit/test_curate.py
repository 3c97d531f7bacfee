"""Curate keeps the train split only, so evaluation never measures what training saw; and builds each mode's rows:
SFT on verified answers, DPO pairs from the same task, GRPO prompts with their outcome variance."""

from __future__ import annotations

from postgame.curate import build_rows, order_prompts, rows_of


def session(sid, instance_id, status="unresolved", feedback="none", answer="<<patch>>", prompt="fix it", broken=None):
    return {
        "session_id": sid,
        "timestamp": f"2026-11-29T10:00:{sid[-2:]}Z",
        "task": {"instance_id": instance_id},
        "outcome": {"status": status, "feedback": feedback, **({} if broken is None else {"tests_broken": broken})},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": answer},
        ],
        "patch": answer,
    }


SPLITS = {"a": "train", "b": "train", "e": "eval", "h": "holdout"}


def test_eval_and_holdout_sessions_never_reach_training():
    rows, skipped = build_rows(
        [
            session("s01", "a", "resolved", "accepted"),
            session("s02", "e", "resolved", "accepted"),
            session("s03", "h"),
            session("s04", "zzz"),
        ],
        SPLITS,
        100,
    )
    assert {r["instance_id"] for r in rows} == {"a"}
    assert skipped == {"not_train_split": 2, "unknown_task": 1, "no_prompt": 0, "sft_malformed_calls": 0}


def test_sft_target_only_from_resolved_and_accepted_sessions():
    rows, _ = build_rows(
        [
            session("s01", "a", "resolved", "accepted", answer="good"),
            session("s02", "b", "resolved", "rejected", answer="bad"),
            session("s03", "b", "unresolved", "accepted", answer="worse"),
            session("s04", "a", "resolved", "edited", answer="good"),
        ],
        SPLITS,
        100,
    )
    sft = rows_of(rows, "sft")
    assert [(r["instance_id"], r["completion"], r["example_id"]) for r in sft] == [("a", "good", "sft:a:s01")]
    grpo = {r["instance_id"]: r for r in rows_of(rows, "grpo")}
    assert grpo["b"]["session_ids"] == ["s02", "s03"]


def test_dpo_pairs_verified_against_failed_on_the_same_task():
    rows, _ = build_rows(
        [
            session("s01", "a", "resolved", "accepted", answer="good"),
            session("s02", "a", "unresolved", "none", answer="wrong"),
            session("s03", "a", "abandoned", "none", answer="gave up"),
            session("s04", "a", "error", "none", answer="infra"),  # not the policy's failure
            session("s05", "a", "resolved", "rejected", answer="ugly"),  # the user said no
            session("s06", "a", "unresolved", "none", answer="good"),  # same text as chosen
            session("s07", "b", "unresolved", "none", answer="other task"),
        ],
        SPLITS,
        100,
    )
    pairs = [(r["instance_id"], r["chosen"], r["rejected"]) for r in rows_of(rows, "dpo")]
    assert pairs == [("a", "good", "wrong"), ("a", "good", "gave up"), ("a", "good", "ugly")]
    capped, _ = build_rows(
        [session("s01", "a", "resolved", "accepted", answer="good")]
        + [session(f"s1{i}", "a", answer=f"bad{i}") for i in range(5)],
        SPLITS,
        100,
        max_pairs_per_task=2,
    )
    assert len(rows_of(capped, "dpo")) == 2


def test_breakage_is_in_the_pairs_and_never_in_sft():
    """Issue 21: a rejected side that broke a passing test (`outcome.tests_broken`, as simulate logs it) is paired
    first, so the pair cap keeps the lesson "do not break what passes"; a resolved answer that broke one is never an
    SFT target, only a rejected side."""
    rows, _ = build_rows(
        [
            session("s01", "a", "resolved", "accepted", answer="good", broken=0),
            session("s02", "a", "unresolved", answer="wrong", broken=0),
            session("s03", "a", "unresolved", answer="wrong and breaking", broken=2),
            session("s04", "a", "abandoned", answer="gave up"),
            session("s05", "a", "resolved", "accepted", answer="resolved but breaking", broken=1),
            session("s06", "a", "unresolved", answer="odd count", broken=-3),  # not a count: unknown
        ],
        SPLITS,
        100,
        max_pairs_per_task=3,
    )
    assert [r["completion"] for r in rows_of(rows, "sft")] == ["good"]
    assert [r["rejected"] for r in rows_of(rows, "dpo")] == ["wrong and breaking", "resolved but breaking", "wrong"]


def trajectory(sid, instance_id, arguments, status="resolved", answer="fixed"):
    """A schema-v2 session: one edit call with these arguments, its answer, then the final answer."""
    record = session(sid, instance_id, status, "accepted", answer=answer)
    call = {"id": "c1", "type": "function", "function": {"name": "edit", "arguments": arguments}}
    record["schema_version"] = 2
    record["messages"][2:2] = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "Invalid call: the arguments of 'edit' are not JSON"},
    ]
    return record


def test_a_trajectory_with_a_malformed_call_is_never_imitated_and_is_counted():
    # checked: fails when _Attempt.verified ignores `malformed` (the malformed trajectory is then an SFT row), and
    # when the count takes every session with a malformed call (s04 never was an SFT candidate)
    rows, skipped = build_rows(
        [
            trajectory("s01", "a", '{"path": "x.py"', answer="fixed after a broken call"),
            trajectory("s02", "a", '{"path": "x.py"}', answer="fixed"),
            trajectory("s03", "a", '{"path": "y.py"}', status="unresolved", answer="wrong"),
            trajectory("s04", "a", '{"path": ', status="unresolved", answer="wrong, and a broken call"),
        ],
        SPLITS,
        100,
    )
    assert [r["completion"] for r in rows_of(rows, "sft")] == ["fixed"]
    assert [r["rejected"] for r in rows_of(rows, "dpo")] == ["wrong", "wrong, and a broken call"]
    assert rows_of(rows, "grpo")[0]["resolved"] == 2 and skipped["sft_malformed_calls"] == 1  # s01 only


def test_grpo_prompts_carry_outcome_variance_highest_first():
    rows, _ = build_rows(
        [
            session("s01", "a", "resolved", "accepted"),
            session("s02", "a"),
            session("s03", "b"),
            session("s04", "b"),
            session("s05", "b", "error"),
        ],
        SPLITS,
        100,
    )
    grpo = rows_of(rows, "grpo")
    assert [(r["instance_id"], r["sessions"], r["resolved"], r["variance"]) for r in grpo] == [
        ("a", 2, 1, 0.25),
        ("b", 2, 0, 0.0),
    ]  # the error session is not an outcome


def test_one_session_a_task_orders_prompts_by_what_the_traffic_resolves():
    """With one session a task every empirical variance is 0: the order shrinks each share toward the traffic's rate
    (a weak policy's resolved tasks are the ones it solves sometimes, a strong policy's failed ones), and ties spread
    by a hash of the task id, not the alphabet (which took one project's tasks only)."""
    ids = [f"{project}-{n}" for project in "pqrs" for n in range(5)]
    splits = {i: "train" for i in ids}

    def order(resolved: set[str]) -> list[str]:
        sessions = [
            session(f"s{k:02d}", i, "resolved" if i in resolved else "unresolved", "accepted")
            for k, i in enumerate(ids)
        ]
        return [r["instance_id"] for r in order_prompts(rows_of(build_rows(sessions, splits, 100)[0], "grpo"))]

    weak = order({"q-1", "s-3"})  # 2 of 20 resolved: those two are the likeliest to vary
    assert set(weak[:2]) == {"q-1", "s-3"}
    strong = order(set(ids) - {"q-1", "s-3"})  # 18 of 20: the two failures
    assert set(strong[:2]) == {"q-1", "s-3"}
    assert weak[2:] != sorted(weak[2:]) and len({i[0] for i in weak[2:6]}) > 1  # ties spread over the projects
    assert weak == order({"q-1", "s-3"})  # deterministic


def test_session_without_user_prompt_is_counted():
    rec = session("s01", "a")
    rec["messages"] = [{"role": "assistant", "content": "x"}]
    rows, skipped = build_rows([rec], SPLITS, 100)
    assert rows == [] and skipped["no_prompt"] == 1


def test_max_examples_caps_rows_deterministically():
    rows, _ = build_rows(
        [session("s02", "b"), session("s01", "a", "resolved", "accepted"), session("s03", "b")], SPLITS, 1
    )
    assert [r["instance_id"] for r in rows_of(rows, "grpo")] == ["a"]  # the one the traffic resolved once
    again, _ = build_rows(
        [session("s03", "b"), session("s01", "a", "resolved", "accepted"), session("s02", "b")], SPLITS, 1
    )
    assert again == rows
