"""Failures of the object store, kept apart from bad data: bad data is quarantined, never raised.

`is_transient_s3_error` is the retry condition of the ingest and validate Prefect tasks: throttling, 5xx, timeouts
and dropped or refused connections are retried; anything else (bad data, a failed gate, access denied, a missing
bucket) is not.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from postgame.errors import PostgameError

_TRANSIENT_CODES = {
    "SlowDown",
    "Throttling",
    "ThrottlingException",
    "RequestLimitExceeded",
    "TooManyRequests",
    "RequestTimeout",
    "RequestTimeoutException",
    "InternalError",
    "ServiceUnavailable",
    "503",
    "500",
    "502",
    "504",
}


class StoreError(PostgameError):
    """The object store could not be read or written. `transient`: worth retrying (the data is not at fault)."""

    def __init__(self, message: str, *, transient: bool):
        super().__init__(message)
        self.transient = transient


def _transient_one(exc: BaseException) -> bool:
    if isinstance(exc, (ConnectionError, TimeoutError)):  # ConnectionResetError, ConnectionRefusedError, ...
        return True
    try:
        from botocore import exceptions as bce
        from urllib3 import exceptions as u3e
    except ImportError:  # boto3 not installed: nothing below can have been raised
        return False
    if isinstance(exc, bce.ClientError):
        error = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return error.get("Code") in _TRANSIENT_CODES or int(status) >= 500 or int(status) == 429
    transient = (
        bce.ConnectionError,
        bce.HTTPClientError,
        bce.ResponseStreamingError,
        bce.IncompleteReadError,
        u3e.ProtocolError,
        u3e.TimeoutError,
        u3e.NewConnectionError,
    )
    return isinstance(exc, transient)


def is_transient_s3_error(exc: BaseException) -> bool:
    """True for throttling, 5xx, timeouts and connection failures (also when wrapped, e.g. in a StoreError)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, StoreError):  # already judged where it was raised
            return current.transient
        if _transient_one(current):
            return True
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return False


def as_store_error(exc: BaseException, where: str) -> StoreError:
    """One clear line for a store failure: what was being done, where, and the first line of the cause."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    transient = is_transient_s3_error(exc)
    hint = " (transient: retry when the store is back)" if transient else ""
    return StoreError(f"object store {where}: {type(exc).__name__}: {reason}{hint}", transient=transient)


def _is_store_failure(exc: BaseException) -> bool:
    try:
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError:
        return isinstance(exc, OSError)
    return isinstance(exc, (BotoCoreError, ClientError, OSError))


@contextmanager
def store_errors(where: str) -> Iterator[None]:
    """Turn boto/OS failures inside the block into one StoreError line (the cause stays chained)."""
    try:
        yield
    except StoreError:
        raise
    except Exception as exc:
        if _is_store_failure(exc):
            raise as_store_error(exc, where) from exc
        raise
