"""Charts of the cycles so far (matplotlib, no display needed): what the report and the MLflow run show.

    resolve_rate   the champion's resolve rate per cycle with its 95% interval, per evaluation split (in-domain
                   held-out bugs, the unseen-project guard), the candidates beside it, baselines as dashed lines:
                   the base policy per cycle, and the empty patch and a random single edit as measured by
                   `postgame bootstrap` (horizontal; "unknown" in the legend for a split where they were not)
    cost           cost per cycle, stacked by part (CPU, GPU, serving)
    intelligence   cumulative intelligence per dollar (resolve-rate points per $), and per cycle
    tokens         cost per million generated tokens of the traffic learned from

The charts take plain values (`ChartData`), not cycle reports: `postgame.report.chart_data` turns reports into them,
so this module imports nothing of the report and draws exactly what it is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

CHARTS = {
    "Champion resolve rate": "resolve_rate",
    "Cost per cycle": "cost",
    "Intelligence per dollar": "intelligence",
    "Cost per 1M tokens": "tokens",
}


@dataclass(frozen=True)
class SplitPoint:
    """One cycle on one split, as shares (0..1): the champion after the cycle, its interval, the candidate tried, and
    the baselines recorded for the same instances (e.g. `base`: the base policy)."""

    cycle: int
    champion: float
    interval: tuple[float, float] | None = None
    candidate: float | None = None
    baselines: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ChanceBaseline:
    """What needs no model on one split: the empty patch, a random single edit. `rate` None = not measured for this
    split; `source` says what measured it (or what would)."""

    name: str
    rate: float | None
    source: str


@dataclass(frozen=True)
class SplitSeries:
    split: str
    role: str  # "in-domain held-out bugs" | "unseen-project guard"
    instances: int  # graded per policy in the latest cycle
    points: list[SplitPoint]
    chance: list[ChanceBaseline] = field(default_factory=list)


@dataclass(frozen=True)
class CyclePoint:
    """One cycle's cost by part (US$) and what it bought."""

    cycle: int
    cpu_usd: float
    gpu_usd: float = 0.0
    serving_usd: float = 0.0
    intelligence_per_dollar: float | None = None
    cumulative_intelligence_per_dollar: float | None = None
    cost_per_1m_tokens: float | None = None


@dataclass(frozen=True)
class ChartData:
    splits: list[SplitSeries]
    cycles: list[CyclePoint]


def _figure(width: float = 7.0, height: float = 3.6):
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure  # a Figure without pyplot: no global state, nothing to close

    return Figure(figsize=(width, height), dpi=110, layout="constrained")


def _cycles(data: ChartData) -> list[int]:
    return [c.cycle for c in data.cycles]


def _chance_lines(ax, chance: list[ChanceBaseline]) -> list[float]:
    """Dashed horizontal lines for the chance baselines of one split; an unmeasured one is named in the legend."""
    drawn = []
    for i, base in enumerate(chance):
        if base.rate is None:
            ax.plot([], [], linestyle="none", label=f"{base.name}: unknown ({base.source})")
            continue
        ax.axhline(
            base.rate * 100,
            linestyle=(0, (5, 3)),
            linewidth=1.2,
            color=("tab:gray", "tab:red")[i % 2],
            label=f"{base.name}: {base.rate:.1%} ({base.source})",
        )
        drawn.append(base.rate * 100)
    return drawn


