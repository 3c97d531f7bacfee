"""A `postgame redact` killed half-way must leave a readable snapshot and no duplicate: killed after the successor is
written and before the ledger records the replacement, the old snapshot is still the one every reader sees; killed
after the record and before the deletion, the successor is. Either way a re-run completes the replacement, with
exactly one successor."""

from __future__ import annotations

import json

import pytest

from postgame import ledger, runtime
from postgame.errors import PostgameError
from postgame.ingest import remediate as rem
from postgame.ingest import snapshot as snap
from postgame.ingest.catalog import list_snapshots, load_snapshot
from tests.support import PLANTED_TOKEN, plant_old_snapshot


class Crash(Exception):
    pass


def crash(*args, **kwargs):
    raise Crash("killed here")


@pytest.fixture
def old(cfg, tmp_path):
    return plant_old_snapshot(
        cfg, tmp_path / "logs", sessions=5, seed=51, at=1, message=0, text=f"token {PLANTED_TOKEN}"
    )


def successors(cfg, old_id: str) -> list[str]:
    return [
        m.snapshot_id
        for m in snap.stored_manifests(runtime.store(cfg), cfg.ingest.state_prefix)
        if m.supersedes == old_id
    ]


def test_killed_before_the_ledger_record_the_old_snapshot_still_counts(cfg, old, monkeypatch):
    rows = load_snapshot(old, cfg=cfg).to_pylist()
    with monkeypatch.context() as m:
        m.setattr(ledger, "inherit", crash)  # the successor is written; the ledger is next
        with pytest.raises(Crash):
            rem.remediate(cfg, None)
    [written] = successors(cfg, old)
    assert [m.snapshot_id for m in list_snapshots(cfg=cfg)] == [old]  # the successor is not there yet
    assert load_snapshot(old, cfg=cfg).to_pylist() == rows and ledger.pending(cfg) == []
    with pytest.raises(PostgameError, match="no snapshot"):
        load_snapshot(written, cfg=cfg)  # not by its own id either

    report = rem.remediate(cfg, None)
    assert [(r.snapshot_id, r.successor, r.done) for r in report.replacements] == [(old, written, "replaced")]
    assert successors(cfg, old) == [written]  # the same content, the same id: no second successor
    assert [m.snapshot_id for m in list_snapshots(cfg=cfg)] == [written] and ledger.status(cfg, written) == "trained"
    assert PLANTED_TOKEN not in json.dumps(load_snapshot(old, cfg=cfg).to_pylist())


def test_killed_before_the_deletion_the_successor_counts_and_a_rerun_deletes(cfg, old, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(rem, "_finish", crash)  # the replacement is recorded; the deletion is next
        with pytest.raises(Crash):
            rem.remediate(cfg, None)
    [written] = successors(cfg, old)
    assert [m.snapshot_id for m in list_snapshots(cfg=cfg)] == [written]  # the old one no longer counts ...
    assert PLANTED_TOKEN not in json.dumps(
        load_snapshot(old, cfg=cfg).to_pylist()
    )  # ... and its id reads the successor
    prefix = snap.snapshot_prefix(cfg.ingest.state_prefix, old)
    assert list(runtime.store(cfg).list(prefix))  # the old objects are still there, for the re-run to delete
    [found] = rem.remediate(cfg, None, dry_run=True).replacements
    assert (found.snapshot_id, found.done) == (old, "would complete") and list(runtime.store(cfg).list(prefix))

    report = rem.remediate(cfg, None)
    assert [(r.snapshot_id, r.successor, r.done) for r in report.replacements] == [(old, written, "completed")]
    assert list(runtime.store(cfg).list(prefix)) == [] and successors(cfg, old) == [written]
    assert rem.remediate(cfg, None).nothing_to_do


def test_a_successor_left_by_other_code_is_deleted_once_the_replacement_is_recorded(cfg, old, monkeypatch):
    with monkeypatch.context() as m:
        real = rem.clean_rows  # other code: other bytes, another id
        m.setattr(rem, "clean_rows", lambda rows: [{**r, "session_id": r["session_id"] + "-x"} for r in real(rows)])
        m.setattr(ledger, "inherit", crash)
        with pytest.raises(Crash):
            rem.remediate(cfg, None)
    [stray] = successors(cfg, old)
    report = rem.remediate(cfg, None)
    [done] = report.replacements
    assert done.successor != stray and successors(cfg, old) == [done.successor]
