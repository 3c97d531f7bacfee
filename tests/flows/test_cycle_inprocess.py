"""The cycle on real Prefect (ephemeral API), real MLflow (SQLite) and a folder store — no stack, same code.

One small world is built for the module: a few seed projects, a few validated tasks each, traffic from the base
policy. Then: a full cycle registers a champion; a second cycle with nothing new is skipped; a snapshot that fails
validation stops the cycle before training and is marked rejected, so it never blocks later cycles.
"""

from __future__ import annotations

import gzip
import json

import pytest


@pytest.fixture(scope="module")
def world(small_world):
    return small_world  # tests/flows/conftest.py: built once, shared with the lineage and cost tests


def _cycle(cfg):
    from flows.cycle import run_cycle

    return run_cycle(str(cfg.home / "postgame.yaml"))


def _method_auto_must_pick(cfg, dataset_uri: str) -> str:
    """What `train.method: auto` must choose for this dataset, from the counts its manifest records, by the rule as
    models/train.py's docstring states it (batch_size 4 here): sft with >= 4 verified completions, else dpo with >= 4
    pairs, else grpo."""
    from postgame.runtime import store

    assert cfg.train.method == "auto" and cfg.train.batch_size == 4
    sha = dataset_uri.rstrip("/").rsplit("/", 1)[-1].removesuffix(".jsonl")
    made = json.loads(store(cfg).get(f"datasets/{sha}.manifest.json"))
    if made["sft_examples"] >= 4:
        return "sft"
    return "dpo" if made["dpo_pairs"] >= 4 else "grpo"


def test_full_cycle_registers_a_champion_traceable_to_its_logs(world, first_cycle):
    from models import registry
    from postgame import ledger
    from postgame.ingest import snapshot_manifest

    _, report = first_cycle
    assert report.status == "completed"
    assert report.train_method == _method_auto_must_pick(world, report.dataset_uri) and report.train_steps == 1
    params = registry.client(world).get_run(registry.get_version(world, report.version).run_id).data.params
    assert params["method"] == report.train_method  # the run that trained says so too
    assert report.version == "1"
    # No champion to beat: the absolute floor decides; this world sets promote.floor -1, so the first candidate wins
    # (tests/unit/test_promote.py covers floor 0, where one that resolves nothing does not).
    assert report.promoted
    assert registry.champion_version(world).version == "1"
    champion = registry.get_version(world, report.version)
    # Lineage: model version -> snapshot -> the log objects it was read from.
    snapshot_ids = champion.tags["lineage.snapshot_ids"].split(",")
    assert snapshot_ids == report.snapshot_ids
    manifest = snapshot_manifest(snapshot_ids[0], cfg=world)
    assert manifest.source_uri.rstrip("/").endswith("agent-logs")
    assert manifest.sources and all(o.key.startswith("dt=") and o.etag for o in manifest.sources)
    assert ledger.status(world, snapshot_ids[0]) == "trained"
    assert report.cost_usd > 0 and report.cpu_seconds > 0


def test_cycle_with_nothing_new_is_skipped(world):
    report = _cycle(world)
    assert report.status == "skipped" and report.snapshot_ids == []


def test_failed_validation_stops_before_training_and_rejects_the_snapshot(world):
    from models import registry
    from postgame import ledger
    from postgame.errors import DataValidationError
    from postgame.runtime import store

    # A log object that is mostly garbage: the quarantine rate (critical, 0.2 by default) fails the gate.
    lines = [b"{not json"] * 9 + [b'{"schema_version": 1}']
    store(world).put("agent-logs/dt=2026-01-01/part-9999.jsonl.gz", gzip.compress(b"\n".join(lines) + b"\n"))
    versions_before = registry.client(world).search_model_versions(f"name='{world.tracking.registered_model}'")
    with pytest.raises(DataValidationError, match="quarantine_rate"):
        _cycle(world)
    versions_after = registry.client(world).search_model_versions(f"name='{world.tracking.registered_model}'")
    assert len(versions_after) == len(versions_before)  # nothing was trained or registered
    assert ledger.pending(world) == []  # the bad snapshot is rejected, not left to block every later cycle
    rejected = [json.loads(store(world).get(i.key)) for i in store(world).list(f"{world.ingest.state_prefix}ledger/")]
    assert any(e["status"] == "rejected" and "quarantine_rate" in e["detail"] for e in rejected)
