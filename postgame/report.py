"""The cycle report: what a cycle cost, what it gained, and intelligence per dollar — per cycle and cumulative.

    postgame report [--out DIR] [--json]     # every cycle so far: markdown + PNG charts

Cost is measured, not estimated, and is the sum of its parts:
    cpu_usd     CPU seconds this process and its children spent during the cycle × `cost.usd_per_cpu_hour`
    gpu_usd     GPU seconds (training wall time with `train.use_gpu`) × `cost.usd_per_gpu_hour`
    serving_usd the serving cost of the traffic the cycle learned from (`cost.serving`): the logs' `usage.cost_usd`,
                or their generated tokens × `cost.usd_per_1m_generated_tokens`, or nothing
Gain is in resolve-rate points (percentage points) of the candidate over the policy it replaces, on the same
instances, counted only when the candidate was promoted (a rejected candidate gains 0). With no champion yet the
policy it replaces is the base policy, measured on the same instances — never an empty baseline of 0.
Intelligence per dollar = gain / cost; cost per 1M tokens = cost / generated tokens of the traffic × 10^6.
"""

from __future__ import annotations

import math
import resource
import time
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel

from postgame.charts import ChanceBaseline, ChartData, CyclePoint, SplitPoint, SplitSeries, write_charts
from postgame.config import Config
from postgame.settings.demo import CostSettings
from postgame.settings.factory import DEV, INDOMAIN

CYCLE_KIND_TAG = "postgame.kind"
REPORT_ARTIFACT = "cycle_report.json"


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class CycleStart(BaseModel):
    run_id: str
    experiment_id: str
    started_at: float
    cpu_seconds_at_start: float
    flow_run_id: str = ""
    cycle: int = 1  # 1 for the first cycle of the experiment, then +1


class Usage(BaseModel):
    """The traffic a cycle learned from, summed over its snapshots' `usage` records."""

    sessions: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class CostBreakdown(BaseModel):
    cpu_seconds: float
    gpu_seconds: float
    cpu_usd: float
    gpu_usd: float
    serving: str
    serving_usd: float
    total_usd: float


def price(cpu_s: float, gpu_s: float, usage: Usage, prices: CostSettings) -> CostBreakdown:
    """Pure: the cost of a cycle from what it used; `total_usd` is exactly cpu + gpu + serving."""
    cpu_usd = cpu_s / 3600 * prices.usd_per_cpu_hour
    gpu_usd = gpu_s / 3600 * prices.usd_per_gpu_hour
    serving_usd = {
        "logged": usage.cost_usd,
        "tokens": usage.completion_tokens / 1e6 * prices.usd_per_1m_generated_tokens,
        "none": 0.0,
    }[prices.serving]
    return CostBreakdown(
        cpu_seconds=cpu_s,
        gpu_seconds=gpu_s,
        cpu_usd=cpu_usd,
        gpu_usd=gpu_usd,
        serving=prices.serving,
        serving_usd=serving_usd,
        total_usd=cpu_usd + gpu_usd + serving_usd,
    )


def gain_points(candidate: float, baseline: float | None, promoted: bool) -> float | None:
    """Pure: resolve-rate points the cycle added. 0 when not promoted; None when there is nothing to compare with."""
    if not promoted:
        return 0.0
    if baseline is None:
        return None
    return (candidate - baseline) * 100


def per_dollar(gain: float | None, cost_usd: float) -> float | None:
    return gain / cost_usd if gain is not None and cost_usd > 0 else None


