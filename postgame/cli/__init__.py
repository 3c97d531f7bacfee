"""The `postgame` command line: the front door, the one layer above the flows.

    postgame up | down | status [--json]     # the local stack (Prefect, MLflow, SeaweedFS S3) on loopback
    postgame demo                            # the embedded default: stack up, task world, traffic, one full cycle
    postgame cycle [--source URI] [--json]   # one continuous-training cycle (in-process if no stack runs)
    postgame lineage VERSION [--json]        # a model version back to its log objects, every hop checked
    postgame report [--out DIR] [--json]     # every cycle so far: markdown + charts, intelligence per dollar
    postgame ingest | validate | train | eval | promote ...   # one stage at a time
    postgame redact --snapshot ID | --all [--dry-run]         # replace snapshots holding secrets in clear
    postgame serve | trigger | watch         # the deployment: schedule, retraining by API and by event
    postgame review approve|reject V | rollback [--to V]      # a reviewer's commands
    postgame agent run | replay ...          # a policy (or a script of tool calls) as an agent, graded

Every command takes `--config FILE` (else $POSTGAME_CONFIG, else ./postgame.yaml). A bad config exits with code 2 and
one line naming the key, the value and what is allowed. Commands that belong to one stage live beside it (its
`cli.py` with a `register(app)`); commands that compose stages live here, in `postgame/cli/`.
"""

from __future__ import annotations

import importlib
import sys

import typer

from postgame import runtime
from postgame.errors import ConfigError, PostgameError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="postgame: continuous post-training of coding agents.",
)

COMMAND_MODULES = (
    "postgame.cli.stack",
    "postgame.cli.stages",
    "postgame.cli.operate",
    "postgame.cli.story",
    "postgame.cli.review",
    "postgame.cli.agent",
    "postgame.ingest.cli",
    "postgame.validate.cli",
    "evals.harness.cli",
    "evals.factory.cli",
    "models.bootstrap_cli",
)


@app.callback()
def _root(
    config: str | None = typer.Option(
        None, "--config", help="Config YAML (default: $POSTGAME_CONFIG or ./postgame.yaml)."
    ),
) -> None:
    runtime.set_config_path(config)
    runtime.current_config()  # fail fast, before any command starts anything


def _register_commands() -> None:
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(app)


def main() -> None:
    _register_commands()
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
    except Exception as exc:  # noqa: BLE001 - a service that went away: one line here, the traceback in a log file
        from postgame.cli.failures import report_unexpected

        sys.exit(report_unexpected(exc))


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
