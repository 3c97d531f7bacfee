"""Which failures a stage retries: a service that was unavailable (S3, MLflow, the Prefect API: refused connections,
timeouts, HTTP 5xx/429), and nothing else — not bad data, not a failed gate, not a client error.

The errors are the real ones, raised by the real clients against a closed loopback port where that is possible."""

from __future__ import annotations

import boto3
import httpx
import pytest
from botocore.config import Config as BotoConfig
from botocore.exceptions import ClientError

from postgame.errors import DataValidationError, PromotionRejected
from tasks.retry import is_transient
from tests.support import free_port


def _raised(fn) -> BaseException:
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - the test wants whatever the client raised
        return exc
    raise AssertionError("expected an exception")


def _s3_error(status: int, code: str) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "x"}, "ResponseMetadata": {"HTTPStatusCode": status}}, "PutObject"
    )


def test_s3_500_and_throttling_are_transient_403_and_404_are_not():
    assert is_transient(_s3_error(500, "InternalError"))
    assert is_transient(_s3_error(503, "SlowDown"))
    assert is_transient(_s3_error(429, "TooManyRequests"))
    assert not is_transient(_s3_error(403, "AccessDenied"))
    assert not is_transient(_s3_error(404, "NoSuchBucket"))


def test_s3_connection_refused_is_transient():
    s3 = boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{free_port()}",
        region_name="us-east-1",
        aws_access_key_id="k",
        aws_secret_access_key="s",
        config=BotoConfig(retries={"max_attempts": 1}, connect_timeout=1),
    )
    exc = _raised(lambda: s3.list_buckets())
    assert is_transient(exc), type(exc)


def test_mlflow_server_gone_is_transient(monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"http://127.0.0.1:{free_port()}")
    exc = _raised(lambda: client.get_registered_model("m"))
    assert is_transient(exc), repr(exc)


def test_mlflow_rest_errors_by_status():
    from mlflow.exceptions import MlflowException, RestException

    assert is_transient(RestException({"error_code": "TEMPORARILY_UNAVAILABLE", "message": "busy"}))
    assert not is_transient(RestException({"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "no model"}))
    assert not is_transient(RestException({"error_code": "INVALID_PARAMETER_VALUE", "message": "bad"}))
    assert not is_transient(MlflowException("a local mistake"))  # default error code is INTERNAL_ERROR: still not


def test_prefect_api_unreachable_or_5xx_is_transient_4xx_is_not():
    exc = _raised(lambda: httpx.get(f"http://127.0.0.1:{free_port()}/api/health", timeout=2))
    assert is_transient(exc)
    request = httpx.Request("POST", "http://127.0.0.1:1/api/flow_runs/")
    for status, expected in ((500, True), (503, True), (429, True), (404, False), (422, False)):
        err = httpx.HTTPStatusError("x", request=request, response=httpx.Response(status, request=request))
        assert is_transient(err) is expected, status


@pytest.mark.parametrize(
    "exc",
    [
        DataValidationError("critical expectation failed", failed=["expect_column_values_to_not_be_null"]),
        PromotionRejected("candidate does not beat the champion"),
        ValueError("bad data"),
        RuntimeError("CUDA error: the model diverged"),
        KeyError("instance_id"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_bad_data_gates_and_model_failures_are_never_transient(exc):
    assert not is_transient(exc)


def test_a_gate_raised_while_handling_a_connection_error_is_still_not_transient():
    """The gate's verdict wins over whatever it was handling when it was raised."""

    def gate():
        try:
            raise ConnectionRefusedError("earlier")
        except ConnectionRefusedError:
            raise DataValidationError("the data is bad") from None

    assert not is_transient(_raised(gate))


def test_wrapped_connection_error_is_found_down_the_chain():
    def wrapper():
        try:
            raise ConnectionResetError("peer reset")
        except ConnectionResetError as err:
            raise RuntimeError("upload failed") from err

    assert is_transient(_raised(wrapper))


def test_backoff_doubles_with_jitter_and_never_waits_past_the_cap():
    from tasks.retry import backoff_delays

    assert backoff_delays(4, 2.0, 100.0, jitter=0.5, rng=lambda: 0.0) == [2.0, 4.0, 8.0, 16.0]
    assert backoff_delays(4, 2.0, 100.0, jitter=0.5, rng=lambda: 1.0) == [3.0, 6.0, 12.0, 24.0]
    assert backoff_delays(6, 2.0, 10.0, jitter=0.5, rng=lambda: 1.0) == [3.0, 6.0, 10.0, 10.0, 10.0, 10.0]
    assert backoff_delays(0, 2.0, 10.0) == []