def wilson(rate: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion measured on `n` instances."""
    if n <= 0:
        return (0.0, 1.0)
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


class SplitScore(BaseModel):
    """One evaluation split of a cycle: the candidate, the policy it would replace, and baselines when recorded."""

    split: str
    role: str  # "in-domain held-out bugs" | "unseen-project guard"
    instances: int
    candidate: float | None = None  # None when no candidate was trained (a skipped cycle)
    champion: float | None = None  # the champion before this cycle
    champion_after: float | None = None  # the champion after this cycle (the candidate when promoted)
    interval: tuple[float, float] | None = None  # of champion_after
    baselines: dict[str, float] = {}


def split_role(split: str) -> str:
    if split == DEV:
        return "in-domain tuning bugs"
    return "in-domain held-out bugs" if split in (INDOMAIN, "train") else "unseen-project guard"


class CycleReport(BaseModel):
    run_id: str
    status: str  # "completed", or "skipped" when no snapshot was pending
    cycle: int = 1
    flow_run_id: str = ""
    snapshot_ids: list[str]
    records_ingested: int
    quarantined: dict[str, int]
    validation_warnings: list[str] = []
    stages: dict[str, str] = {}
    dataset_uri: str | None = None
    train_method: str | None = None
    train_steps: int = 0
    eval_split: str | None = None
    eval_set_sha256: str | None = None
    candidate_metric: float | None = None
    champion_metric: float | None = None
    metric: str
    scores: list[SplitScore] = []
    version: str | None = None
    model_uri: str | None = None
    promoted: bool = False
    decision: str = ""
    champion_version: str | None = None
    baseline: str | None = None  # what the gain is measured against: "v3", "base"
    baseline_metric: float | None = None
    seconds: float
    cpu_seconds: float
    gpu_seconds: float = 0.0
    cost_usd: float
    cost: CostBreakdown | None = None
    usage: Usage = Usage()
    cost_per_1m_tokens: float | None = None
    gain: float | None = 0.0  # resolve-rate points
    intelligence_per_dollar: float | None = None
    cumulative_cost_usd: float = 0.0
    cumulative_gain: float = 0.0
    cumulative_intelligence_per_dollar: float | None = None
    urls: dict[str, str] = {}

    @property
    def flow_run_url(self) -> str | None:
        prefect = self.urls.get("prefect")
        return f"{prefect}/runs/flow-run/{self.flow_run_id}" if prefect and self.flow_run_id else None

    def money(self) -> str:
        gain = "n/a" if self.gain is None else f"{self.gain:+.1f} pts"
        ipd = "" if self.intelligence_per_dollar is None else f" = {self.intelligence_per_dollar:+.1f} pts/$"
        per_m = "" if self.cost_per_1m_tokens is None else f"; ${self.cost_per_1m_tokens:.2f} per 1M tokens"
        cum = (
            "n/a"
            if self.cumulative_intelligence_per_dollar is None
            else f"{self.cumulative_intelligence_per_dollar:+.1f} pts/$"
        )
        return (
            f"cost ${self.cost_usd:.4f}, gain {gain}{ipd}{per_m}; cumulative ${self.cumulative_cost_usd:.4f}, "
            f"{self.cumulative_gain:+.1f} pts, {cum}"
        )

    def summary(self) -> str:
        head = f"cycle {self.cycle} (flow run {self.flow_run_id or '-'}, MLflow run {self.run_id})"
        lines = [head] + [f"  {stage:9s}{outcome}" for stage, outcome in self.stages.items()]
        if self.status == "skipped":
            lines.append("  nothing new to learn from: no pending snapshot (cycle skipped)")
        else:
            verdict = (
                f"PROMOTED v{self.version} to champion"
                if self.promoted
                else f"kept champion v{self.champion_version} (v{self.version} rejected)"
            )
            lines.append(f"  decision {verdict}: {self.decision}")
        lines.append(f"  {self.money()}")
        if self.flow_run_url:
            lines.append(f"  prefect  {self.flow_run_url}")
        return "\n".join(lines)


def usage_of(cfg: Config, snapshot_ids: list[str]) -> Usage:
    """The sessions, tokens and logged serving cost of these snapshots' records."""
    from postgame.ingest import load_snapshot

    total = Usage()
    for snapshot_id in snapshot_ids:
        rows = load_snapshot(snapshot_id, cfg=cfg, columns=["usage"]).column("usage").to_pylist()
        for usage in rows:
            usage = usage or {}
            total.sessions += 1
            total.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            total.completion_tokens += int(usage.get("completion_tokens") or 0)
            total.cost_usd += float(usage.get("cost_usd") or 0.0)
    return total


def spent(cfg: Config, start: CycleStart, usage: Usage, gpu_seconds: float = 0.0) -> CostBreakdown:
    cpu = max(0.0, cpu_seconds() - start.cpu_seconds_at_start)
    return price(cpu, gpu_seconds, usage, cfg.cost)


def with_totals(report: CycleReport, previous: list[CycleReport]) -> CycleReport:
    """The report with its cumulative cost, gain and intelligence per dollar over `previous` cycles and itself."""
    cycles = [r for r in previous if r.run_id != report.run_id] + [report]
    cost = sum(r.cost_usd for r in cycles)
    gain = sum(r.gain or 0.0 for r in cycles)
    return report.model_copy(
        update={
            "cumulative_cost_usd": cost,
            "cumulative_gain": gain,
            "cumulative_intelligence_per_dollar": per_dollar(gain, cost),
        }
    )


def history(cfg: Config) -> list[CycleReport]:
    """Every cycle's report recorded in the MLflow experiment, oldest first."""
    import mlflow.artifacts
    from mlflow import MlflowClient

    from postgame.runtime import resolve

    client = MlflowClient(tracking_uri=resolve(cfg).tracking_uri)
    experiment = client.get_experiment_by_name(cfg.tracking.experiment)
    if experiment is None:
        return []
    runs = client.search_runs(
        [experiment.experiment_id],
        f"tags.`{CYCLE_KIND_TAG}` = 'cycle'",
        order_by=["attributes.start_time ASC"],
        max_results=10_000,
    )
    reports = []
    for run in runs:
        try:
            data = mlflow.artifacts.load_dict(f"runs:/{run.info.run_id}/{REPORT_ARTIFACT}")
        except Exception:  # noqa: BLE001 - a cycle that failed before its report has none: not a cycle to count
            continue
        reports.append(CycleReport.model_validate(data))
    return reports


def table_rows(reports: list[CycleReport]) -> list[dict]:
    """One row per cycle (the Prefect table artifact and the markdown table)."""
    rows = []
    for r in reports:
        main = r.scores[0] if r.scores else None
        rows.append(
            {
                "cycle": r.cycle,
                "status": r.status,
                "version": r.version or "-",
                "decision": "promoted" if r.promoted else ("skipped" if r.status == "skipped" else "kept"),
                "candidate": _pct(r.candidate_metric),
                "champion": _pct(main.champion_after if main else None),
                "interval": f"{_pct(main.interval[0])}–{_pct(main.interval[1])}" if main and main.interval else "-",
                "gain_pts": "n/a" if r.gain is None else f"{r.gain:+.1f}",
                "cost_usd": f"{r.cost_usd:.4f}",
                "pts_per_usd": _num(r.intelligence_per_dollar),
                "usd_per_1m_tokens": _num(r.cost_per_1m_tokens, "{:.2f}"),
                "cumulative_pts_per_usd": _num(r.cumulative_intelligence_per_dollar),
            }
        )
    return rows


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _num(value: float | None, fmt: str = "{:+.1f}") -> str:
    return "-" if value is None else fmt.format(value)


def markdown(reports: list[CycleReport], charts: dict[str, str] | None = None) -> str:
    """The report across cycles: headline, charts (file names), one table row per cycle."""
    if not reports:
        return "# postgame report\n\nNo cycle has run yet: `postgame cycle` (or `make demo`).\n"
    last = reports[-1]
    lines = [
        "# postgame report",
        "",
        f"{len(reports)} cycles, {sum(r.promoted for r in reports)} promotions; total cost "
        f"${last.cumulative_cost_usd:.4f}, total gain {last.cumulative_gain:+.1f} resolve-rate points, "
        f"intelligence per dollar {_num(last.cumulative_intelligence_per_dollar)} points/$.",
        "",
    ]
    for r in reports:
        for s in r.scores:
            if r is last:
                base = ", ".join(f"{k} {_pct(v)}" for k, v in s.baselines.items())
                lines.append(
                    f"- champion on {s.role} ({s.split}, {s.instances} instances): {_pct(s.champion_after)}"
                    + (f" [{_pct(s.interval[0])}, {_pct(s.interval[1])}]" if s.interval else "")
                    + (f"; baselines: {base}" if base else "")
                )
    lines.append("")
    for title, name in (charts or {}).items():
        lines += [f"## {title}", "", f"![{title}]({name})", ""]
    rows = table_rows(reports)
    lines += ["## Cycles", "", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(str(v) for v in row.values()) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def stage_outcomes(
    data,
    warnings: list[str],
    dataset,
    candidate,
    evaluation,
    promotion,
    metric: str,
    baseline: str | None,
    baseline_metric: float | None,
) -> dict[str, str]:
    """One line per stage of a completed cycle: what it did."""
    champion = evaluation.champion
    against = (
        f"champion v{evaluation.champion_version} {champion.metric:.3f}"
        if champion
        else (f"{baseline} {baseline_metric:.3f}" if baseline_metric is not None else "no champion")
    )
    loss = f", loss {candidate.train_loss:.3f}" if candidate.train_loss is not None else ""
    return {
        "ingest": f"{len(data.snapshot_ids)} snapshot(s) {', '.join(s[:12] for s in data.snapshot_ids)}: "
        f"{data.records_ingested} sessions, {sum(data.quarantined.values())} lines quarantined",
        "validate": "passed" + (f", {len(warnings)} warning(s): {'; '.join(warnings)}" if warnings else ""),
        "curate": f"{dataset.prompts} prompts, {dataset.sft_examples} with an accepted patch "
        f"(datasets/{dataset.sha256[:12]})",
        "train": f"{candidate.method}, {candidate.steps} steps{loss}, {candidate.seconds:.0f}s",
        "evaluate": f"{metric} on {evaluation.split} ({evaluation.candidate.instances} instances): candidate "
        f"{evaluation.candidate.metric:.3f} vs {against}",
        "promote": f"v{promotion.version} {'promoted' if promotion.decision.promote else 'rejected'}",
    }


def build_report(
    cfg: Config,
    start: CycleStart,
    data,
    warnings,
    dataset,
    candidate,
    evaluation,
    promotion,
    urls: dict[str, str],
    *,
    cost: CostBreakdown,
    usage: Usage,
    previous: list[CycleReport],
    baseline: str | None,
    baseline_metric: float | None,
) -> CycleReport:
    """The report of a completed cycle. `baseline` names what the gain is measured against: the champion it replaced
    (`v<N>`), else the base policy (`base`) measured on the same instances; `previous` are the earlier cycles."""
    promoted = promotion.decision.promote
    before = evaluation.champion.metric if evaluation.champion else None
    scores = [split_score(evaluation, split, promoted, previous) for split in evaluation.candidate_splits]
    scores.sort(key=lambda s: s.split != evaluation.split)  # the deciding split first, then the guards
    if baseline == "base" and baseline_metric is not None:
        scores[0].baselines["base"] = baseline_metric
    gain = gain_points(evaluation.candidate.metric, baseline_metric, promoted)
    result = CycleReport(
        run_id=start.run_id,
        status="completed",
        cycle=len(previous) + 1,
        flow_run_id=start.flow_run_id,
        snapshot_ids=data.snapshot_ids,
        records_ingested=data.records_ingested,
        quarantined=data.quarantined,
        validation_warnings=warnings,
        stages=stage_outcomes(
            data, warnings, dataset, candidate, evaluation, promotion, cfg.promote.metric, baseline, baseline_metric
        ),
        dataset_uri=dataset.uri,
        train_method=candidate.method,
        train_steps=candidate.steps,
        eval_split=evaluation.split,
        eval_set_sha256=evaluation.eval_set_sha256,
        candidate_metric=evaluation.candidate.metric,
        champion_metric=before,
        metric=cfg.promote.metric,
        scores=scores,
        version=promotion.version,
        model_uri=promotion.model_uri,
        promoted=promoted,
        decision=promotion.decision.reason,
        champion_version=promotion.champion_version,
        baseline=baseline,
        baseline_metric=baseline_metric,
        seconds=time.time() - start.started_at,
        cpu_seconds=cost.cpu_seconds,
        gpu_seconds=cost.gpu_seconds,
        cost_usd=cost.total_usd,
        cost=cost,
        usage=usage,
        cost_per_1m_tokens=cost.total_usd / usage.completion_tokens * 1e6 if usage.completion_tokens else None,
        gain=gain,
        intelligence_per_dollar=per_dollar(gain, cost.total_usd),
        urls=urls,
    )
    return with_totals(result, previous)


def split_score(evaluation, split: str, promoted: bool, previous: list[CycleReport]) -> SplitScore:
    """One evaluated split of a cycle: the candidate's rate, the champion's before and after, with the 95% interval
    and the baselines recorded for the same instances by earlier cycles."""
    candidate = evaluation.candidate_splits[split]
    champion = (evaluation.champion_splits or {}).get(split)
    metric = evaluation.metric_name
    rate = candidate.mean_reward if metric == "mean_reward" else candidate.rate
    before = None if champion is None else (champion.mean_reward if metric == "mean_reward" else champion.rate)
    after = rate if promoted else before
    baselines = dict(
        next(
            (
                s.baselines
                for r in reversed(previous)
                for s in r.scores
                if s.split == split and (split != evaluation.split or r.eval_set_sha256 == evaluation.eval_set_sha256)
            ),
            {},
        )
    )
    return SplitScore(
        split=split,
        role=split_role(split),
        instances=candidate.n,
        candidate=rate,
        champion=before,
        champion_after=after,
        interval=wilson(after, candidate.n) if after is not None else None,
        baselines=baselines,
    )


def skipped_report(
    cfg: Config, start: CycleStart, data, urls: dict[str, str], *, previous: list[CycleReport]
) -> CycleReport:
    """No pending snapshot: the cycle cost its few seconds of checking and gained nothing."""
    cost = spent(cfg, start, Usage())
    last = previous[-1].scores if previous else []
    carried = [s.model_copy(update={"candidate": None, "champion": s.champion_after}) for s in last]
    result = CycleReport(
        run_id=start.run_id,
        status="skipped",
        cycle=len(previous) + 1,
        flow_run_id=start.flow_run_id,
        snapshot_ids=[],
        records_ingested=0,
        quarantined=data.quarantined,
        stages={"ingest": "no new log object, no pending snapshot"},
        metric=cfg.promote.metric,
        scores=carried,
        seconds=time.time() - start.started_at,
        cpu_seconds=cost.cpu_seconds,
        cost_usd=cost.total_usd,
        cost=cost,
        gain=0.0,
        intelligence_per_dollar=0.0,
        urls=urls,
    )
    return with_totals(result, previous)


class WrittenReport(BaseModel):
    markdown: Path
    charts: list[Path]


# The chance baselines `postgame bootstrap` measures per split (models/measure.py) and tags the base version with,
# as `bootstrap.<split>.<key>`: (key, what the chart calls it).
CHANCE = (("empty", "empty patch"), ("random_edit", "random single edit"))
UNMEASURED = "not measured: `postgame bootstrap` measures it"


def chance_from_tags(tags: Mapping[str, str], version: str) -> dict[str, list[ChanceBaseline]]:
    """Pure: per split, the chance baselines recorded in a base version's `bootstrap.<split>.*` tags."""
    splits = sorted({k.split(".")[1] for k in tags if k.startswith("bootstrap.") and k.count(".") == 2})
    out = {}
    for split in splits:
        n = tags.get(f"bootstrap.{split}.instances")
        source = f"bootstrap of v{version}" + (f", {float(n):.0f} tasks" if n else "")
        known = [
            ChanceBaseline(name, float(tags[f"bootstrap.{split}.{key}"]), source)
            for key, name in CHANCE
            if f"bootstrap.{split}.{key}" in tags
        ]
        if known:
            out[split] = known
    return out


def measured_chance(cfg: Config) -> dict[str, list[ChanceBaseline]]:
    """The chance baselines of the newest registered version that `postgame bootstrap` measured; {} when none was
    (the demo registers the base without measuring it)."""
    from mlflow import MlflowClient

    from postgame.runtime import resolve

    uri = resolve(cfg).tracking_uri
    client = MlflowClient(tracking_uri=uri, registry_uri=uri)
    versions = client.search_model_versions(f"name = '{cfg.tracking.registered_model}'")
    for mv in sorted(versions, key=lambda v: int(v.version), reverse=True):
        chance = chance_from_tags(dict(mv.tags or {}), str(mv.version))
        if chance:
            return chance
    return {}


def chart_data(reports: list[CycleReport], chance: Mapping[str, list[ChanceBaseline]] | None = None) -> ChartData:
    """What the charts draw (`postgame.charts`), from the cycles' reports: per split, the cycles whose champion was
    measured there (in-domain split first), led by the champion the first of them faced (as cycle N - 1, so that a
    promotion in the first cycle shows as a step up), and the split's chance baselines (`chance`, e.g.
    `measured_chance`; a split without them gets them as unknown, so the chart says so); per cycle, its cost by part."""
    chance = chance or {}
    splits = sorted({s.split for r in reports for s in r.scores}, key=lambda s: (s != "indomain", s))
    series = []
    for split in splits:
        scored = [(r.cycle, s) for r in reports for s in r.scores if s.split == split and s.champion_after is not None]
        points = [
            SplitPoint(
                cycle=c,
                champion=s.champion_after or 0.0,
                interval=s.interval,
                candidate=s.candidate,
                baselines=dict(s.baselines),
            )
            for c, s in scored
        ]
        if scored and (first := scored[0][1]).champion is not None:
            interval = wilson(first.champion, first.instances)
            points.insert(0, SplitPoint(cycle=scored[0][0] - 1, champion=first.champion, interval=interval))
        unknown = [ChanceBaseline(name, None, UNMEASURED) for _, name in CHANCE]
        series.append(
            SplitSeries(
                split=split,
                role=scored[0][1].role if scored else split,
                instances=scored[-1][1].instances if scored else 0,
                points=points,
                chance=list(chance.get(split) or unknown),
            )
        )
    cycles = [
        CyclePoint(
            cycle=r.cycle,
            cpu_usd=r.cost.cpu_usd if r.cost else r.cost_usd,
            gpu_usd=r.cost.gpu_usd if r.cost else 0.0,
            serving_usd=r.cost.serving_usd if r.cost else 0.0,
            intelligence_per_dollar=r.intelligence_per_dollar,
            cumulative_intelligence_per_dollar=r.cumulative_intelligence_per_dollar,
            cost_per_1m_tokens=r.cost_per_1m_tokens,
        )
        for r in reports
    ]
    return ChartData(splits=series, cycles=cycles)


def write_report(
    reports: list[CycleReport], out_dir: Path, chance: Mapping[str, list[ChanceBaseline]] | None = None
) -> WrittenReport:
    """`report.md` and one PNG per chart in out_dir; `chance`: the splits' chance baselines (`measured_chance`)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    charts = write_charts(chart_data(reports, chance), out_dir) if reports else {}
    path = out_dir / "report.md"
    path.write_text(markdown(reports, charts))
    return WrittenReport(markdown=path, charts=[out_dir / name for name in charts.values()])
