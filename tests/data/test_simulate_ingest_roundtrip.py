"""simulate → ingest round-trips: with the dirt knobs off nothing is quarantined; with them on, ingest finds exactly
the duplicates, parse and schema defects the simulator reports planting, and none of the planted secrets survives.

Uses the real `simulate` writer and the real `run_ingest` on a folder store; the agent is a scripted answerer
(test data: it says the same thing every time), grading is skipped (`grade` returns None: no verdict), which the
simulator records as an `error` outcome — the round trip is about the log records, not the grades.
"""

from __future__ import annotations

from datetime import UTC, datetime

from evals.factory.simulate import simulate
from evals.harness import Instance
from postgame.ingest import load_snapshot, run_ingest
from postgame.ingest.lines import REASONS
from postgame.settings.factory import SimulatorSettings
from postgame.store import LocalStore

NOW = datetime(2026, 11, 29, 14, 0, 0, tzinfo=UTC)


class Said:
    def __init__(self, text: str):
        self.text, self.prompt_tokens, self.completion_tokens, self.latency_ms = text, 50, 10, 120.0


def _task() -> Instance:
    return Instance(
        instance_id="acme__shop-1",
        repo="acme/shop",
        base_commit="0" * 40,
        problem_statement="`total([1, 2])` returns 4, expected 3.",
        patch="",
        test_patch="",
        FAIL_TO_PASS=["tests/test_total.py::test_sum"],
        PASS_TO_PASS=[],
        prompt_files=["shop/cart.py"],
    )


def _run(cfg, tmp_path, knobs: SimulatorSettings, sessions: int):
    logs = LocalStore(tmp_path / "logs")
    summary = simulate(
        [_task()],
        lambda prompts, tasks: [Said("I could not find the bug.") for _ in prompts],
        lambda inst, patch: None,
        sessions=sessions,
        store=logs,
        settings=knobs,
        seed=7,
        model_name="policy",
        model_version="1",
        now=NOW,
        files_for=lambda inst: {"shop/cart.py": "def total(p):\n    return sum(p) + 1\n"},
    )
    ingested = run_ingest(str(tmp_path / "logs" / knobs.log_prefix), cfg=cfg)
    return summary, ingested


def test_clean_traffic_ingests_whole_with_nothing_quarantined(cfg, tmp_path):
    summary, ingested = _run(cfg, tmp_path, SimulatorSettings(), sessions=20)
    assert ingested.records_ingested == summary.sessions == 20
    assert ingested.duplicates == 0
    assert ingested.quarantined == dict.fromkeys(REASONS, 0)
    ids = set(load_snapshot(ingested.snapshot_id, cfg=cfg).column("session_id").to_pylist())
    assert ids == set(summary.session_ids)


def test_dirty_traffic_gives_exactly_the_planted_counts(cfg, tmp_path):
    import re

    knobs = SimulatorSettings(duplicate_rate=0.2, malformed_rate=0.2, secret_rate=0.3)
    summary, ingested = _run(cfg, tmp_path, knobs, sessions=60)
    assert summary.duplicates > 0 and sum(summary.malformed.values()) > 0 and summary.secret_sessions
    assert ingested.records_ingested == summary.sessions
    assert ingested.duplicates == summary.duplicates
    assert ingested.quarantined == dict.fromkeys(REASONS, 0) | summary.malformed
    # Every secret planted in a tool message is gone from the snapshot, replaced by its typed placeholder.
    text = str(load_snapshot(ingested.snapshot_id, cfg=cfg).to_pylist())
    assert "<REDACTED:" in text
    planted = {  # the shapes `evals.factory.simulate.fake_secret` plants, as regexes for the secret part alone
        "aws_key": r"AKIA[A-Z2-7]{16}",
        "github_token": r"ghp_[A-Za-z0-9]{36}",
        "private_key": r"PRIVATE KEY-----\\n[A-Za-z0-9+/]{64}",
        "bearer_token": r"Bearer [A-Za-z0-9]{40}",
        "url_password": r"deploy:[A-Za-z0-9]{14}@",
        "email": r"[a-z]{7}\.[a-z]{5}@acme-corp\.com",
    }
    for kind in set(summary.secret_sessions.values()):
        assert not re.search(planted[kind], text), kind
