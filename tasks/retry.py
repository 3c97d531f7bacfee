"""When a Prefect task may retry: only when a service was unavailable — the object store (S3), MLflow or the Prefect
API could not be reached, timed out, or answered HTTP 5xx/429. Never on bad data, a failed gate, a model's failure
(training, grading) or a client error (4xx): those fail the same way every time.

    @task(name="ingest", **TRANSIENT_RETRIES)     # retries with exponential backoff + jitter, on transient errors only

`is_transient(exc)` follows the exception's cause chain (`raise ... from`, and the implicit context MLflow leaves when
it wraps a `requests` error). The number of retries is `operate.retries` of the config the task was called with (the
decorator holds the ceiling); the delays double from 2 s.

A client call outside a task (`postgame trigger`) retries the same way with `call_with_retries(fn,
delays=backoff_delays(...))`: `fn` must be safe to repeat (an idempotency key, a read).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from prefect.tasks import exponential_backoff

T = TypeVar("T")

MAX_RETRIES = 10  # the ceiling (`operate.retries` may ask for fewer, never more)
_TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _status_of(exc: BaseException) -> int | None:
    """The HTTP status a server answered with, for the HTTP clients postgame's services are reached through."""
    response = getattr(exc, "response", None)
    for attr in ("status_code", "status"):
        code = getattr(response, attr, None)
        if isinstance(code, int):
            return code
    if isinstance(response, dict):  # botocore ClientError
        code = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return int(code) if code else None
    return None


def _mlflow_verdict(exc: BaseException) -> bool | None:
    """MLflow: a RestException carries the server's status; a wrapped `requests` failure says 'API request to'.
    A plain MlflowException raised on the client (bad argument, missing model) is never transient."""
    try:
        from mlflow.exceptions import MlflowException, RestException
    except ImportError:
        return None
    if not isinstance(exc, MlflowException):
        return None
    if isinstance(exc, RestException) or str(exc).startswith("API request to"):
        status = exc.get_http_status_code()
        if status in _TRANSIENT_STATUS:
            return True
        return None  # look further down the chain: a connection error inside "API request to ... failed"
    return False


def _one(exc: BaseException) -> bool | None:
    """True: transient. False: certainly not (stop looking). None: this link says nothing; look at its cause."""
    from postgame.errors import PostgameError

    transient = getattr(exc, "transient", None)  # postgame's StoreError/ServiceUnavailable judged it where raised
    if isinstance(transient, bool):
        return transient
    if isinstance(exc, PostgameError):  # bad data, a failed gate, a rejected promotion: never
        return False
    if isinstance(exc, (ConnectionError, TimeoutError)):  # refused, reset, aborted, socket timeouts
        return True
    mlflow = _mlflow_verdict(exc)
    if mlflow is not None:
        return mlflow
    status = _status_of(exc)
    if status is not None:
        return status in _TRANSIENT_STATUS
    names = {cls.__module__.split(".")[0] + "." + cls.__name__ for cls in type(exc).__mro__}
    transient_types = {
        # requests (MLflow's client) and urllib3 under it
        "requests.ConnectionError",
        "requests.Timeout",
        "requests.RetryError",
        "requests.ChunkedEncodingError",
        "urllib3.ProtocolError",
        "urllib3.NewConnectionError",
        "urllib3.TimeoutError",
        "urllib3.MaxRetryError",
        # httpx (Prefect's client)
        "httpx.TransportError",
        # botocore (S3)
        "botocore.ConnectionError",
        "botocore.HTTPClientError",
        "botocore.ResponseStreamingError",
        "botocore.IncompleteReadError",
        "botocore.ReadTimeoutError",
        "botocore.ConnectTimeoutError",
    }
    if names & transient_types:
        return True
    code = getattr(exc, "response", None)
    if isinstance(code, dict) and code.get("Error", {}).get("Code") in {
        "SlowDown",
        "Throttling",
        "ServiceUnavailable",
        "InternalError",
        "RequestTimeout",
    }:
        return True
    return None


def is_transient(exc: BaseException) -> bool:
    """True when `exc` (or what caused it) says a service was unavailable; False for everything else."""
    for link in _chain(exc):
        verdict = _one(link)
        if verdict is not None:
            return verdict
    return False


def _configured_retries() -> int:
    """`operate.retries` of the config the running task was called with (its `cfg` parameter)."""
    from prefect.context import TaskRunContext

    ctx = TaskRunContext.get()
    cfg = (ctx.parameters or {}).get("cfg") if ctx else None
    operate = getattr(cfg, "operate", None)
    return operate.retries if operate is not None else 3


def transient_io(task, task_run, state) -> bool:
    """`retry_condition_fn`: retry while the failure is transient and `operate.retries` allows another try."""
    if task_run.run_count > _configured_retries():
        return False
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - classify whatever the task raised
        return is_transient(exc)
    return False


TRANSIENT_RETRIES: dict = dict(
    retries=MAX_RETRIES,
    retry_delay_seconds=exponential_backoff(backoff_factor=2),
    retry_jitter_factor=0.5,
    retry_condition_fn=transient_io,
)


def backoff_delays(
    retries: int, first_s: float, cap_s: float, *, jitter: float = 0.5, rng: Callable[[], float] = random.random
) -> list[float]:
    """The waits before each of `retries` retries: `first_s`, doubling, each stretched by up to `jitter` of itself
    (so that clients that failed together do not retry together) and never longer than `cap_s`."""
    return [min(cap_s, first_s * 2**i * (1 + jitter * rng())) for i in range(retries)]


def call_with_retries(
    fn: Callable[[], T], *, delays: Sequence[float], sleep: Callable[[float], None] = time.sleep
) -> T:
    """`fn()`, tried again after each of `delays` while it fails on a transient error; any other error, or the
    transient one after the last delay, is raised at once."""
    for delay in delays:
        try:
            return fn()
        except Exception as exc:  # classified: everything but a transient error is re-raised at once
            if not is_transient(exc):
                raise
        sleep(delay)
    return fn()
