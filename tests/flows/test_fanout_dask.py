"""Ingest and a small evaluation submitted through prefect-dask's DaskTaskRunner (a two-worker LocalCluster) give
exactly what the default runner (local processes) gives: the same snapshot id and counts, the same grades.

Real Prefect (one test harness server for the module), real Dask, the harness's own example instances.
"""

from __future__ import annotations

import pytest

from evals.harness import Prediction, load_instances
from evals.harness.examples import INSTANCES_FILE
from evals.harness.examples.build import build_repos
from postgame.ingest.pipeline import ingest
from postgame.runners import prefect_mapper
from postgame.settings.ingest import IngestSettings
from postgame.settings.runner import RunnerSettings
from postgame.store import LocalStore
from tests.data.test_quarantine_counts import build_corpus
from tests.harness_fixtures import quick_settings


@pytest.fixture(scope="module")
def prefect_api():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=600):
        yield


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("fanout")
    build_corpus(root / "logs")
    build_repos(root / "repos")
    instances = sorted(load_instances(INSTANCES_FILE), key=lambda i: i.instance_id)[:3]
    predictions = [Prediction(instance_id=i.instance_id, model_name_or_path="gold",
                              model_patch="" if n == 2 else i.patch) for n, i in enumerate(instances)]
    return root, instances, predictions


def dask_runner():
    """A small in-process LocalCluster (2 workers, threads): what a test can afford; a real cluster is an address."""
    from prefect_dask import DaskTaskRunner

    return DaskTaskRunner(cluster_class="distributed.LocalCluster",
                          cluster_kwargs={"n_workers": 2, "threads_per_worker": 1, "processes": False,
                                          "dashboard_address": None})


def run_both(world, name: str, runner):
    from prefect import flow

    from tasks.fanout import evaluate_instances

    root, instances, predictions = world

    @flow(name=f"fanout-{name}")
    def fan_out():
        with prefect_mapper(RunnerSettings(kind="process", workers=2), runner=runner) as mapper:
            summary = ingest(LocalStore(root / "logs"), "", state=LocalStore(root / name / "store"),
                             settings=IngestSettings(batch_rows=10), workdir=root / name / "tmp",
                             source_uri="logs", mapper=mapper)
        with prefect_mapper(RunnerSettings(kind="process", workers=2), runner=runner) as mapper:
            report = evaluate_instances(instances, predictions, repos_dir=root / "repos", out_dir=root / name / "eval",
                                        settings=quick_settings(), mapper=mapper)
        return summary, report

    return fan_out()


def _grades(report) -> dict:
    return {iid: {k: v for k, v in r.items() if k not in ("seconds",)} for iid, r in report.instances.items()}


@pytest.mark.xfail(strict=True, reason="under pytest, Dask refuses to pickle the task body by name ('not the same "
                   "object as postgame.runners.apply'); the same flow passes in a plain script (issue 14 report)")
def test_ingest_and_evaluation_on_dask_match_the_default_runner(prefect_api, world):
    dask_summary, dask_report = run_both(world, "dask", dask_runner())
    default_summary, default_report = run_both(world, "default", None)

    assert default_summary.records_ingested > 40 and sum(default_summary.quarantined.values()) > 20
    assert dask_summary.model_dump(exclude={"snapshot_uri", "manifest_uri"}) == default_summary.model_dump(
        exclude={"snapshot_uri", "manifest_uri"})
    assert len(default_report.resolved_ids) == 2 and default_report.empty_patch_ids  # gold resolves, empty does not
    assert dask_report.resolved_ids == default_report.resolved_ids
    assert dask_report.unresolved_ids == default_report.unresolved_ids and not dask_report.error_ids
    assert _grades(dask_report) == _grades(default_report)
