"""Promote: register the candidate, decide, move `champion` if it won (`models.promote`) — and, with
`promote.require_approval`, wait for a reviewer before moving it.

The approval step (`await_approval`, called by the flow right after `promote`) pauses the flow run with a typed input
form (`ReviewInput`: approve / reject + comment) in the Prefect UI. While it is paused a watcher polls the version's
MLflow tag `approval` (`approved` / `rejected`, with `approval.comment` and `approval.by`): whichever answer comes
first resumes the run. No answer within `promote.approval_timeout_s` rejects. `postgame review approve|reject V`
sets the tag and resumes the waiting run itself (`resume_review`).
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time

from prefect import task
from prefect.input import RunInput
from prefect.runtime import flow_run
from pydantic import Field

from models.evaluate import Evaluation
from models.promote import Outcome, Promotion, Review, promote_candidate, record_review
from models.train import Candidate
from postgame.config import Config
from postgame.errors import PromotionRejected
from tasks.resume import RESUMABLE
from tasks.retry import TRANSIENT_RETRIES

log = logging.getLogger("postgame.promote")


# Cached: a re-run after promote finished never registers the same candidate twice. Retried only when MLflow was
# unreachable (a version registered before the outage stays a plain version; `champion` moves once).
@task(name="promote", **RESUMABLE, **TRANSIENT_RETRIES)
def promote(cfg: Config, candidate: Candidate, evaluation: Evaluation) -> Promotion:
    promotion = promote_candidate(cfg, candidate, evaluation, flow_run_id=flow_run.get_id())
    return _enforce(cfg, promotion)


class ReviewInput(RunInput):
    """The form a reviewer fills in to resume a cycle waiting for approval."""

    approve: bool = Field(description="Approve: this version becomes champion. Leave unticked to reject.")
    comment: str = Field("", description="Why (recorded on the model version).")
    reviewer: str = Field("", description="Who is reviewing.")
    via: str = Field("prefect-ui", description="Where the answer came from (filled in by postgame).")


def await_approval(cfg: Config, promotion: Promotion) -> Promotion:
    """The cycle's approval step: a no-op unless the gate passed and `promote.require_approval` is on."""
    if promotion.outcome != Outcome.AWAITING_APPROVAL.value:
        return promotion
    review = wait_for_review(cfg, promotion.version, promotion.decision.reason)
    return _enforce(cfg, record_verdict(cfg, promotion.version, review))


@task(name="record-review")
def record_verdict(cfg: Config, version: str, review: Review) -> Promotion:
    return record_review(cfg, version, review)


def _enforce(cfg: Config, promotion: Promotion) -> Promotion:
    if promotion.outcome == Outcome.REJECTED.value and cfg.promote.fail_on_reject:
        raise PromotionRejected(
            f"version {promotion.version} rejected: {promotion.decision.reason}", promotion.decision
        )
    return promotion


def wait_for_review(cfg: Config, version: str, reason: str) -> Review:
    """Pause this flow run until a reviewer answers (Prefect form or MLflow tag) or the timeout rejects."""
    from prefect.exceptions import FlowPauseTimeout
    from prefect.flow_runs import pause_flow_run

    from models import registry

    p = cfg.promote
    run_id = flow_run.get_id()
    registry.tag_version(cfg, version, {"approval": "pending", "approval.flow_run_id": run_id or ""})
    stop = threading.Event()
    deadline = time.monotonic() + p.approval_timeout_s
    context = contextvars.copy_context()  # the Prefect settings (API URL) this flow run uses
    watcher = threading.Thread(
        target=context.run,
        args=(_watch_mlflow_tag, cfg, version, run_id, deadline, stop),
        name=f"approval-v{version}",
        daemon=True,
    )
    watcher.start()
    form = ReviewInput.with_initial_data(
        description=f"Version {version} of {cfg.tracking.registered_model} passed the gate: {reason}\n\n"
        f"Approve to make it champion, or reject. (Or set the MLflow tag `approval` on the version.)",
        approve=False,
        comment="",
        reviewer="",
    )
    try:
        answer = pause_flow_run(
            wait_for_input=form,
            timeout=int(p.approval_timeout_s) + 60,
            poll_interval=max(1, int(p.approval_poll_s)),
            key=f"approval-v{version}",
        )
    except FlowPauseTimeout:
        return Review(False, f"no review within {p.approval_timeout_s:.0f} s", "timeout", "timeout")
    finally:
        stop.set()
    return Review(
        approve=answer.approve,
        comment=answer.comment,
        by=answer.reviewer or "prefect-ui user",
        via=answer.via or "prefect-ui",
    )


def _watch_mlflow_tag(
    cfg: Config, version: str, flow_run_id: str | None, deadline: float, stop: threading.Event
) -> None:
    """Resume the paused run with the MLflow tag's verdict, or with a rejection once the deadline passes."""
    from models import registry

    while not stop.wait(cfg.promote.approval_poll_s if time.monotonic() < deadline else 0.5):
        try:
            tags = registry.get_version(cfg, version).tags
        except Exception as exc:  # noqa: BLE001 - a registry outage must not end the wait; the timeout still rules
            log.warning("approval watcher: cannot read v%s (%s)", version, exc)
            continue
        verdict = tags.get("approval")
        if verdict in ("approved", "rejected"):
            answer = {
                "approve": verdict == "approved",
                "comment": tags.get("approval.comment", ""),
                "reviewer": tags.get("approval.by", "mlflow-ui user"),
                "via": "mlflow-tag",
            }
        elif time.monotonic() >= deadline:
            answer = {
                "approve": False,
                "comment": f"no review within {cfg.promote.approval_timeout_s:.0f} s",
                "reviewer": "timeout",
                "via": "timeout",
            }
        else:
            continue
        if flow_run_id and resume_review(flow_run_id, answer):
            return


def resume_review(flow_run_id: str, answer: dict) -> bool:
    """Resume a flow run paused for approval with `answer` (ReviewInput's fields); False if it is not paused."""
    from uuid import UUID

    from prefect.exceptions import FlowPauseTimeout, NotPausedError
    from prefect.flow_runs import resume_flow_run

    try:
        resume_flow_run(UUID(flow_run_id), run_input=answer)
    except (NotPausedError, FlowPauseTimeout, RuntimeError, ValueError) as exc:
        log.info("flow run %s not resumed: %s", flow_run_id, exc)
        return False
    return True
