"""Command of the validate stage.

    postgame validate --snapshot ID [--json]     # ID: full id, a unique prefix, or `latest`

Runs the contract's expectations and the batch checks, writes Data Docs. Exit code 0 when no critical expectation
failed (warnings are printed), 1 when one did (`error: DataValidationError: ...` names them), never a traceback for
bad data. With --json the report is printed either way.
"""

from __future__ import annotations

import typer


def validate(
    snapshot: str = typer.Option("latest", "--snapshot", help="Snapshot id, unique prefix, or latest."),
    as_json: bool = typer.Option(False, "--json", help="Print the validation report as JSON."),
) -> None:
    """Validate a snapshot against the contract and the previous snapshot; critical failures exit 1.

    While it runs, a spinner naming the phase (and batch) on stderr (on a terminal, without --json)."""
    from postgame import runtime
    from postgame.console import progress_bar
    from postgame.errors import DataValidationError
    from postgame.validate.report import ValidationReport
    from postgame.validate.run import validate_snapshot

    try:
        with progress_bar("validate", None, enabled=not as_json) as tell:
            report = validate_snapshot(snapshot, cfg=runtime.current_config(), progress=tell)
    except DataValidationError as exc:
        if as_json and isinstance(exc.report, ValidationReport):  # the gate attaches its report
            typer.echo(exc.report.model_dump_json(indent=2))
        raise
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    typer.echo(
        f"snapshot {report.snapshot_id}: passed, {len(report.results)} expectations, "
        f"{len(report.warnings)} warning(s); drift {report.drift_note}"
    )
    for warning in report.warnings:
        typer.echo(f"  warning  {warning.name}: {warning.description} (observed {warning.observed})")
    typer.echo(f"Data Docs: {report.docs_path}")


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
