"""Lineage and cost of a real cycle (the shared first cycle of tests/flows/conftest.py: ephemeral Prefect, SQLite
MLflow, a folder store).

- `postgame lineage` of the promoted version names the exact log object keys and ETags the snapshot read, and every
  hop resolves: each URI exists and its content still matches the recorded hash. A changed object breaks the chain.
- The cycle's cost is exactly the sum of its recorded parts, the serving part is the snapshot's logged usage, and
  intelligence per dollar is the gain over the base policy on the same instances, divided by that cost.
"""

from __future__ import annotations

import json
import os

import pytest


def _cli(cfg, *args):
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.getcwd(), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "postgame", "--config", str(cfg.home / "postgame.yaml"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def test_lineage_of_the_promoted_version_names_its_log_objects_and_resolves_every_hop(first_cycle):
    from postgame.ingest import snapshot_manifest

    cfg, report = first_cycle
    assert report.promoted and report.version == "1"
    done = _cli(cfg, "lineage", "champion", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    chain = json.loads(done.stdout)
    assert chain["ok"] and chain["version"] == "1"
    kinds = [h["kind"] for h in chain["hops"]]
    assert kinds[:4] == ["model_version", "eval_report", "training_run", "dataset"]
    assert kinds.count("snapshot") == len(report.snapshot_ids) >= 1
    manifest = snapshot_manifest(report.snapshot_ids[0], cfg=cfg)
    named = {(h["name"], h["recorded"]) for h in chain["hops"] if h["kind"] == "log_object"}
    assert named == {(o.key, o.etag) for o in manifest.sources}  # the exact keys and ETags the snapshot read
    assert all(h["ok"] for h in chain["hops"])
    pinned = {h["kind"]: h["recorded"] for h in chain["hops"]}
    assert len(pinned["model_version"]) == 64 and len(pinned["eval_report"]) == 64  # content hashes, not names
    assert all(h["code_version"] and h["config_sha256"] for h in chain["hops"][:4])
    from postgame.lineage import config_sha256

    assert [h["config_sha256"] for h in chain["hops"] if h["kind"] == "snapshot"] == [config_sha256(cfg)] * len(
        report.snapshot_ids
    )  # the snapshot hop names the config that ingested it
    text = _cli(cfg, "lineage", "1")
    assert text.returncode == 0 and all(o.key in text.stdout for o in manifest.sources)


def test_a_changed_log_object_or_dataset_breaks_the_chain(first_cycle):
    from postgame.ingest import snapshot_manifest
    from postgame.lineage import follow
    from postgame.runtime import store

    cfg, report = first_cycle
    manifest = snapshot_manifest(report.snapshot_ids[0], cfg=cfg)
    log_file = store(cfg).root / "agent-logs" / manifest.sources[0].key
    stat = log_file.stat()
    dataset_key = report.dataset_uri.rsplit("/datasets/", 1)[1]
    original = store(cfg).get(f"datasets/{dataset_key}")
    try:
        os.utime(log_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a re-upload: a new ETag
        store(cfg).put(f"datasets/{dataset_key}", original + b"\n")
        chain = follow(cfg, report.version)
        broken = {h.kind: h for h in chain.broken}
        assert not chain.ok and set(broken) == {"log_object", "dataset"}, chain.text()
        assert broken["log_object"].name == manifest.sources[0].key
    finally:
        os.utime(log_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        store(cfg).put(f"datasets/{dataset_key}", original)
    assert follow(cfg, report.version).ok


def test_cycle_cost_is_the_sum_of_its_parts_and_gain_is_over_the_base_on_the_same_instances(first_cycle):
    import pyarrow.parquet as pq
    from mlflow import MlflowClient

    from models import registry
    from postgame.ingest import snapshot_manifest
    from postgame.runtime import resolve, store

    cfg, report = first_cycle
    cost = report.cost
    # the parts, as recorded, priced with the configured prices
    assert cost.cpu_usd == report.cpu_seconds / 3600 * cfg.cost.usd_per_cpu_hour and report.cpu_seconds > 0
    assert cost.gpu_usd == 0.0 and report.gpu_seconds == 0.0  # train.use_gpu is off
    usage = []
    for snapshot_id in report.snapshot_ids:
        m = snapshot_manifest(snapshot_id, cfg=cfg)
        usage += pq.read_table(store(cfg).root / m.data.key, columns=["usage"]).column("usage").to_pylist()
    assert cost.serving == "logged" and cost.serving_usd == sum(u["cost_usd"] for u in usage) > 0
    assert report.usage.completion_tokens == sum(u["completion_tokens"] for u in usage)
    # the total is exactly their sum, in the report and in the MLflow run
    assert report.cost_usd == cost.total_usd == cost.cpu_usd + cost.gpu_usd + cost.serving_usd
    metrics = MlflowClient(tracking_uri=resolve(cfg).tracking_uri).get_run(report.run_id).data.metrics
    assert metrics["cycle.cost_usd"] == pytest.approx(
        metrics["cycle.cost.cpu_usd"] + metrics["cycle.cost.gpu_usd"] + metrics["cycle.cost.serving_usd"], rel=1e-12
    )
    assert report.cost_per_1m_tokens == report.cost_usd / report.usage.completion_tokens * 1e6
    # gain: over the base policy (no champion before), measured on the very instances the candidate was scored on
    champion = registry.champion_version(cfg)
    assert report.baseline == "base" and report.baseline_metric is not None
    assert champion.tags["eval.set_sha256"] == report.eval_set_sha256
    assert report.scores[0].baselines["base"] == report.baseline_metric
    base_run = json.loads(
        (cfg.home / "runs" / "baselines" / f"base-{report.eval_set_sha256[:12]}" / "report.json").read_text()
    )  # the base really answered those instances
    assert len(base_run["resolved_ids"]) / report.scores[0].instances == report.baseline_metric
    assert report.gain == (report.candidate_metric - report.baseline_metric) * 100
    assert report.intelligence_per_dollar == report.gain / report.cost_usd
    assert champion.tags["cycle.cost_usd"] == f"{report.cost_usd:.6f}"


def test_report_command_writes_markdown_and_charts_of_every_cycle(first_cycle, tmp_path):
    cfg, report = first_cycle
    done = _cli(cfg, "report", "--out", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert report.run_id in [c["run_id"] for c in data["cycles"]]
    assert {os.path.basename(p) for p in data["charts"]} == {
        "resolve_rate.png",
        "cost.png",
        "intelligence.png",
        "tokens.png",
    }
    assert all(os.path.getsize(p) > 5000 for p in data["charts"])
    text = (tmp_path / "report.md").read_text()
    assert "![Champion resolve rate](resolve_rate.png)" in text and "| 1 |" in text


def test_cycle_command_prints_its_flow_run_stages_decision_and_cost(first_cycle):
    cfg, _ = first_cycle
    done = _cli(cfg, "cycle", "--json")  # nothing new since the first cycle: a quick, skipped cycle
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # stdout holds the JSON alone: library output went to the log file
    assert report["status"] == "skipped" and len(report["flow_run_id"]) == 36 and report["stages"]["ingest"]
    assert {"cost_usd", "cost", "gain", "intelligence_per_dollar", "decision", "flow_run_url"} <= set(report)
    assert report["cycle"] >= 2 and report["cost_usd"] == report["cost"]["total_usd"]
    text = _cli(cfg, "cycle")
    assert text.returncode == 0 and text.stdout.startswith(f"cycle {report['cycle'] + 1} (flow run ")
    assert "cost $" in text.stdout and "pts/$" in text.stdout and "Finished in state" not in text.stdout


def test_the_cycle_flow_run_carries_its_report_and_lineage_as_artifacts(first_cycle):
    from uuid import UUID

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId
    from prefect.settings import temporary_settings

    from flows.cycle import prefect_settings

    cfg, report = first_cycle
    with temporary_settings(updates=prefect_settings(cfg)), get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[UUID(report.flow_run_id)]))
        )
    by_key = {a.key: a for a in found}
    assert {"cycle-report", "cycles", "lineage"} <= set(by_key)
    data = by_key["lineage"].data
    rows = data if isinstance(data, list) else json.loads(data)
    assert [r["step"] for r in rows][:4] == ["model_version", "eval_report", "training_run", "dataset"]
    assert all(r["ok"] == "yes" for r in rows)
