"""Commands of continuous operation: the deployment, retraining by API and by event.

    postgame serve                                   # register the deployment and run its cycles (long-running)
    postgame trigger [--reason TEXT] [--key K] [--json]   # start a cycle through the deployment: run id and URL
    postgame watch [--once] [--interval S]           # poll the log source; emit postgame.logs.landed on new objects

`serve` needs the stack (`postgame up`, or `postgame up --serve` which runs `serve` as one of its services).
"""

from __future__ import annotations

import typer

from postgame import runtime
from postgame.console import echo_json


def serve(
    health: bool = typer.Option(
        False,
        "--health",
        help="Serve the runner's /health (on PREFECT_RUNNER_SERVER_HOST/PORT), which `postgame up --serve` waits for.",
    ),
) -> None:
    """Register the deployment `continuous-cycle/<operate.deployment>` (schedule, limit, trigger) and run its cycles."""
    from flows.deploy import deployment_name
    from flows.deploy import serve as serve_deployment

    cfg = runtime.current_config()
    typer.echo(
        f"serving {deployment_name(cfg)} (schedule {cfg.operate.schedule_cron or 'none'}, one cycle at a time: "
        f"{cfg.operate.concurrency}); stop with Ctrl-C"
    )
    serve_deployment(cfg, runtime.config_path_arg(), webserver=health)


def trigger(
    reason: str = typer.Option("api: postgame trigger", "--reason", help="Why: shown on the flow run."),
    key: str | None = typer.Option(None, "--key", help="Idempotency key: the same key starts one run."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object: id, name, state, url."),
) -> None:
    """Start a cycle through the deployment (what `POST /api/deployments/{id}/create_flow_run` does)."""
    from dataclasses import asdict

    from flows.deploy import trigger as trigger_run

    run = trigger_run(runtime.current_config(), reason=reason, idempotency_key=key)
    if as_json:
        echo_json(asdict(run))
        return
    typer.echo(f"flow run {run.id} ({run.name}) {run.state.lower()}\n{run.url}")


def watch(
    once: bool = typer.Option(False, "--once", help="Poll once and exit."),
    interval: float | None = typer.Option(
        None, "--interval", min=0.1, help="Seconds between polls (default operate.watch_interval_s)."
    ),
) -> None:
    """Poll the log source; when new log objects appear, emit `postgame.logs.landed` (the deployment's trigger)."""
    from postgame.events import watch as watch_source

    watch_source(runtime.current_config(), once=once, interval_s=interval, say=typer.echo)


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(trigger)
    app.command()(watch)
