"""Stage commands for training and promotion, outside a cycle (the same functions the cycle's tasks call).

    postgame train --snapshot ID [--json]     # curate the snapshot, train a candidate in a new MLflow run
    postgame promote --run-id RUN [--json]    # evaluate that candidate against the champion, register, decide
"""

from __future__ import annotations

import json
from dataclasses import asdict

import typer

from postgame import runtime


def _new_run(cfg, name: str) -> str:
    import mlflow

    mlflow.set_tracking_uri(runtime.tracking_uri(cfg))
    experiment = mlflow.set_experiment(cfg.tracking.experiment)
    return mlflow.MlflowClient().create_run(experiment.experiment_id, run_name=name).info.run_id


def train(snapshot: list[str] = typer.Option(..., help="Snapshot id from `postgame ingest` (repeat for several)."),
          as_json: bool = typer.Option(False, "--json", help="Print the candidate as JSON.")) -> None:
    """Curate a snapshot and train a candidate policy on it (TRL), tracked in MLflow."""
    from tasks.curate import curate_snapshots
    from tasks.train import train_candidate

    from postgame.cli import quiet_stdout

    cfg = runtime.current_config()
    with quiet_stdout(as_json):
        dataset = curate_snapshots(cfg, snapshot)
        candidate = train_candidate(cfg, dataset, _new_run(cfg, f"train-{snapshot[-1][:8]}"))
    if as_json:
        typer.echo(json.dumps(asdict(candidate), indent=2, sort_keys=True))
    else:
        typer.echo(f"candidate run {candidate.run_id}: {candidate.method}, {candidate.steps} steps -> "
                   f"{candidate.model_uri}\nnext: postgame promote --run-id {candidate.run_id}")


def promote(run_id: str = typer.Option(..., "--run-id", help="The training run of the candidate."),
            as_json: bool = typer.Option(False, "--json", help="Print the decision as JSON.")) -> None:
    """Evaluate a trained candidate against the champion, register it, and promote it if it wins."""
    from tasks.evaluate import evaluate_candidate
    from tasks.promote import promote_candidate
    from tasks.train import load_candidate

    from postgame.cli import quiet_stdout

    cfg = runtime.current_config()
    with quiet_stdout(as_json):
        candidate = load_candidate(cfg, run_id)
        evaluation = evaluate_candidate(cfg, candidate)
        result = promote_candidate(cfg, candidate, evaluation)
    if as_json:
        typer.echo(json.dumps({"version": result.version, "model_uri": result.model_uri,
                               "promoted": result.decision.promote, "reason": result.decision.reason,
                               "candidate": evaluation.candidate.metric,
                               "champion": evaluation.champion.metric if evaluation.champion else None,
                               "champion_version": result.champion_version}, indent=2, sort_keys=True))
    else:
        verdict = "promoted to champion" if result.decision.promote else "not promoted"
        typer.echo(f"version {result.version} {verdict}: {result.decision.reason}")


def register(app: typer.Typer) -> None:
    app.command(name="train")(train)
    app.command(name="promote")(promote)
