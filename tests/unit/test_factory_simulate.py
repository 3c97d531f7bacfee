"""The traffic simulator writes schema-v1 records the ingester accepts, and plants exactly the dirt it reports.

The agent is a deterministic script (test data, not a mock): it answers the gold patch on some sessions and prose
on others. Grading is the real harness; the records are read back with the real contract check and ingest's own
line parser and redactor.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from evals.factory.files import diff_file, diff_trees, make_targz
from evals.factory.simulate import PARSE_DEFECTS, SCHEMA_DEFECTS, malformed_line, simulate
from evals.harness import GradeCache, HarnessSettings, Instance, evaluate
from evals.prompts import answer_for_patch
from postgame.contract.check import ContractViolation, check_record
from postgame.ingest.lines import Accepted, Rejected, parse_line
from postgame.ingest.redact import redact_text
from postgame.settings.factory import SimulatorSettings
from postgame.store import LocalStore

CLEAN = "def total(prices):\n    return sum(prices)\n"
BUGGY = "def total(prices):\n    return sum(prices) + 1\n"
TESTS = {
    "tests/test_total.py": b"from shop.cart import total\n\n\ndef test_sum():\n    assert total([1, 2]) == 3\n\n\n"
    b"def test_empty_module_imports():\n    assert callable(total)\n"
}
NOW = datetime(2026, 11, 29, 14, 0, 0, tzinfo=UTC)


@dataclass
class Gen:
    text: str
    prompt_tokens: int = 100
    completion_tokens: int = 20
    latency_ms: float = 250.0


@pytest.fixture(scope="module")
def task(tmp_path_factory) -> Instance:
    root = tmp_path_factory.mktemp("env")
    env = root / "env.tar.gz"
    env.write_bytes(make_targz({"shop/__init__.py": b"", "shop/cart.py": BUGGY.encode()}, "shop"))
    return Instance(
        instance_id="acme__shop-1",
        repo="acme/shop",
        problem_statement="`total([1, 2])` returns 4, expected 3.",
        patch=diff_file("shop/cart.py", BUGGY, CLEAN),
        test_patch=diff_trees({}, TESTS),
        FAIL_TO_PASS=["tests/test_total.py::test_sum"],
        PASS_TO_PASS=["tests/test_total.py::test_empty_module_imports"],
        environment=str(env),
        environment_uri="s3://postgame/envs/abc.tar.gz",
        prompt_files=["shop/cart.py"],
    )


def files_for(inst: Instance) -> dict[str, str]:
    return {"shop/cart.py": BUGGY}


def scripted(gold_every: int, task: Instance):
    """Answers the gold patch on every `gold_every`-th prompt, prose otherwise."""
    calls = {"n": 0}

    def attempt(prompts: list[str], tasks: list[Instance]) -> list[Gen]:
        out = []
        for _ in prompts:
            calls["n"] += 1
            gold = gold_every and calls["n"] % gold_every == 0
            out.append(Gen(answer_for_patch(task.patch, files_for(task)) if gold else "Not sure where the bug is."))
        return out

    return attempt


def lines_of(store: LocalStore, keys: list[str]) -> list[bytes]:
    return [line for key in keys for line in gzip.decompress(store.get(key)).split(b"\n") if line]


def test_clean_traffic_is_valid_schema_v1_with_real_grades(tmp_path, task):
    store = LocalStore(tmp_path / "store")
    cache = GradeCache()
    settings = HarnessSettings(timeout_s=60)
    grade = lambda inst, patch: evaluate(inst, patch, repos_dir=None, settings=settings, cache=cache)  # noqa: E731
    summary = simulate(
        [task],
        scripted(2, task),
        grade,
        sessions=4,
        store=store,
        settings=SimulatorSettings(),
        seed=1,
        model_name="tiny",
        model_version="3",
        now=NOW,
        usd_per_cpu_hour=0.05,
        files_for=files_for,
    )
    assert summary.objects == ["agent-logs/dt=2026-11-29/part-0000.jsonl.gz"]
    assert summary.outcomes == {"abandoned": 2, "resolved": 2}
    assert (summary.duplicates, summary.malformed, summary.secret_sessions) == (0, {"parse": 0, "schema": 0}, {})
    records = [json.loads(line) for line in lines_of(store, summary.objects)]
    assert len(records) == 4 == len({r["session_id"] for r in records})
    for rec in records:
        check_record(rec)
        assert rec["agent"] == {"model_name": "tiny", "model_version": "3"}
        assert rec["task"]["environment"] == "s3://postgame/envs/abc.tar.gz"
        assert [m["role"] for m in rec["messages"]] == ["system", "user", "assistant", "tool"]
        assert "`total([1, 2])` returns 4" in rec["messages"][1]["content"] and BUGGY in rec["messages"][1]["content"]
        assert rec["timestamp"].endswith("Z") and rec["usage"]["cost_usd"] > 0
    resolved = [r for r in records if r["outcome"]["status"] == "resolved"]
    assert all(r["outcome"]["tests_passed"] == 2 and r["outcome"]["tests_failed"] == 0 for r in resolved)
    assert all(r["patch"] and r["outcome"]["feedback"] in ("accepted", "edited") for r in resolved)
    assert all(r["patch"] == "" for r in records if r["outcome"]["status"] == "abandoned")
    # nothing in clean traffic looks like a secret to the ingester's redactor
    assert all(redact_text(line.decode()) == line.decode() for line in lines_of(store, summary.objects))


def test_each_graded_session_says_how_many_passing_tests_it_broke(tmp_path, task):
    """`outcome.tests_broken`: the harness's PASS_TO_PASS failures, which curate reads to pair a breaking answer as
    DPO's rejected side first (issue 21). An ungraded session (no patch) does not say."""
    breaking = "total = None\n"  # fixes nothing and breaks `callable(total)`, the passing test
    elsewhere = {"shop/cart.py": "def other():\n    pass\n"}  # an edit written for a file that is not the task's
    stale = answer_for_patch(diff_file("shop/cart.py", elsewhere["shop/cart.py"], "x = 1\n"), elsewhere)
    answers = iter([answer_for_patch(task.patch, files_for(task)), "Not sure.", stale, None])

    def attempt(prompts: list[str], tasks: list[Instance]) -> list[Gen]:
        out = []
        for _ in prompts:
            text = next(answers, None) or answer_for_patch(diff_file("shop/cart.py", BUGGY, breaking), files_for(task))
            out.append(Gen(text))
        return out

    settings = HarnessSettings(timeout_s=60)
    summary = simulate(
        [task],
        attempt,
        lambda inst, patch: evaluate(inst, patch, repos_dir=None, settings=settings, cache=GradeCache()),
        sessions=4,
        store=LocalStore(tmp_path / "store"),
        settings=SimulatorSettings(),
        seed=1,
        now=NOW,
        files_for=files_for,
    )
    records = [json.loads(line) for line in lines_of(LocalStore(tmp_path / "store"), summary.objects)]
    broken = sorted((r["outcome"]["status"], r["outcome"].get("tests_broken"), bool(r["patch"])) for r in records)
    # the patch that did not apply broke nothing (its failing tests are the grader's missing ones, not breakage)
    assert broken == [
        ("abandoned", None, False),
        ("resolved", 0, True),
        ("unresolved", 0, True),
        ("unresolved", 1, True),
    ]


