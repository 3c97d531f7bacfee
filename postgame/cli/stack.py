"""The local stack's commands.

postgame up [--serve] [--auth]   # start Prefect, MLflow and SeaweedFS on loopback (idempotent), print their URLs;
                                 # --serve: also the deployment's runner; --auth: basic auth on Prefect and MLflow
postgame down                    # stop every process the stack started
postgame status [--json]         # each service's health; the deployment, its schedule and its last runs
"""

from __future__ import annotations

import typer

from postgame import runtime
from postgame.console import echo_json


def up(
    serve: bool = typer.Option(
        False, "--serve", help="Also run the deployment (`postgame serve`): schedule, API and event triggers."
    ),
    auth: bool = typer.Option(
        False,
        "--auth",
        help="Basic auth on Prefect and MLflow; password from POSTGAME_AUTH_PASSWORD (user: operate.auth.username).",
    ),
) -> None:
    """Start the local stack (idempotent) and print its URLs."""
    from infra.stack import up as stack_up
    from postgame.config import config_path

    path = config_path(runtime.config_path_arg())
    status = stack_up(
        runtime.current_config(), serve=serve, auth=auth, config_file=str(path.absolute()) if path else None
    )
    for svc in status.services.values():
        typer.echo(f"{svc.name:8s} {svc.ui or svc.url}")


def down() -> None:
    """Stop every process the local stack started."""
    from infra.stack import down as stack_down

    stack_down(runtime.current_config())


def status(
    as_json: bool = typer.Option(
        False, "--json", help="One JSON object: each service's URL and health, and the deployment."
    ),
) -> None:
    """Each service's URL and health; the deployment, its schedule and its last runs."""
    from infra.stack import status as stack_status

    cfg = runtime.current_config()
    result = stack_status(cfg)
    deployment = _deployment(cfg) if result.services.get("prefect") and result.services["prefect"].healthy else None
    if as_json:
        echo_json({**result.to_dict(), "deployment": deployment.to_dict() if deployment else None})
        return
    typer.echo(f"home {result.home}  stack {'running' if result.running else 'not running'}")
    for svc in result.services.values():
        typer.echo(f"  {svc.name:8s} {'healthy' if svc.healthy else 'down':8s} {svc.url}  {svc.detail}")
    if deployment is None:
        typer.echo("deployment: none (start it with `postgame serve` or `postgame up --serve`)")
        return
    typer.echo(
        f"deployment {deployment.name}  schedule {', '.join(deployment.schedules) or 'none'}"
        f"{' (paused)' if deployment.paused else ''}  concurrency {deployment.concurrency}\n  {deployment.url}"
    )
    for run in deployment.last_runs:
        typer.echo(f"  {run.name:24s} {run.state:12s} {run.start_time or '':32s} {run.reason}")


def _deployment(cfg):
    from flows.deploy import deployment_info

    try:
        return deployment_info(cfg)
    except Exception:  # noqa: BLE001 - status reports what it can; the services' health is above
        return None


def register(app: typer.Typer) -> None:
    app.command()(up)
    app.command()(down)
    app.command()(status)
