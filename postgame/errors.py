"""Named errors. Gates raise these; each carries what failed and where to look."""

from __future__ import annotations


class PostgameError(Exception):
    """Base of every error postgame raises on purpose."""


class ConfigError(PostgameError):
    """A config key or value is wrong. The message names the key, the value and what is allowed."""


class StackError(PostgameError):
    """A local service could not start, or a port is taken."""


class DataValidationError(PostgameError):
    """A critical data expectation failed: the cycle stops before training."""

    def __init__(
        self, message: str, failed: list[str] | None = None, docs_uri: str | None = None, report: object | None = None
    ):
        super().__init__(message)
        self.failed = failed or []
        self.docs_uri = docs_uri
        self.report = report  # the full ValidationReport (postgame.validate), for artifacts and MLflow


class PromotionRejected(PostgameError):
    """The promotion gate (or a reviewer) rejected the candidate; `decision` carries the reasons and figures.

    Raised only where `promote.fail_on_reject` asks the cycle to fail; otherwise a rejection is the cycle's reported
    outcome."""

    def __init__(self, message: str, decision: object | None = None):
        super().__init__(message)
        self.decision = decision  # models.promote.Decision


class StaleChampion(PostgameError):
    """A `champion` move was based on a champion that is no longer serving (compare-and-set refused)."""

    def __init__(self, message: str, expected: str | None = None, actual: str | None = None):
        super().__init__(message)
        self.expected = expected
        self.actual = actual


class RollbackError(PostgameError):
    """There is no previous champion to restore, or the named version does not exist."""


class ReviewError(PostgameError):
    """A review names a version that is not awaiting approval."""


class TriggerError(PostgameError):
    """A cycle could not be started through the deployment: there is none, a cycle runs and `operate.concurrency` is
    `refuse`, or the Prefect server rejected the request (a client error such as 404 or 422: retrying cannot help)."""


class CycleFailed(PostgameError):
    """A cycle started through the deployment ended without a report (its flow run failed, crashed or was
    cancelled). The message names the flow run, its state and the error the cycle raised (e.g. PromotionRejected)."""


class ServiceUnavailable(PostgameError):
    """A service of the stack (the object store, MLflow, the Prefect server) did not answer within the configured
    time. Transient: a retry may succeed once it is back. The message names the service and what to do."""

    transient = True

    def __init__(self, message: str, *, service: str = ""):
        super().__init__(message)
        self.service = service


class SnapshotBusy(PostgameError):
    """A snapshot cannot be replaced now (`postgame redact`): a running cycle holds a claim on it."""
