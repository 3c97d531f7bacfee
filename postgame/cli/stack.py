"""The local stack's commands.

    postgame up        # start Prefect, MLflow and SeaweedFS on loopback (idempotent) and print their URLs
    postgame down      # stop every process the stack started
    postgame status [--json]
"""

from __future__ import annotations

import typer

from postgame import runtime
from postgame.console import echo_json


def up() -> None:
    """Start the local stack (idempotent) and print its URLs."""
    from infra.stack import up as stack_up

    status = stack_up(runtime.current_config())
    for svc in status.services.values():
        typer.echo(f"{svc.name:8s} {svc.ui or svc.url}")


def down() -> None:
    """Stop every process the local stack started."""
    from infra.stack import down as stack_down

    stack_down(runtime.current_config())


def status(as_json: bool = typer.Option(False, "--json", help="One JSON object: each service's URL and health.")) -> None:
    """Each service's URL and health."""
    from infra.stack import status as stack_status

    result = stack_status(runtime.current_config())
    if as_json:
        echo_json(result.to_dict())
        return
    typer.echo(f"home {result.home}  stack {'running' if result.running else 'not running'}")
    for svc in result.services.values():
        typer.echo(f"  {svc.name:8s} {'healthy' if svc.healthy else 'down':8s} {svc.url}  {svc.detail}")


def register(app: typer.Typer) -> None:
    app.command()(up)
    app.command()(down)
    app.command()(status)
