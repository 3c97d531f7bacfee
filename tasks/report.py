"""Report: what the cycle cost and what it gained (`postgame.report`), with the model's lineage (`postgame.lineage`),
published to the Prefect UI (markdown + tables) and to MLflow (metrics, the report, the charts)."""

from __future__ import annotations

import time

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from postgame.config import Config
from postgame.report import CYCLE_KIND_TAG, REPORT_ARTIFACT, CycleReport, CycleStart, cpu_seconds
from tasks.retry import TRANSIENT_RETRIES


@task(name="open-cycle-run", **TRANSIENT_RETRIES)
def open_cycle_run(cfg: Config, flow_run_id: str) -> CycleStart:
    """The MLflow run every stage of this cycle logs into, tagged with the code and config that ran it."""
    import mlflow

    from postgame.lineage import CODE_TAG, CONFIG_TAG, code_version, config_sha256
    from postgame.runtime import resolve

    resolve(cfg)  # points MLflow at the stack
    experiment = mlflow.set_experiment(cfg.tracking.experiment)
    run = mlflow.MlflowClient().create_run(
        experiment.experiment_id,
        run_name=f"cycle-{flow_run_id[:8]}",
        tags={
            "prefect.flow_run_id": flow_run_id,
            CYCLE_KIND_TAG: "cycle",
            CODE_TAG: code_version(),
            CONFIG_TAG: config_sha256(cfg),
        },
    )
    return CycleStart(
        run_id=run.info.run_id,
        experiment_id=experiment.experiment_id,
        started_at=time.time(),
        cpu_seconds_at_start=cpu_seconds(),
        flow_run_id=flow_run_id,
    )


def _base_score(cfg: Config, evaluation) -> float | None:
    """The base policy on the evaluation's deciding instances: what a first champion replaces (never an empty
    baseline)."""
    from models.evaluate import cache_key, graded_sets, score_policy
    from models.policy import Policy, base_policy_dir

    _, sets, _ = graded_sets(cfg)
    records = sets.get(evaluation.decide_split)
    if records is None:
        return None
    key = cache_key(cfg, evaluation.decide_split, records)
    if key != evaluation.eval_set_sha256:
        return None  # not the same instances: no comparable baseline
    policy = Policy(base_policy_dir(cfg), name=cfg.tracking.registered_model, version="base", settings=cfg.policy)
    scores = score_policy(
        cfg,
        policy,
        records,
        cfg.home / "runs" / "baselines" / f"base-{key[:12]}",
        split=evaluation.decide_split,
        key=key,
    )
    return scores.mean_reward if cfg.promote.metric == "mean_reward" else scores.rate


@task(name="report", **TRANSIENT_RETRIES)
def report(
    cfg: Config, start: CycleStart, data, warnings, dataset, candidate, evaluation, promotion, urls: dict[str, str]
) -> CycleReport:
    from postgame.report import build_report, history, spent, usage_of

    if evaluation.champion is not None:
        baseline, baseline_metric = f"v{evaluation.champion_version}", evaluation.champion.metric
    else:
        baseline, baseline_metric = "base", _base_score(cfg, evaluation)
    usage = usage_of(cfg, data.snapshot_ids)
    cost = spent(cfg, start, usage, gpu_seconds=candidate.seconds if cfg.train.use_gpu else 0.0)
    result = build_report(
        cfg,
        start,
        data,
        warnings,
        dataset,
        candidate,
        evaluation,
        promotion,
        urls,
        cost=cost,
        usage=usage,
        previous=history(cfg),
        baseline=baseline,
        baseline_metric=baseline_metric,
    )
    return _publish(cfg, start, result, candidate.model_uri)


@task(name="skip", **TRANSIENT_RETRIES)
def nothing_to_learn(cfg: Config, start: CycleStart, data, urls: dict[str, str]) -> CycleReport:
    """No pending snapshot: the cycle ends here, completed, and says so."""
    from postgame.report import history, skipped_report

    return _publish(cfg, start, skipped_report(cfg, start, data, urls, previous=history(cfg)), None)


