"""Commands that compose stages: the cycle, the demo, and the train/promote/simulate steps outside a cycle.

    postgame cycle [--source URI] [--json]    # one continuous-training cycle: flow run, stages, decision, cost
    postgame demo [--cycles N] [--sessions N] # the embedded default end to end: N rounds of traffic -> cycle
    postgame simulate --sessions N [--json]   # production traffic from the champion
    postgame train --mode sft|dpo|grpo [--snapshot ID] [--max-steps N] [--seed S] [--json]
                                              # curate, train a candidate in a new MLflow run
    postgame promote --run-id RUN [--json]    # evaluate that candidate against the champion, register, decide
    postgame promote --version V [--json]     # evaluate a registered version again and apply the gate

Each calls the same functions the cycle's tasks call.
"""

from __future__ import annotations

import typer

from postgame import runtime
from postgame.console import echo_json, quiet_stdout


def cycle(
    source: str | None = typer.Option(None, help="Logs to read (folder or s3://bucket/prefix); default ingest.source."),
    as_json: bool = typer.Option(False, "--json", help="Print the cycle report as JSON."),
) -> None:
    """Run one continuous-training cycle: ingest, validate, curate, train, evaluate, promote, report.

    While it runs, a progress bar over the stages on stderr (on a terminal, without --json). Then prints the
    Prefect flow run (id and URL), each stage's outcome, the decision, the cost and intelligence per
    dollar; library output goes to <home>/<demo.log_file>. A failed cycle prints one `error:` line and where its
    traceback was written (<home>/logs/error-*.log); Prefect's own logs of it stay in the log file and the UI."""
    from flows.cycle import CYCLE_STAGES, following_stages, run_cycle
    from postgame.cli.failures import report_unexpected
    from postgame.console import library_output_to, progress_bar, terminal_stderr
    from postgame.errors import ConfigError

    cfg = runtime.current_config()
    try:
        # the bar's stream is opened before library output leaves for the log file: the bar stays on the terminal
        with (
            terminal_stderr() as err,
            progress_bar("cycle", len(CYCLE_STAGES), enabled=not as_json, file=err) as tell,
            library_output_to(cfg.home / cfg.demo.log_file),
            following_stages(tell),
        ):
            report = run_cycle(runtime.config_path_arg(), source=source)
    except ConfigError:
        raise
    except Exception as exc:  # a failed stage, gate or service: one line here, the traceback in <home>/logs/error-*
        raise typer.Exit(report_unexpected(exc)) from exc
    if as_json:
        echo_json({**report.model_dump(mode="json"), "flow_run_url": report.flow_run_url})
    else:
        typer.echo(report.summary())


def demo(
    cycles: int | None = typer.Option(None, min=1, help="Rounds of traffic -> cycle (default demo.cycles)."),
    sessions: int | None = typer.Option(
        None, min=1, help="Simulated production sessions before each cycle (default demo.sessions)."
    ),
    keep_up: bool = typer.Option(True, help="Leave the stack running to browse the UIs afterwards."),
) -> None:
    """The embedded default, end to end on a laptop CPU: stack, task world, base policy, N rounds of production
    traffic -> cycle, then the report and the URLs to open."""
    from flows.demo import run_demo

    run_demo(
        runtime.current_config(),
        cycles=cycles,
        sessions=sessions,
        keep_up=keep_up,
        config_path=runtime.config_path_arg(),
    )


def simulate(
    sessions: int = typer.Option(..., "--sessions", min=1, help="Sessions to simulate."),
    seed: int | None = typer.Option(None, "--seed", help="Override factory.seed."),
    duplicate_rate: float | None = typer.Option(None, min=0, max=1, help="Share of sessions re-sent."),
    malformed_rate: float | None = typer.Option(None, min=0, max=1, help="Share followed by a broken line."),
    secret_rate: float | None = typer.Option(None, min=0, max=1, help="Share leaking a fake secret."),
    as_json: bool = typer.Option(False, "--json", help="The summary (planted counts included) as JSON."),
) -> None:
    """The champion attempts train tasks; the harness grades them; each attempt becomes a production log record.

    While it runs, a progress bar over the sessions answered on stderr (on a terminal, without --json)."""
    from models.traffic import simulate_traffic
    from postgame.console import progress_bar

    cfg = runtime.current_config()
    knobs = {
        k: v
        for k, v in {
            "duplicate_rate": duplicate_rate,
            "malformed_rate": malformed_rate,
            "secret_rate": secret_rate,
        }.items()
        if v is not None
    }
    settings = cfg.factory.simulate.model_copy(update=knobs)
    with progress_bar("simulate", sessions, enabled=not as_json) as tell:
        summary = simulate_traffic(cfg, sessions=sessions, seed=seed, settings=settings, progress=tell)
    if as_json:
        echo_json(summary.to_dict())
        return
    typer.echo(summary.summary())
    for key in summary.objects:
        typer.echo(f"  {key}")


