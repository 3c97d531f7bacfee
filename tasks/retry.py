"""When a Prefect task may retry: only on transient I/O (S3 throttling, 5xx, connection resets), never on bad data,
a failed gate, training or grading."""

from __future__ import annotations


def transient_io(task, task_run, state) -> bool:
    """`retry_condition_fn` for tasks that talk to the object store or a server."""
    from postgame.ingest import is_transient_s3_error

    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - classify whatever the task raised
        return is_transient_s3_error(exc)
    return False
