"""The retry and resume decorators on real Prefect tasks (its in-process API): a transient error (S3 500, connection
refused) is retried up to `operate.retries` times, a DataValidationError never; a stage that finished in a failed
flow run is not run again by the next flow run (INPUTS + TASK_SOURCE in the saved result-storage block), the stage that
failed is."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from postgame.config import Config
from postgame.errors import DataValidationError
from tests.support import make_config


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory):
    from prefect.settings import PREFECT_HOME, PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with temporary_settings(
        updates={
            PREFECT_HOME: str(tmp_path_factory.mktemp("prefect-home")),
            PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS: 300,
        }
    ):
        with prefect_test_harness(server_startup_timeout=300):
            yield


def _s3_500() -> ClientError:
    return ClientError(
        {"Error": {"Code": "InternalError", "Message": "x"}, "ResponseMetadata": {"HTTPStatusCode": 500}}, "GetObject"
    )


def _run(cfg: Config, failures: list[BaseException]) -> tuple[str, int]:
    from prefect import flow, task

    from tasks.retry import TRANSIENT_RETRIES

    calls = []

    @task(**TRANSIENT_RETRIES)
    def stage(cfg: Config) -> str:
        calls.append(1)
        if len(calls) <= len(failures):
            raise failures[len(calls) - 1]
        return "done"

    @flow
    def cycle(cfg: Config) -> str:
        return stage.with_options(retry_delay_seconds=0, retry_jitter_factor=None)(cfg)

    try:
        return cycle(cfg), len(calls)
    except Exception as exc:  # noqa: BLE001 - the test looks at what ended the flow
        return type(exc).__name__, len(calls)


def test_s3_500_and_connection_refused_are_retried(prefect_api, tmp_path):
    cfg = make_config(tmp_path, operate={"retries": 3})
    assert _run(cfg, [_s3_500(), ConnectionRefusedError("store down")]) == ("done", 3)


def test_retries_stop_at_operate_retries(prefect_api, tmp_path):
    cfg = make_config(tmp_path, operate={"retries": 2})
    assert _run(cfg, [ConnectionRefusedError("down")] * 5) == ("ConnectionRefusedError", 3)


def test_a_data_validation_error_is_never_retried(prefect_api, tmp_path):
    cfg = make_config(tmp_path, operate={"retries": 3})
    assert _run(cfg, [DataValidationError("critical expectation failed")]) == ("DataValidationError", 1)


def test_a_new_flow_run_resumes_at_the_stage_that_failed(prefect_api, tmp_path):
    from prefect import flow, task

    from tasks.resume import RESUMABLE, save_result_storage

    cfg = make_config(tmp_path)
    save_result_storage(cfg)
    ran: list[str] = []
    broken = {"evaluate": True}

    @task(**RESUMABLE)
    def train(cfg: Config, data: str) -> str:
        ran.append("train")
        return f"model({data})"

    @task(**RESUMABLE)
    def evaluate(cfg: Config, model: str) -> float:
        ran.append("evaluate")
        if broken["evaluate"]:
            raise RuntimeError("the grader crashed")
        return 0.5

    @flow(persist_result=True)
    def cycle(cfg: Config, data: str) -> float:
        return evaluate(cfg, train(cfg, data))

    with pytest.raises(RuntimeError):
        cycle(cfg, "snapshot-1")
    broken["evaluate"] = False
    assert cycle(cfg, "snapshot-1") == 0.5  # a new flow run
    assert ran == ["train", "evaluate", "evaluate"]  # train was not redone; evaluate ran again
    assert list((cfg.home / "results").iterdir())  # the results live under home, in the saved block's folder
    cycle(cfg, "snapshot-2")  # other inputs: a new key, nothing stale reused
    assert ran[-2:] == ["train", "evaluate"]