def _metrics(r: CycleReport) -> dict[str, float]:
    values = {
        "cycle.seconds": r.seconds,
        "cycle.cpu_seconds": r.cpu_seconds,
        "cycle.gpu_seconds": r.gpu_seconds,
        "cycle.cost_usd": r.cost_usd,
        "cycle.gain_points": r.gain,
        "cycle.intelligence_per_dollar": r.intelligence_per_dollar,
        "cycle.cost_per_1m_tokens": r.cost_per_1m_tokens,
        "cycle.generated_tokens": float(r.usage.completion_tokens),
        "cumulative.cost_usd": r.cumulative_cost_usd,
        "cumulative.gain_points": r.cumulative_gain,
        "cumulative.intelligence_per_dollar": r.cumulative_intelligence_per_dollar,
    }
    if r.cost is not None:
        values |= {
            "cycle.cost.cpu_usd": r.cost.cpu_usd,
            "cycle.cost.gpu_usd": r.cost.gpu_usd,
            "cycle.cost.serving_usd": r.cost.serving_usd,
        }
    for s in r.scores:
        if s.champion_after is not None:
            values[f"champion.{s.split}.{r.metric}"] = s.champion_after
    return {k: float(v) for k, v in values.items() if v is not None}


def _publish(cfg: Config, start: CycleStart, result: CycleReport, model_uri: str | None) -> CycleReport:
    import mlflow

    from postgame.charts import overview
    from postgame.lineage import follow
    from postgame.report import chart_data, history, markdown, measured_chance, table_rows
    from postgame.runtime import resolve

    resolve(cfg)  # points MLflow at the stack
    reports = [r for r in history(cfg) if r.run_id != result.run_id] + [result]
    lineage = follow(cfg, result.version) if result.version else None
    create_markdown_artifact(
        key="cycle-report",
        markdown="```\n" + result.summary() + "\n```\n\n" + markdown(reports),
        description="What this cycle cost and gained, and every cycle so far",
    )
    create_table_artifact(key="cycles", table=table_rows(reports), description="Every cycle so far")
    if lineage is not None:
        create_table_artifact(
            key="lineage",
            table=lineage.rows(),
            description=f"v{lineage.version} back to its log objects: "
            f"{'every hop resolves' if lineage.ok else 'BROKEN LINKS'}",
        )
    metrics = _metrics(result)
    with mlflow.start_run(run_id=start.run_id):
        mlflow.log_metrics(metrics, step=result.cycle)
        mlflow.log_dict(result.model_dump(mode="json"), REPORT_ARTIFACT)
        if lineage is not None:
            mlflow.log_dict(lineage.to_dict(), "lineage.json")
        mlflow.log_figure(overview(chart_data(reports, measured_chance(cfg))), "charts/overview.png")
    if result.version:
        _tag_version(cfg, result, metrics, model_uri)
    return result


def _tag_version(cfg: Config, result: CycleReport, metrics: dict[str, float], model_uri: str | None) -> None:
    """The registered version carries its cycle's cost and gain (tags) and the metrics on its logged model."""
    import mlflow

    from postgame.runtime import resolve

    tags = {
        "cycle": str(result.cycle),
        "cycle.cost_usd": f"{result.cost_usd:.6f}",
        "cycle.gain_points": "n/a" if result.gain is None else f"{result.gain:.3f}",
        "cycle.intelligence_per_dollar": "n/a"
        if result.intelligence_per_dollar is None
        else f"{result.intelligence_per_dollar:.3f}",
        "cycle.gain_baseline": result.baseline or "none",
    }
    client = mlflow.MlflowClient(tracking_uri=resolve(cfg).tracking_uri)
    for key, value in tags.items():
        client.set_model_version_tag(cfg.tracking.registered_model, str(result.version), key, value)
    if model_uri and model_uri.startswith("models:/m-"):
        mlflow.log_metrics(
            metrics, step=result.cycle, model_id=model_uri.removeprefix("models:/"), run_id=result.run_id
        )
