"""What the loop tells its users: where a model came from, and what the cycles cost and gained.

postgame lineage VERSION [--json]      # VERSION: a number or an alias (champion); exit 1 when a link is broken
postgame report [--out DIR] [--json]   # markdown + PNG charts of every cycle so far (default DIR: <home>/report)
"""

from __future__ import annotations

from pathlib import Path

import typer

from postgame import runtime
from postgame.console import echo_json, progress_bar, quiet_stdout


def lineage(
    version: str = typer.Argument(..., help="A model version number, or an alias such as `champion`."),
    as_json: bool = typer.Option(False, "--json", help="Print the chain as JSON."),
) -> None:
    """The chain from a model version back to the raw log objects (keys and ETags), every hop checked.

    While it follows the chain, a spinner on stderr (on a terminal, without --json)."""
    from postgame.lineage import follow

    with quiet_stdout(as_json), progress_bar("lineage", None, enabled=not as_json) as tell:
        tell(f"following {version} back to the raw log objects", 0)
        chain = follow(runtime.current_config(), version)
    if as_json:
        echo_json(chain.to_dict())
    else:
        typer.echo(chain.text())
    if not chain.ok:
        raise typer.Exit(1)


def report(
    out: Path | None = typer.Option(
        None, "--out", help="Folder for report.md and the PNG charts (default: <home>/report)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print every cycle's report as JSON."),
) -> None:
    """Every cycle so far: champion resolve rate with its interval, cost, intelligence per dollar, cost per 1M tokens.

    While it reads and draws, a spinner naming the phase on stderr (on a terminal, without --json)."""
    from postgame.report import history, measured_chance, write_report

    cfg = runtime.current_config()
    with quiet_stdout(as_json), progress_bar("report", None, enabled=not as_json) as tell:
        tell("reading the cycles' runs", 0)
        reports = history(cfg)
        tell(f"{len(reports)} cycles read; measuring chance", 0)
        chance = measured_chance(cfg)
        tell("writing the report and its charts", 0)
        written = write_report(reports, out or cfg.home / "report", chance)
    if as_json:
        echo_json(
            {
                "report": str(written.markdown),
                "charts": [str(p) for p in written.charts],
                "cycles": [r.model_dump(mode="json") for r in reports],
            }
        )
        return
    typer.echo(written.markdown.read_text().split("\n## ", 1)[0].strip())
    typer.echo(f"\nreport: {written.markdown}")
    for chart in written.charts:
        typer.echo(f"chart:  {chart}")


def register(app: typer.Typer) -> None:
    app.command()(lineage)
    app.command()(report)
