"""Snapshots are claimed by one cycle: two cycles started at once never both hold a snapshot; a claim whose process is
gone (a worker killed mid-cycle) is taken over by the re-run; recording the snapshot releases every claim."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys

from postgame import ledger


def _claim_and_stay(cfg_path: str, owner: str, results) -> None:
    import time

    from postgame.config import load_config

    held = ledger.claim(load_config(cfg_path, env={}), ["snap-a", "snap-b"], owner)
    results.put((owner, held))
    time.sleep(4)  # stay alive while the other cycle decides: a live claim holds


def test_two_cycles_at_once_never_hold_the_same_snapshot(cfg):
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_claim_and_stay, args=(str(cfg.home / "postgame.yaml"), f"run-{n}", results))
        for n in range(2)
    ]
    for p in procs:
        p.start()
    got = dict(results.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=30)
    held = [snap for snaps in got.values() for snap in snaps]
    assert sorted(held) == ["snap-a", "snap-b"], got  # each snapshot held by exactly one of them


def test_a_claim_of_a_killed_process_is_taken_over_by_the_rerun(cfg):
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        entry = json.dumps({"at": 0, "host": os.uname().nodename, "owner": "killed-run", "pid": worker.pid})
        from postgame.runtime import store

        store(cfg).put(f"{cfg.ingest.state_prefix}claims/snap-a/killed-run.json", entry.encode())
        assert ledger.claim(cfg, ["snap-a"], "rerun") == []  # the worker still runs: its claim holds
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
        assert ledger.claim(cfg, ["snap-a"], "rerun") == ["snap-a"]  # gone: the re-run takes it over
    finally:
        worker.kill()


def test_recording_a_snapshot_releases_its_claims(cfg):
    from postgame.runtime import store

    assert ledger.claim(cfg, ["snap-a"], "run-1") == ["snap-a"]
    ledger.record(cfg, ["snap-a"], "trained", "version 1")
    assert list(store(cfg).list(f"{cfg.ingest.state_prefix}claims/snap-a/")) == []


def ingest_days(cfg, logs, days: int) -> list[str]:
    """`days` snapshots, one a day of 3 synthetic sessions, ingested in order: their ids."""
    from postgame.contract.synthetic import encode, sessions
    from postgame.ingest.pipeline import run_ingest

    ids = []
    for n in range(days):
        (logs / f"day-{n}").mkdir(parents=True)
        (logs / f"day-{n}" / "part-0.jsonl").write_bytes(encode(list(sessions(3, seed=n))))
        ids.append(run_ingest(str(logs), cfg=cfg).snapshot_id)
    return ids


def test_recently_trained_is_the_newest_trained_snapshots_in_ingest_order(cfg, tmp_path):
    ids = ingest_days(cfg, tmp_path / "logs", 4)
    ledger.record(cfg, [ids[2]], "trained", "version 2")  # recorded first, yet ingested after ids[0]
    ledger.record(cfg, [ids[0]], "trained", "version 1")
    ledger.record(cfg, [ids[1]], "rejected", "failed validation")  # never replayed
    assert ledger.recently_trained(cfg, 0) == []
    assert ledger.recently_trained(cfg, 1) == [ids[2]]
    assert ledger.recently_trained(cfg, 5) == [ids[0], ids[2]]
    assert ledger.pending(cfg) == [ids[3]]


def test_a_cycle_learns_from_replayed_snapshots_before_the_claimed_ones(cfg, tmp_path):
    from postgame.curate import snapshots_to_learn

    ids = ingest_days(cfg, tmp_path / "logs", 3)
    ledger.record(cfg, ids[:2], "trained", "version 1")
    assert snapshots_to_learn(cfg, [ids[2]]) == [ids[0], ids[1], ids[2]]  # replay_snapshots: 4 (the default)
    cfg = cfg.model_copy(update={"curate": cfg.curate.model_copy(update={"replay_snapshots": 0})})
    assert snapshots_to_learn(cfg, [ids[2]]) == [ids[2]]
    cfg = cfg.model_copy(update={"curate": cfg.curate.model_copy(update={"replay_snapshots": 1})})
    assert snapshots_to_learn(cfg, [ids[2]]) == [ids[1], ids[2]]
    assert snapshots_to_learn(cfg, [ids[1], ids[2]]) == [ids[1], ids[2]]  # never twice
