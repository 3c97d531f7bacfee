"""Snapshots ingested before the pre-filter fix (5e3908b) hold `github_pat_` tokens in clear, and snapshots are
immutable: the audit found them but nothing removed them. `postgame redact` replaces such a snapshot by a
re-redacted successor, records the replacement in the ledger, deletes the old one, and every later reader (the
cycle's pending and replay snapshots, ingest's state, `latest`, the old id, lineage) gets the successor. It is
idempotent, a dry run writes nothing, and no output ever shows the secret."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time

import pytest

from postgame import ledger, runtime
from postgame.contract.synthetic import sessions
from postgame.curate import snapshots_to_learn
from postgame.errors import SnapshotBusy
from postgame.ingest import snapshot as snap
from postgame.ingest.audit import audit_snapshot
from postgame.ingest.catalog import list_snapshots, load_snapshot, supersession
from postgame.ingest.pipeline import run_ingest
from postgame.ingest.remediate import remediate
from postgame.lineage import _snapshot_hops
from tests.support import PLANTED_TOKEN, plant_old_snapshot, postgame_inprocess


def store_files(cfg) -> dict[str, str]:
    """Every object of the store: key -> sha256 of its bytes."""
    root = cfg.home / "store"
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file()
    }


@pytest.fixture
def leaky(cfg, tmp_path):
    """A store with an old, trained-on snapshot holding a planted token in clear, and a later clean one.
    Returns (old id, later id, the old snapshot's rows)."""
    logs = tmp_path / "logs"
    old = plant_old_snapshot(cfg, logs, sessions=6, seed=41, at=3, text=f"push with {PLANTED_TOKEN} please")
    (logs / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in sessions(3, seed=42)))
    later = run_ingest(str(logs), cfg=cfg, mapper=map).snapshot_id
    rows = load_snapshot(old, cfg=cfg).to_pylist()
    assert PLANTED_TOKEN in json.dumps(rows)  # planted as the old ingest stored it
    return old, later, rows


def test_the_secret_is_found_replaced_and_the_old_snapshot_gone(cfg, leaky):
    old, later, rows = leaky
    report = remediate(cfg, None)

    [done] = report.replacements
    successor = done.successor
    assert (done.snapshot_id, done.done, done.records, done.kinds) == (old, "replaced", 1, ("github_token",))
    # the successor: the same records, the token redacted, nothing else changed
    assert audit_snapshot(successor, cfg=cfg) == []
    expected = json.loads(json.dumps(rows).replace(PLANTED_TOKEN, "<REDACTED:github_token>"))
    assert load_snapshot(successor, cfg=cfg).to_pylist() == expected
    # the ledger: the replacement recorded, the successor trained on like the old one
    record = supersession(old, cfg=cfg)
    assert record is not None and record.superseded_by == successor and record.kinds == ["github_token"]
    assert ledger.status(cfg, successor) == "trained" and ledger.pending(cfg) == [later]
    # the old snapshot's objects are gone; no object of the store holds the token
    assert not [k for k in store_files(cfg) if old in k and "ledger/" not in k]
    assert list(runtime.store(cfg).list(snap.snapshot_prefix(cfg.ingest.state_prefix, old))) == []
    # every later reader gets the successor: listings, the cycle's replay, the old id, ingest's state
    assert [m.snapshot_id for m in list_snapshots(cfg=cfg)] == [successor, later]
    assert snapshots_to_learn(cfg, [later]) == [successor, later]
    assert load_snapshot(old, cfg=cfg).to_pylist() == expected
    assert run_ingest(str(cfg.home.parent / "logs"), cfg=cfg, mapper=map).snapshot_id is None  # nothing read twice
    # lineage of a model trained on the old snapshot says what became of it, then checks the successor
    first, second, *objects = _snapshot_hops(cfg, old)
    assert first.superseded_by == successor and first.ok
    assert f"superseded by {successor} (redacted on {record.date})" in first.detail
    assert (second.name, second.ok) == (successor[:12], True) and [o.ok for o in objects] == [True]


def test_a_second_run_has_nothing_to_do(cfg, leaky):
    remediate(cfg, None)
    before = store_files(cfg)
    again = remediate(cfg, None)
    assert again.nothing_to_do and len(again.checked) == 2
    assert store_files(cfg) == before


def test_a_dry_run_lists_what_it_would_replace_and_writes_nothing(cfg, leaky):
    old, _, _ = leaky
    before = store_files(cfg)
    report = remediate(cfg, None, dry_run=True)
    [found] = report.replacements
    assert (found.snapshot_id, found.successor, found.done, found.records) == (old, None, "would replace", 1)
    assert store_files(cfg) == before


def test_the_command_never_prints_the_secret(monkeypatch, capsys, cli_home, tmp_path):
    cfg = runtime.current_config()
    old = plant_old_snapshot(cfg, tmp_path / "logs", sessions=1, seed=43, at=0, text=f"use {PLANTED_TOKEN}")

    code, out, err = postgame_inprocess(monkeypatch, capsys, "redact", "--all", "--dry-run", "--json")
    assert code == 0 and json.loads(out)["replacements"][0]["snapshot_id"] == old
    code, listed, _ = postgame_inprocess(monkeypatch, capsys, "redact", "--all", "--dry-run")
    assert code == 0 and f"would replace  {old}" in listed and "github_token in messages.content" in listed
    code, text, err2 = postgame_inprocess(monkeypatch, capsys, "redact", "--snapshot", old[:12])
    assert code == 0 and f"replaced       {old} -> " in text and "github_token" in text
    code, again, _ = postgame_inprocess(monkeypatch, capsys, "redact", "--all")
    assert code == 0 and "nothing to do" in again
    code, _, usage = postgame_inprocess(monkeypatch, capsys, "redact")
    assert code == 2 and "--snapshot ID" in usage
    assert all(PLANTED_TOKEN not in s and "github_pat_" not in s for s in (out, err, listed, text, err2, again, usage))


def test_a_snapshot_a_running_cycle_holds_is_left_alone(cfg, leaky):
    old, _, rows = leaky
    claim = {"owner": "cycle-1", "pid": os.getppid(), "host": socket.gethostname(), "at": time.time()}  # alive
    runtime.store(cfg).put(f"{cfg.ingest.state_prefix}claims/{old}/cycle-1.json", json.dumps(claim).encode())
    before = store_files(cfg)
    with pytest.raises(SnapshotBusy, match=old):
        remediate(cfg, None)
    assert store_files(cfg) == before and load_snapshot(old, cfg=cfg).to_pylist() == rows
