"""The evaluate stage grades through the `runner:` engine when the Prefect task hands it a mapper: on threads and one
by one it grades every instance alike, and as the harness's own thread pool does (gold resolves, an empty patch does
not). Real harness, real sandbox, the harness's example instances."""

from __future__ import annotations

import pytest

from evals.harness import Prediction, load_instances
from evals.harness.examples import INSTANCES_FILE
from evals.harness.examples.build import build_repos
from evals.harness.run import instance_dir_name
from models.evaluate import grade_predictions, outcome_of
from postgame.runners import local_mapper
from postgame.settings.runner import RunnerSettings
from tests.harness_fixtures import quick_settings


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("evaluate-fanout")
    build_repos(root / "repos")
    instances = sorted(load_instances(INSTANCES_FILE), key=lambda i: i.instance_id)[:3]
    predictions = [
        Prediction(instance_id=i.instance_id, model_name_or_path="gold", model_patch="" if n == 2 else i.patch)
        for n, i in enumerate(instances)
    ]

    def grade(runner: RunnerSettings | None):
        name = runner.kind if runner else "harness-pool"
        if runner is None:
            report = grade_predictions(quick_settings(), instances, predictions, root / name, repos_dir=root / "repos")
        else:
            with local_mapper(runner) as mapper:
                report = grade_predictions(
                    quick_settings(), instances, predictions, root / name, repos_dir=root / "repos", mapper=mapper
                )
        outcomes = [outcome_of(report.results[i.instance_id], "examples") for i in instances]
        return report, outcomes, root / name

    return instances, grade


def test_thread_runner_and_serial_give_the_same_per_instance_results(graded):
    instances, grade = graded
    serial, serial_outcomes, serial_dir = grade(RunnerSettings(kind="serial"))
    thread, thread_outcomes, thread_dir = grade(RunnerSettings(kind="thread", workers=2))
    pool, pool_outcomes, _ = grade(None)

    assert [o.resolved for o in serial_outcomes] == [True, True, False]  # gold, gold, empty patch
    assert thread_outcomes == serial_outcomes == pool_outcomes
    assert thread.resolved_ids == serial.resolved_ids and not thread.error_ids
    for instance in instances:  # the same per-instance files, written by the caller
        name = instance_dir_name(instance.instance_id)
        assert (thread_dir / name / "patch.diff").read_text() == (serial_dir / name / "patch.diff").read_text()
        assert (thread_dir / name / "report.json").is_file()
