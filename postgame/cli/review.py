"""Commands of a reviewer: approve or reject a version awaiting approval, roll the champion back.

    postgame review approve VERSION [--comment TEXT] [--json]   # record it; resume the cycle waiting on it, if any
    postgame review reject VERSION [--comment TEXT] [--json]
    postgame rollback [--to V] [--why TEXT] [--json]            # restore the previous (or a named) champion

A version awaits approval when it passed the gate with `promote.require_approval` on (tag `approval=pending`). When a
cycle is paused on it, the answer resumes that flow run (it then moves `champion` itself); otherwise it is recorded
here and `champion` moves here (compare-and-set against the champion the version was compared with).
"""

from __future__ import annotations

import typer

from postgame import runtime
from postgame.console import echo_json, quiet_stdout

review_app = typer.Typer(no_args_is_help=True, help="Approve or reject a model version awaiting approval.")


def _review(version: str, approve: bool, comment: str, as_json: bool) -> None:
    from models import registry
    from models.promote import Review, record_review
    from postgame.errors import ReviewError

    cfg = runtime.current_config()
    with quiet_stdout(as_json):
        info = registry.get_version(cfg, version)
        state = info.tags.get("approval")
        if state != "pending" or "approval.at" in info.tags:
            raise ReviewError(
                f"v{version} of {cfg.tracking.registered_model} is not awaiting approval "
                f"(approval = {state or 'unset'})"
            )
        by = registry.actor()
        answer = {"approve": approve, "comment": comment, "reviewer": by, "via": "cli"}
        flow_run_id = info.tags.get("approval.flow_run_id", "")
        resumed = bool(flow_run_id) and _resume(cfg, flow_run_id, answer)
        promotion = None if resumed else record_review(cfg, version, Review(approve, comment, by, "cli"))
    verdict = "approved" if approve else "rejected"
    if as_json:
        echo_json(
            {
                "version": version,
                "verdict": verdict,
                "resumed_flow_run": flow_run_id if resumed else None,
                "outcome": promotion.outcome if promotion else None,
                "champion_version": promotion.champion_version if promotion else None,
            }
        )
    elif resumed:
        typer.echo(f"v{version} {verdict}; resumed flow run {flow_run_id}, which records it and moves champion")
    else:
        assert promotion is not None
        typer.echo(f"v{version} {verdict}: {promotion.outcome}; champion is v{promotion.champion_version}")


def _resume(cfg, flow_run_id: str, answer: dict) -> bool:
    """Resume the flow run on the stack's Prefect server (a cycle run in-process has no API to reach)."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from tasks.promote import resume_review

    api = runtime.resolve(cfg).prefect_api_url
    if not api:
        return False
    with temporary_settings(updates={PREFECT_API_URL: api}):
        return resume_review(flow_run_id, answer)


@review_app.command("approve")
def approve(
    version: str = typer.Argument(..., help="The model version awaiting approval."),
    comment: str = typer.Option("", "--comment", help="Why (recorded on the version)."),
    as_json: bool = typer.Option(False, "--json", help="Print the outcome as JSON."),
) -> None:
    """Approve a version that passed the gate: it becomes champion."""
    _review(version, True, comment, as_json)


@review_app.command("reject")
def reject(
    version: str = typer.Argument(..., help="The model version awaiting approval."),
    comment: str = typer.Option("", "--comment", help="Why (recorded on the version)."),
    as_json: bool = typer.Option(False, "--json", help="Print the outcome as JSON."),
) -> None:
    """Reject a version that passed the gate: the champion stays."""
    _review(version, False, comment, as_json)


def rollback(
    to: str | None = typer.Option(
        None,
        "--to",
        help="Version to restore (default: the champion before the "
        "current one in the promotion line, never one rolled back from).",
    ),
    why: str = typer.Option("", "--why", help="Why (recorded in the champion history)."),
    as_json: bool = typer.Option(False, "--json", help="Print the move as JSON."),
) -> None:
    """Restore the previous (or a named) champion; the move is recorded with who and why. Again, it goes one further
    back; with none left it exits 1 with one line (RollbackError)."""
    from models import registry

    cfg = runtime.current_config()
    with quiet_stdout(as_json):
        move = registry.rollback(cfg, to=to, why=why)
    if as_json:
        echo_json(move.to_dict())
    else:
        typer.echo(f"champion: v{move.from_} -> v{move.to} ({move.why}; by {move.by})")


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")
    app.command()(rollback)
