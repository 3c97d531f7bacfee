"""`postgame eval run`: grade predictions on SWE-style instances.

    postgame eval run --instances F.jsonl --predictions P.jsonl --repos DIR --out OUTDIR [--workers N] [--timeout S]
                      [--reruns K] [--json]

Writes OUTDIR/report.json and per-instance logs. Exits 0 when the evaluation ran, whatever was resolved; exits 2 with
one line on stderr when it cannot run (bad arguments, unreadable files, a config error).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

if TYPE_CHECKING:
    from postgame.config import Config

eval_app = typer.Typer(no_args_is_help=True, help="SWE-style evaluation harness (sandboxed, SWE-bench grading).")


def _fail(message: str) -> NoReturn:
    typer.echo(f"postgame eval: error: {message}", err=True)
    raise typer.Exit(2)


def _current_config() -> Config:
    try:
        from postgame.runtime import current_config
    except ImportError:
        from postgame.config import load_config

        return load_config()
    return current_config()


def _settings(timeout: float | None, workers: int | None, reruns: int | None):
    from pydantic import ValidationError

    from postgame.errors import ConfigError
    from postgame.settings.harness import HarnessSettings

    try:
        base = _current_config().eval
    except ConfigError as exc:
        _fail(str(exc))
    overrides = {k: v for k, v in {"timeout_s": timeout, "workers": workers, "reruns": reruns}.items() if v is not None}
    try:
        return HarnessSettings.model_validate({**base.model_dump(), **overrides})
    except ValidationError as exc:
        err = exc.errors()[0]
        _fail(f"{'.'.join(map(str, err['loc'])) or 'settings'} = {err.get('input')!r}: {err['msg']}")


def _env_cache(settings):
    """Per-repository environments (instances with `env_spec`) are kept in the configured object store too, so
    another machine or a later run fetches them instead of building."""
    from evals.harness.repoenv import EnvCache

    local = settings.cache_dir / "envs" if settings.cache_dir else None
    try:
        from postgame.runtime import current_config, store

        return EnvCache(local, store(current_config()), settings.env_store_prefix)
    except Exception as exc:  # noqa: BLE001 - a store that cannot be opened only costs rebuilds
        typer.echo(
            f"postgame eval: warning: object store unavailable ({type(exc).__name__}: {exc}); "
            "per-repository environments are cached locally only",
            err=True,
        )
        return EnvCache(local, None, settings.env_store_prefix)


@eval_app.command("run")
def run_cmd(
    # Required options are checked here, not by click, so a missing one is one clear line and exit code 2.
    instances: Path | None = typer.Option(
        None, "--instances", help="Instances, JSONL or a JSON list (SWE-bench format). Required."
    ),
    predictions: Path | None = typer.Option(
        None, "--predictions", help="Predictions: instance_id, model_name_or_path, model_patch. Required."
    ),
    repos: Path | None = typer.Option(None, "--repos", help="Folder holding each repository as <owner>__<name>."),
    out: Path | None = typer.Option(
        None, "--out", help="Output folder: report.json and one folder per instance. Required."
    ),
    workers: int | None = typer.Option(
        None, "--workers", help="Parallel instances (default: eval.workers, 0 = cores)."
    ),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds per test run (default: eval.timeout_s)."),
    reruns: int | None = typer.Option(None, "--reruns", help="Extra runs per instance; disagreeing tests are flaky."),
    as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON on stdout."),
    progress: bool = typer.Option(
        True, "--progress/--no-progress", help="Progress bar on stderr (only on a terminal, never with --json)."
    ),
) -> None:
    """Grade predictions like SWE-bench, each test run sandboxed; write OUT/report.json."""
    from evals.harness.instance import HarnessInputError, load_instances, load_predictions
    from evals.harness.run import run_evaluation

    if instances is None or predictions is None or out is None:
        missing = [
            name
            for name, value in (("--instances", instances), ("--predictions", predictions), ("--out", out))
            if value is None
        ]
        _fail(
            f"missing {', '.join(missing)} (usage: postgame eval run --instances F.jsonl --predictions P.jsonl "
            "--repos DIR --out OUTDIR)"
        )
    settings = _settings(timeout, workers, reruns)
    if repos is not None and not repos.is_dir():
        _fail(f"--repos {repos} is not a folder")
    try:
        insts = load_instances(instances)
        preds = load_predictions(predictions)
    except HarnessInputError as exc:
        _fail(str(exc))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _fail(f"--out {out}: {exc}")
    envs = _env_cache(settings) if any(i.env_spec is not None for i in insts) else None
    report = run_evaluation(
        insts,
        preds,
        repos_dir=repos,
        out_dir=out,
        settings=settings,
        workers=settings.workers,
        reruns=settings.reruns,
        progress=progress and not as_json,
        envs=envs,
    )
    summary = {k: v for k, v in report.to_dict().items() if k != "instances"}
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    else:
        typer.echo(
            f"resolved {len(report.resolved_ids)}/{report.total_instances} "
            f"(submitted {len(report.submitted_ids)}, errors {len(report.error_ids)}, "
            f"empty patches {len(report.empty_patch_ids)}) sandbox={report.sandbox} "
            f"in {report.seconds:.1f}s; report: {out / 'report.json'}"
        )
        for iid in report.error_ids:
            typer.echo(f"  error {iid}: {report.instances[iid].get('error')}", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval")
