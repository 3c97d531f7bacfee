"""The redaction audit (`postgame.ingest.audit`, scripts/audit_redaction.py): stored strings that today's redaction
would change are found with their field, kind, object key and line; records ingest redacted are not."""

from __future__ import annotations

import json

import numpy as np

from postgame.contract.arrow import EXTRA, SOURCE_KEY, SOURCE_LINE, records_to_table
from postgame.contract.synthetic import sessions
from postgame.ingest.audit import audit_snapshot, unredacted
from postgame.ingest.lines import parse_line
from postgame.ingest.pipeline import run_ingest
from tests.support import make_config

TOKEN = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"


def _stored(record: dict, line: int) -> dict:
    """`record` as ingest stores it (redacted by the exact path), with lineage."""
    accepted = parse_line(json.dumps(record).encode(), text_chars=4096)
    return {**accepted.record, EXTRA: accepted.extra, SOURCE_KEY: "logs/a.jsonl", SOURCE_LINE: line}


def test_strings_left_in_clear_are_found_and_redacted_ones_are_not():
    records = list(sessions(4, seed=11))
    records[1]["messages"][0]["content"] = "mail dev@example.com the key AKIAQ4EXAMPLE7STRADL"  # redacted by ingest
    rows = [_stored(r, n + 1) for n, r in enumerate(records)]
    rows[2]["messages"][-1]["content"] = f"push with {TOKEN}"  # left in clear (the old pre-filter's miss)
    rows[3][EXTRA] = json.dumps({"client": {"api_key": "abc123"}})  # an unknown secret-named field in clear
    found = unredacted(records_to_table(rows))
    assert [(f.row, f.field, f.kinds, f.object_key, f.line) for f in found] == [
        (2, "messages.content", ("github_token",), "logs/a.jsonl", 3),
        (3, "extra", ("secret",), "logs/a.jsonl", 4),
    ]


def test_a_snapshot_ingested_with_the_old_pre_filter_miss_is_found(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    logs.mkdir()
    record = next(iter(sessions(1, seed=12)))
    record["messages"][-1]["content"] = f"use {TOKEN} to push"
    (logs / "a.jsonl").write_text(json.dumps(record) + "\n")
    (tmp_path / "fixed").mkdir()
    (tmp_path / "leaky").mkdir()
    cfg = make_config(tmp_path / "fixed")
    assert audit_snapshot(run_ingest(str(logs), cfg=cfg, mapper=map).snapshot_id, cfg=cfg) == []

    import postgame.ingest.objects as objects

    monkeypatch.setattr(objects, "needs_slow_path", lambda block, starts: np.zeros(len(starts), bool))  # the old miss
    cfg = make_config(tmp_path / "leaky")
    [finding] = audit_snapshot(run_ingest(str(logs), cfg=cfg, mapper=map).snapshot_id, cfg=cfg)
    assert (finding.row, finding.field, finding.kinds, finding.object_key, finding.line) == (
        0,
        "messages.content",
        ("github_token",),
        "a.jsonl",
        1,
    )