def test_dirt_is_planted_exactly_as_reported(tmp_path, task):
    store = LocalStore(tmp_path / "store")
    knobs = SimulatorSettings(duplicate_rate=0.1, malformed_rate=0.1, secret_rate=0.2, days=3)
    summary = simulate(
        [task],
        scripted(0, task),
        lambda i, p: None,
        sessions=300,
        store=store,
        settings=knobs,
        seed=7,
        now=NOW,
        files_for=files_for,
    )
    lines = lines_of(store, summary.objects)
    assert len(lines) == summary.lines == 300 + summary.duplicates + sum(summary.malformed.values())
    assert summary.duplicates > 0 and summary.malformed["parse"] > 0 and summary.malformed["schema"] > 0
    verdicts = [parse_line(line, text_chars=4096) for line in lines]
    rejected = Counter(v.reason for v in verdicts if isinstance(v, Rejected))
    assert dict(rejected) == {k: v for k, v in summary.malformed.items() if v}
    kept = [v.record for v in verdicts if isinstance(v, Accepted)]
    ids = Counter(r["session_id"] for r in kept)
    assert len(ids) == summary.sessions and sum(ids.values()) - len(ids) == summary.duplicates
    redacted = {r["session_id"]: r["messages"][3]["content"] for r in kept}
    leaked = {sid for sid, text in redacted.items() if "<REDACTED:" in text}
    assert leaked == set(summary.secret_sessions)
    for sid in leaked:
        assert f"<REDACTED:{summary.secret_sessions[sid]}>" in redacted[sid]
    assert sum(summary.secrets.values()) == len(leaked)
    assert len(summary.objects) >= 3  # spread over days, one partition a day


