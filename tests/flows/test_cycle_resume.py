"""A cycle that fails after ingest leaves its snapshot pending, and the next cycle trains on it together with what
landed since: several pending snapshots in one cycle. On the small world of tests/flows, under its own registered
model, log prefix and ingest state (the other flow tests' champion and snapshots are not touched). The failure is a
crash injected into the trainer (`tasks.train.train_candidate`); everything else is real."""

from __future__ import annotations

import pytest
import yaml


@pytest.fixture(scope="module")
def apart(small_world):
    from postgame.config import load_config

    data = yaml.safe_load((small_world.home / "postgame.yaml").read_text())
    data["tracking"] = {"experiment": "resume", "registered_model": "resume-policy"}
    data["ingest"] = {**data.get("ingest", {}), "state_prefix": "resume/ingest/"}
    data["tasks"] = {**data["tasks"], "simulate": {"log_prefix": "resume-logs/"}}
    path = small_world.home / "resume.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_config(path, env={}), path


def test_a_cycle_that_failed_after_ingest_is_taken_up_by_the_next_with_what_landed_since(apart, monkeypatch):
    import tasks.train
    from flows.cycle import run_cycle
    from models import registry
    from models.traffic import simulate_traffic
    from postgame import ledger
    from postgame.ingest import list_snapshots

    cfg, path = apart
    assert simulate_traffic(cfg, sessions=4).sessions == 4

    def crash(*args, **kwargs):
        raise RuntimeError("the trainer crashed")

    with monkeypatch.context() as patched:
        patched.setattr(tasks.train, "train_candidate", crash)
        with pytest.raises(RuntimeError, match="the trainer crashed"):
            run_cycle(str(path))
    [failed] = ledger.pending(cfg)  # ingested and validated, never trained: still pending
    assert registry.client(cfg).search_model_versions(f"name='{cfg.tracking.registered_model}'") == []

    assert simulate_traffic(cfg, sessions=4).sessions == 4  # more logs land before the next cycle
    report = run_cycle(str(path))
    manifests = list_snapshots(cfg=cfg)
    snapshots = [m.snapshot_id for m in manifests]
    assert len(snapshots) == 2 and snapshots[0] == failed
    assert report.status == "completed" and report.snapshot_ids == snapshots  # both, oldest first
    assert report.records_ingested == manifests[1].counts.records_ingested > 0  # this cycle read only what was new
    assert ledger.pending(cfg) == []
    assert [ledger.status(cfg, s) for s in snapshots] == ["trained", "trained"]
    assert report.version == "1"
