"""The rows benchmarks/bench_fresh_traffic.py trains on: SFT on distinct resolved answers, DPO pairs from one bug."""

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _bench():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("bench_fresh_traffic", BENCH / "bench_fresh_traffic.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def _a(iid, text, resolved, seed=1):
    return {"instance_id": iid, "prompt": f"fix {iid}", "completion": text, "resolved": resolved, "seed": seed}


SERVED = [
    _a("a", "right", True, 1),
    _a("a", "right", True, 2),  # the same answer twice: one row
    _a("a", "wrong", False, 3),
    _a("a", "other wrong", False, 4),
    _a("b", "right", True),  # no failure on b: no pair
    _a("c", "wrong", False),  # no success on c: no pair, no SFT row
    _a("d", "right", True),
    _a("d", "ungraded", None),  # an infrastructure error is neither side
]


def test_sft_rows_are_the_distinct_resolved_answers():
    rows = _bench().sft_rows(SERVED)
    assert sorted((r["instance_id"], r["completion"]) for r in rows) == [("a", "right"), ("b", "right"), ("d", "right")]
    assert {r["kind"] for r in rows} == {"sft"}


def test_dpo_pairs_a_resolved_answer_with_each_failure_of_the_same_bug():
    rows = _bench().dpo_rows(SERVED)
    assert sorted((r["instance_id"], r["chosen"], r["rejected"]) for r in rows) == [
        ("a", "right", "other wrong"),
        ("a", "right", "wrong"),
    ]
    assert {r["kind"] for r in rows} == {"dpo"}
    assert all(r["prompt"] == "fix a" for r in rows)
    assert len({r["example_id"] for r in rows}) == len(rows)
