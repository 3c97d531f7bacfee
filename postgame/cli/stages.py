"""Commands that compose stages: the cycle, the demo, and the train/promote/simulate steps outside a cycle.

    postgame cycle [--source URI] [--json]    # one continuous-training cycle
    postgame demo [--sessions N]              # the embedded default end to end
    postgame simulate --sessions N [--json]   # production traffic from the champion
    postgame train --snapshot ID [--json]     # curate the snapshot, train a candidate in a new MLflow run
    postgame promote --run-id RUN [--json]    # evaluate that candidate against the champion, register, decide
    postgame promote --version V [--json]     # evaluate a registered version again and apply the gate

Each calls the same functions the cycle's tasks call.
"""

from __future__ import annotations

from dataclasses import asdict

import typer

from postgame import runtime
from postgame.console import echo_json, quiet_stdout


def cycle(source: str | None = typer.Option(None, help="Logs to read (folder or s3://bucket/prefix); default "
                                                           "ingest.source."),
          as_json: bool = typer.Option(False, "--json", help="Print the cycle report as JSON.")) -> None:
    """Run one continuous-training cycle: ingest, validate, curate, train, evaluate, promote."""
    from flows.cycle import run_cycle

    with quiet_stdout(as_json):
        report = run_cycle(runtime.config_path_arg(), source=source)
    if as_json:
        echo_json(report.model_dump(mode="json"))
    else:
        typer.echo(report.summary())


def demo(sessions: int = typer.Option(48, help="Simulated production sessions before the cycle."),
         keep_up: bool = typer.Option(True, help="Leave the stack running to browse the UIs afterwards.")) -> None:
    """The embedded default, end to end on a laptop CPU: stack, task world, production traffic, one cycle."""
    from flows.demo import run_demo

    run_demo(runtime.current_config(), sessions=sessions, keep_up=keep_up, config_path=runtime.config_path_arg(),
             log=typer.echo)


def simulate(sessions: int = typer.Option(..., "--sessions", min=1, help="Sessions to simulate."),
             seed: int | None = typer.Option(None, "--seed", help="Override factory.seed."),
             duplicate_rate: float | None = typer.Option(None, min=0, max=1, help="Share of sessions re-sent."),
             malformed_rate: float | None = typer.Option(None, min=0, max=1,
                                                            help="Share followed by a broken line."),
             secret_rate: float | None = typer.Option(None, min=0, max=1, help="Share leaking a fake secret."),
             as_json: bool = typer.Option(False, "--json", help="The summary (planted counts included) as JSON.")
             ) -> None:
    """The champion attempts train tasks; the harness grades them; each attempt becomes a production log record."""
    from models.traffic import simulate_traffic

    cfg = runtime.current_config()
    knobs = {k: v for k, v in {"duplicate_rate": duplicate_rate, "malformed_rate": malformed_rate,
                               "secret_rate": secret_rate}.items() if v is not None}
    settings = cfg.factory.simulate.model_copy(update=knobs)
    summary = simulate_traffic(cfg, sessions=sessions, seed=seed, settings=settings)
    if as_json:
        echo_json(summary.to_dict())
        return
    typer.echo(summary.summary())
    for key in summary.objects:
        typer.echo(f"  {key}")


def train(snapshot: list[str] = typer.Option(..., help="Snapshot id from `postgame ingest` (repeat for several)."),
          as_json: bool = typer.Option(False, "--json", help="Print the candidate as JSON.")) -> None:
    """Curate a snapshot and train a candidate policy on it (TRL), tracked in MLflow."""
    from evals.factory.instances import split_map
    from models.train import new_training_run, train_candidate
    from postgame.curate import curate_snapshots

    cfg = runtime.current_config()
    with quiet_stdout(as_json):
        dataset = curate_snapshots(cfg, snapshot, split_map(cfg))
        candidate = train_candidate(cfg, dataset, new_training_run(cfg, f"train-{snapshot[-1][:8]}"))
    if as_json:
        echo_json(asdict(candidate))
    else:
        typer.echo(f"candidate run {candidate.run_id}: {candidate.method}, {candidate.steps} steps -> "
                   f"{candidate.model_uri}\nnext: postgame promote --run-id {candidate.run_id}")


def promote(run_id: str | None = typer.Option(None, "--run-id", help="The training run of a new candidate."),
            version: str | None = typer.Option(None, "--version", help="A registered version to evaluate again."),
            as_json: bool = typer.Option(False, "--json", help="Print the decision with its reasons and figures.")
            ) -> None:
    """Evaluate a candidate (a training run, or a registered version) against the champion and apply the gate."""
    from models.evaluate import evaluate_candidate, evaluate_version
    from models.promote import promote_candidate, promote_version
    from models.train import load_candidate

    if (run_id is None) == (version is None):
        raise typer.BadParameter("give exactly one of --run-id RUN or --version V")
    cfg = runtime.current_config()
    with quiet_stdout(as_json):
        if run_id is not None:
            candidate = load_candidate(cfg, run_id)
            evaluation = evaluate_candidate(cfg, candidate)
            result = promote_candidate(cfg, candidate, evaluation)
        else:
            from models import registry

            champion = registry.champion_version(cfg)
            if champion is not None and champion.version == str(version):
                raise typer.BadParameter(f"v{version} is already champion")
            evaluation = evaluate_version(cfg, str(version))
            result = promote_version(cfg, str(version), evaluation)
    if as_json:
        echo_json({"version": result.version, "model_uri": result.model_uri, "outcome": result.outcome,
                   "promoted": result.decision.promote, "reason": result.decision.reason,
                   "candidate": evaluation.candidate.metric,
                   "champion": evaluation.champion.metric if evaluation.champion else None,
                   "champion_version": result.champion_version, "compared_with": result.champion_from,
                   "decision": result.decision.to_dict()})
    else:
        typer.echo(f"version {result.version}: {result.outcome} — {result.decision.reason}")
        if result.outcome == "awaiting_approval":
            typer.echo(f"next: postgame review approve {result.version} --comment '...' (or reject)")


def register(app: typer.Typer) -> None:
    app.command()(cycle)
    app.command()(demo)
    app.command()(simulate)
    app.command()(train)
    app.command()(promote)