def test_every_defect_is_rejected_for_the_reason_it_is_counted_under(task):
    record = {
        "schema_version": 1,
        "session_id": "s-1",
        "timestamp": "2026-11-29T14:03:11Z",
        "agent": {"model_name": "m", "model_version": "1"},
        "task": {"instance_id": "i", "repo": "o/n", "problem_statement": "p", "environment": None},
        "messages": [{"role": "user", "content": "hi"}],
        "patch": "",
        "outcome": {"status": "unresolved", "tests_passed": 0, "tests_failed": 1, "feedback": "none"},
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "latency_ms": 1.0, "cost_usd": 0.0},
    }
    check_record(json.loads(json.dumps(record)))
    for defect in PARSE_DEFECTS:
        verdict = parse_line(malformed_line(record, defect), text_chars=4096)
        assert isinstance(verdict, Rejected) and verdict.reason == "parse", defect
    for defect in SCHEMA_DEFECTS:
        verdict = parse_line(malformed_line(record, defect), text_chars=4096)
        assert isinstance(verdict, Rejected) and verdict.reason == "schema", defect
        with pytest.raises(ContractViolation):
            check_record(json.loads(malformed_line(record, defect)))


def test_a_second_run_writes_the_next_part_instead_of_overwriting(tmp_path, task):
    store = LocalStore(tmp_path / "store")
    args = dict(sessions=3, store=store, settings=SimulatorSettings(), now=NOW, files_for=files_for)
    first = simulate([task], scripted(0, task), lambda i, p: None, seed=1, **args)
    second = simulate([task], scripted(0, task), lambda i, p: None, seed=2, **args)
    assert first.objects == ["agent-logs/dt=2026-11-29/part-0000.jsonl.gz"]
    assert second.objects == ["agent-logs/dt=2026-11-29/part-0001.jsonl.gz"]
    assert not set(first.session_ids) & set(second.session_ids)


def test_progress_counts_every_session_once_in_batches_duplicates_aside(tmp_path, task):
    """`postgame simulate --sessions N` draws its bar out of N: progress adds up to the sessions, whatever the batch
    size, and the re-sent duplicates (lines, not sessions) are not counted again."""
    told: list[tuple[str, int]] = []
    summary = simulate(
        [task],
        scripted(0, task),
        lambda i, p: None,
        sessions=7,
        store=LocalStore(tmp_path / "store"),
        settings=SimulatorSettings(batch_size=3, duplicate_rate=0.5),
        now=NOW,
        files_for=files_for,
        progress=lambda text, done: told.append((text, done)),
    )
    assert [done for _, done in told if done] == [3, 3, 1] and summary.sessions == 7 and summary.duplicates > 0
    assert told[:2] == [("answering sessions 1-3", 0), ("3 answered", 3)]
    assert told[-1] == ("grading the 0 answers with a patch", 0)  # prose only: nothing to grade
