"""Ingest and a small evaluation submitted through prefect-dask's DaskTaskRunner (a two-worker LocalCluster, started
from `runner: {kind: dask}` as a user's config would) give exactly what the default runner (local processes) gives:
the same snapshot id and counts, the same grades.

Real Prefect (one test harness server for the module), real Dask, the harness's own example instances.

The flow is a module-level function on purpose. Under a task runner that pickles, Prefect ships the flow run's
context with every task run, and that context holds the flow object: a flow defined inside a test function is pickled
by value, closure included (here it once closed over the started DaskTaskRunner, whose client holds asyncio tasks:
"cannot pickle '_asyncio.Task'"). A module-level flow is pickled by reference.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect import flow

from evals.harness import Prediction, load_instances
from evals.harness.examples import INSTANCES_FILE
from evals.harness.examples.build import build_repos
from postgame.ingest.pipeline import IngestSummary, ingest
from postgame.runners import prefect_mapper
from postgame.settings.ingest import IngestSettings
from postgame.settings.runner import RunnerSettings
from postgame.store import LocalStore
from tests.data.test_quarantine_counts import build_corpus
from tests.harness_fixtures import quick_settings

RUNNERS = {"dask": RunnerSettings(kind="dask", workers=2), "default": RunnerSettings(kind="process", workers=2)}


@pytest.fixture(scope="module")
def prefect_api():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=600):
        yield


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> tuple[Path, dict]:
    """The dirty corpus of test_quarantine_counts (with what ingest must report) and the example repositories."""
    root = tmp_path_factory.mktemp("fanout")
    expected = build_corpus(root / "logs")
    build_repos(root / "repos")
    return root, expected


def instances_and_predictions():
    """Three example instances: two gold patches (resolved) and one empty patch (unresolved, nothing run)."""
    instances = sorted(load_instances(INSTANCES_FILE), key=lambda i: i.instance_id)[:3]
    predictions = [
        Prediction(instance_id=i.instance_id, model_name_or_path="gold", model_patch="" if n == 2 else i.patch)
        for n, i in enumerate(instances)
    ]
    return instances, predictions


def where(_: int) -> str:
    """Which Dask worker ran this unit of work ("" outside a Dask worker)."""
    from distributed import get_worker

    try:
        return get_worker().address
    except ValueError:
        return ""


@flow(name="fanout-test")
def fan_out(root: str, runner: str) -> tuple[IngestSummary, object, set[str]]:
    from evals.harness.fanout import evaluate_instances

    top = Path(root)
    instances, predictions = instances_and_predictions()
    with prefect_mapper(RUNNERS[runner]) as mapper:
        summary = ingest(
            LocalStore(top / "logs"),
            "",
            state=LocalStore(top / runner / "store"),
            settings=IngestSettings(batch_rows=10),
            workdir=top / runner / "tmp",
            source_uri="logs",
            mapper=mapper,
        )
        workers = set(mapper(where, range(4)))
    with prefect_mapper(RUNNERS[runner]) as mapper:
        report = evaluate_instances(
            instances,
            predictions,
            repos_dir=top / "repos",
            out_dir=top / runner / "eval",
            settings=quick_settings(),
            mapper=mapper,
        )
    return summary, report, workers


def _grades(report) -> dict:
    return {iid: {k: v for k, v in r.items() if k not in ("seconds",)} for iid, r in report.instances.items()}


def test_ingest_and_evaluation_on_dask_match_the_default_runner(prefect_api, world):
    root, expected = world
    dask_summary, dask_report, dask_workers = fan_out(str(root), "dask")
    assert len(dask_workers) >= 1 and "" not in dask_workers  # the units of work ran on Dask workers
    default_summary, default_report, default_workers = fan_out(str(root), "default")

    assert default_workers == {""}
    assert default_summary.records_ingested == expected["records"]
    assert default_summary.quarantined == expected["quarantined"]
    assert dask_summary.model_dump(exclude={"snapshot_uri", "manifest_uri"}) == default_summary.model_dump(
        exclude={"snapshot_uri", "manifest_uri"}
    )
    assert len(default_report.resolved_ids) == 2 and default_report.empty_patch_ids  # gold resolves, empty does not
    assert dask_report.resolved_ids == default_report.resolved_ids
    assert dask_report.unresolved_ids == default_report.unresolved_ids and not dask_report.error_ids
    assert _grades(dask_report) == _grades(default_report)
