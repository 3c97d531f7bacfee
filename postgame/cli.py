"""The `postgame` command line.

    postgame up | down | status [--json]     # the local stack (Prefect, MLflow, SeaweedFS S3) on loopback
    postgame demo                            # the embedded default: stack up, task world, traffic, one full cycle
    postgame cycle [--source URI] [--json]   # one continuous-training cycle (in-process if no stack runs)
    postgame ingest | validate | train | eval | promote ...   # one stage at a time

Every command takes `--config FILE` (else $POSTGAME_CONFIG, else ./postgame.yaml). A bad config exits with code 2 and
one line naming the key, the value and what is allowed.
"""

from __future__ import annotations

import json
import sys
from typing import Optional

import typer

from postgame import runtime
from postgame.errors import ConfigError, PostgameError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="postgame: continuous post-training of coding agents.")


@app.callback()
def _root(config: Optional[str] = typer.Option(None, "--config", help="Config YAML (default: $POSTGAME_CONFIG or "
                                                                       "./postgame.yaml).")) -> None:
    runtime.set_config_path(config)
    runtime.current_config()  # fail fast, before any command starts anything


def _echo_json(obj) -> None:
    typer.echo(json.dumps(obj, indent=2, sort_keys=True, default=str))


def quiet_stdout(as_json: bool):
    """With --json, stdout carries the JSON object alone: what libraries print (MLflow's "View run ... at") goes to
    stderr instead."""
    import contextlib

    return contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext()


@app.command()
def up() -> None:
    """Start the local stack (idempotent) and print its URLs."""
    from infra.stack import up as stack_up

    status = stack_up(runtime.current_config())
    for svc in status.services.values():
        typer.echo(f"{svc.name:8s} {svc.ui or svc.url}")


@app.command()
def down() -> None:
    """Stop every process the local stack started."""
    from infra.stack import down as stack_down

    stack_down(runtime.current_config())


@app.command()
def status(as_json: bool = typer.Option(False, "--json", help="One JSON object: each service's URL and health.")) -> None:
    """Each service's URL and health."""
    from infra.stack import status as stack_status

    result = stack_status(runtime.current_config())
    if as_json:
        _echo_json(result.to_dict())
        return
    typer.echo(f"home {result.home}  stack {'running' if result.running else 'not running'}")
    for svc in result.services.values():
        typer.echo(f"  {svc.name:8s} {'healthy' if svc.healthy else 'down':8s} {svc.url}  {svc.detail}")


@app.command()
def cycle(source: Optional[str] = typer.Option(None, help="Logs to read (folder or s3://bucket/prefix); default "
                                                           "ingest.source."),
          as_json: bool = typer.Option(False, "--json", help="Print the cycle report as JSON.")) -> None:
    """Run one continuous-training cycle: ingest, validate, curate, train, evaluate, promote."""
    from flows.cycle import run_cycle

    with quiet_stdout(as_json):
        report = run_cycle(runtime.config_path_arg(), source=source)
    if as_json:
        _echo_json(report.model_dump(mode="json"))
    else:
        typer.echo(report.summary())


@app.command()
def demo(sessions: int = typer.Option(48, help="Simulated production sessions before the cycle."),
         keep_up: bool = typer.Option(True, help="Leave the stack running to browse the UIs afterwards.")) -> None:
    """The embedded default, end to end on a laptop CPU: stack, task world, production traffic, one cycle."""
    from flows.demo import run_demo

    run_demo(runtime.current_config(), sessions=sessions, keep_up=keep_up, config_path=runtime.config_path_arg(),
             log=typer.echo)


def _register_plugins() -> None:
    """Stage commands live next to their stage; each module adds its own commands."""
    import importlib

    for module in ("postgame.ingest.cli", "postgame.validate.cli", "evals.harness.cli", "evals.factory.cli",
                   "models.cli", "models.bootstrap_cli"):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        mod.register(app)


def main() -> None:
    _register_plugins()
    try:
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except ConfigError as exc:
        typer.echo(str(exc), err=True)
        sys.exit(2)
    except PostgameError as exc:
        typer.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(1)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("aborted", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except _usage_errors() as exc:  # a missing option, an unknown command: usage and exit 2, no traceback
        exc.show()
        sys.exit(exc.exit_code)


def _usage_errors() -> tuple[type[Exception], ...]:
    """typer >= 0.29 raises its own vendored click's exceptions; older typer raises click's."""
    import click

    errors: list[type[Exception]] = [click.ClickException]
    try:
        from typer._click.exceptions import ClickException as TyperClickException

        errors.append(TyperClickException)
    except ImportError:
        pass
    return tuple(errors)