def train(
    mode: str | None = typer.Option(
        None, "--mode", help="sft | dpo | grpo (models.train.TRAINERS); default train.method."
    ),
    snapshot: list[str] | None = typer.Option(
        None,
        "--snapshot",
        help="Snapshot id from `postgame ingest` (repeat for several); default: every pending snapshot.",
    ),
    max_steps: int | None = typer.Option(None, "--max-steps", min=1, help="Override train.max_steps."),
    seed: int | None = typer.Option(None, "--seed", help="Override train.seed."),
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON object: run id, model URI, final metrics with their baselines, cost."
    ),
) -> None:
    """Curate snapshots and train a candidate policy on them (TRL), tracked in MLflow; resumes a killed run.

    While it trains, a progress bar over the training steps on stderr (on a terminal, without --json)."""
    from evals.factory.instances import split_map
    from models.train import SUMMARY_METRICS, get_trainer, new_training_run, train_candidate
    from postgame import ledger
    from postgame.console import progress_bar
    from postgame.curate import curate_snapshots

    cfg = runtime.current_config()
    if mode is not None:
        try:
            get_trainer(mode)
        except KeyError as exc:
            raise typer.BadParameter(str(exc.args[0]), param_hint="--mode") from None
    overrides = {k: v for k, v in {"method": mode, "max_steps": max_steps, "seed": seed}.items() if v is not None}
    cfg = cfg.model_copy(update={"train": cfg.train.model_validate({**cfg.train.model_dump(), **overrides})})
    snapshots = list(snapshot or ledger.pending(cfg))
    if not snapshots:
        typer.echo(
            "nothing to train on: no pending snapshot (run `postgame ingest` first, or pass --snapshot ID)", err=True
        )
        raise typer.Exit(1)
    with quiet_stdout(as_json):
        dataset = curate_snapshots(cfg, snapshots, split_map(cfg))
        with progress_bar("train", cfg.train.max_steps, enabled=not as_json) as tell:
            tell("loading the parent policy", 0)
            candidate = train_candidate(
                cfg, dataset, new_training_run(cfg, f"train-{snapshots[-1][:8]}"), progress=tell
            )
    if as_json:
        echo_json(
            {
                "run_id": candidate.run_id,
                "model_uri": candidate.model_uri,
                "method": candidate.method,
                "steps": candidate.steps,
                "parent_version": candidate.parent_version,
                "snapshot_ids": list(candidate.snapshot_ids),
                "metrics": {
                    k: {"final": candidate.metrics[k], "baseline": candidate.baselines.get(k)}
                    for k in SUMMARY_METRICS
                    if k in candidate.metrics
                },
                "baseline": "each metric's value at the first step (the parent policy on the first batch)",
                "cost": {"usd": candidate.cost_usd, **candidate.usage},
            }
        )
    else:
        typer.echo(
            f"candidate run {candidate.run_id}: {candidate.method}, {candidate.steps} steps -> "
            f"{candidate.model_uri}; ${candidate.cost_usd:.4f}\n"
            f"next: postgame promote --run-id {candidate.run_id}"
        )


def promote(
    run_id: str | None = typer.Option(None, "--run-id", help="The training run of a new candidate."),
    version: str | None = typer.Option(None, "--version", help="A registered version to evaluate again."),
    as_json: bool = typer.Option(False, "--json", help="Print the decision with its reasons and figures."),
) -> None:
    """Evaluate a candidate (a training run, or a registered version) against the champion and apply the gate.

    While it grades, a progress bar over the instances graded (candidate, then champion) on stderr (on a terminal,
    without --json)."""
    from models.evaluate import evaluate_candidate, evaluate_version, evaluation_size
    from models.promote import promote_candidate, promote_version
    from models.train import load_candidate
    from postgame.console import progress_bar

    if (run_id is None) == (version is None):
        raise typer.BadParameter("give exactly one of --run-id RUN or --version V")
    cfg = runtime.current_config()
    with quiet_stdout(as_json):
        if run_id is not None:
            candidate = load_candidate(cfg, run_id)
            with progress_bar("promote", evaluation_size(cfg), enabled=not as_json) as tell:
                evaluation = evaluate_candidate(cfg, candidate, progress=tell)
            result = promote_candidate(cfg, candidate, evaluation)
        else:
            from models import registry

            champion = registry.champion_version(cfg)
            if champion is not None and champion.version == str(version):
                raise typer.BadParameter(f"v{version} is already champion")
            size = evaluation_size(cfg, exclude_version=str(version))
            with progress_bar("promote", size, enabled=not as_json) as tell:
                evaluation = evaluate_version(cfg, str(version), progress=tell)
            result = promote_version(cfg, str(version), evaluation)
    if as_json:
        echo_json(
            {
                "version": result.version,
                "model_uri": result.model_uri,
                "outcome": result.outcome,
                "promoted": result.decision.promote,
                "reason": result.decision.reason,
                "candidate": evaluation.candidate.metric,
                "champion": evaluation.champion.metric if evaluation.champion else None,
                "champion_version": result.champion_version,
                "compared_with": result.champion_from,
                "decision": result.decision.to_dict(),
            }
        )
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