def resolve_rate(data: ChartData, fig=None):
    splits = data.splits
    fig = fig or _figure(9.5, 3.4 * max(1, len(splits)))
    axes = fig.subplots(max(1, len(splits)), 1, squeeze=False)[:, 0]
    for ax, series in zip(axes, splits or [SplitSeries("-", "-", 0, [])]):
        points = series.points
        xs = [p.cycle for p in points]
        champ = [p.champion * 100 for p in points]
        lo = [p.interval[0] * 100 if p.interval else v for p, v in zip(points, champ)]
        hi = [p.interval[1] * 100 if p.interval else v for p, v in zip(points, champ)]
        ax.fill_between(xs, lo, hi, step="mid", alpha=0.2, color="tab:blue", label="champion 95% interval")
        ax.step(xs, champ, where="mid", color="tab:blue", linewidth=2, marker="o", label="champion")
        tried = [(p.cycle, p.candidate * 100) for p in points if p.candidate is not None]
        ax.scatter(
            [c for c, _ in tried], [v for _, v in tried], color="tab:orange", marker="x", zorder=3, label="candidate"
        )
        names = sorted({k for p in points for k in p.baselines})
        for i, name in enumerate(names):
            values = [(p.cycle, p.baselines[name] * 100) for p in points if name in p.baselines]
            ax.plot(
                [c for c, _ in values],
                [v for _, v in values],
                linestyle="--",
                marker=".",
                color=f"C{(i + 2) % 10}",
                label=f"baseline: {name}",
            )
        chance = _chance_lines(ax, series.chance)
        ax.set_title(
            f"champion resolve rate: {series.role} (split {series.split}, {series.instances} instances)", fontsize=10
        )
        ax.set_ylabel("resolved (%)")
        shown = hi + [v for _, v in tried] + [v * 100 for p in points for v in p.baselines.values()] + chance
        ax.set_ylim(-2, min(102.0, max(shown + [10.0]) * 1.15))
        ax.set_xticks(xs or [1])
        ax.grid(alpha=0.3)
        # beside the plot, not on it: five entries inside the axes hid the candidate's first cross (session 33)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    axes[-1].set_xlabel("cycle")
    return fig


def cost(data: ChartData, fig=None):
    fig = fig or _figure()
    ax = fig.subplots()
    xs = _cycles(data)
    bottom = [0.0] * len(xs)
    for part, colour in (("cpu_usd", "tab:blue"), ("gpu_usd", "tab:purple"), ("serving_usd", "tab:green")):
        values = [getattr(c, part) for c in data.cycles]
        if any(values):
            ax.bar(xs, values, bottom=bottom, color=colour, label=part.removesuffix("_usd"))
            bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_title("cost per cycle", fontsize=10)
    ax.set_xlabel("cycle")
    ax.set_ylabel("US$")
    ax.set_xticks(xs or [1])
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    return fig


def intelligence(data: ChartData, fig=None):
    fig = fig or _figure()
    ax = fig.subplots()
    xs = _cycles(data)
    cumulative = [c.cumulative_intelligence_per_dollar for c in data.cycles]
    ax.plot(
        [x for x, v in zip(xs, cumulative) if v is not None],
        [v for v in cumulative if v is not None],
        marker="o",
        color="tab:blue",
        label="cumulative (total gain / total cost)",
    )
    per_cycle = [(c.cycle, c.intelligence_per_dollar) for c in data.cycles if c.intelligence_per_dollar is not None]
    ax.bar([x for x, _ in per_cycle], [v for _, v in per_cycle], alpha=0.3, color="tab:orange", label="this cycle")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_title("intelligence per dollar (resolve-rate points per US$)", fontsize=10)
    ax.set_xlabel("cycle")
    ax.set_ylabel("points / $")
    ax.set_xticks(xs or [1])
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def tokens(data: ChartData, fig=None):
    fig = fig or _figure()
    ax = fig.subplots()
    points = [(c.cycle, c.cost_per_1m_tokens) for c in data.cycles if c.cost_per_1m_tokens is not None]
    ax.plot([x for x, _ in points], [v for _, v in points], marker="o", color="tab:green")
    ax.set_title("cycle cost per million generated tokens of the traffic it learned from", fontsize=10)
    ax.set_xlabel("cycle")
    ax.set_ylabel("US$ / 1M tokens")
    ax.set_xticks([x for x, _ in points] or [1])
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    return fig


def overview(data: ChartData):
    """The four charts on one figure (what each cycle's MLflow run shows)."""
    fig = _figure(13, 8)
    for sub, draw in zip(fig.subfigures(2, 2).flat, (resolve_rate, cost, intelligence, tokens)):
        draw(data, sub)
    return fig


def write_charts(data: ChartData, out_dir: Path) -> dict[str, str]:
    """Save each chart as PNG in out_dir; returns {title: file name}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    drawers = {"resolve_rate": resolve_rate, "cost": cost, "intelligence": intelligence, "tokens": tokens}
    files = {}
    for title, name in CHARTS.items():
        drawers[name](data).savefig(out_dir / f"{name}.png")
        files[title] = f"{name}.png"
    return files
