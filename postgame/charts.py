"""Charts of the cycles so far (matplotlib, no display needed): what the report and the MLflow run show.

    resolve_rate   the champion's resolve rate per cycle with its 95% interval, per evaluation split (in-domain
                   held-out bugs, the unseen-project guard), the candidates beside it, baselines as dashed lines
    cost           cost per cycle, stacked by part (CPU, GPU, serving)
    intelligence   cumulative intelligence per dollar (resolve-rate points per $), and per cycle
    tokens         cost per million generated tokens of the traffic learned from
"""

from __future__ import annotations

from pathlib import Path

from postgame.report import CycleReport

CHARTS = {"Champion resolve rate": "resolve_rate", "Cost per cycle": "cost",
          "Intelligence per dollar": "intelligence", "Cost per 1M tokens": "tokens"}


def _figure(width: float = 7.0, height: float = 3.6):
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure  # a Figure without pyplot: no global state, nothing to close

    return Figure(figsize=(width, height), dpi=110, layout="constrained")


def _cycles(reports: list[CycleReport]) -> list[int]:
    return [r.cycle for r in reports]


def resolve_rate(reports: list[CycleReport], fig=None):
    splits = sorted({s.split for r in reports for s in r.scores}, key=lambda s: (s != "indomain", s))
    fig = fig or _figure(7.0, 3.4 * max(1, len(splits)))
    axes = fig.subplots(max(1, len(splits)), 1, squeeze=False)[:, 0]
    for ax, split in zip(axes, splits or ["-"]):
        points = [(r.cycle, s) for r in reports for s in r.scores if s.split == split and s.champion_after is not None]
        role = points[0][1].role if points else split
        xs = [c for c, _ in points]
        champ = [(s.champion_after or 0.0) * 100 for _, s in points]  # points keep only measured champions
        lo = [s.interval[0] * 100 if s.interval else v for (_, s), v in zip(points, champ)]
        hi = [s.interval[1] * 100 if s.interval else v for (_, s), v in zip(points, champ)]
        ax.fill_between(xs, lo, hi, step="mid", alpha=0.2, color="tab:blue", label="champion 95% interval")
        ax.step(xs, champ, where="mid", color="tab:blue", linewidth=2, marker="o", label="champion")
        tried = [(c, s.candidate * 100) for c, s in points if s.candidate is not None]
        ax.scatter([c for c, _ in tried], [v for _, v in tried], color="tab:orange", marker="x", zorder=3,
                   label="candidate")
        names = sorted({k for _, s in points for k in s.baselines})
        for i, name in enumerate(names):
            values = [(c, s.baselines[name] * 100) for c, s in points if name in s.baselines]
            ax.plot([c for c, _ in values], [v for _, v in values], linestyle="--", marker=".",
                    color=f"C{(i + 2) % 10}", label=f"baseline: {name}")
        instances = points[-1][1].instances if points else 0
        ax.set_title(f"champion resolve rate: {role} (split {split}, {instances} instances)", fontsize=10)
        ax.set_ylabel("resolved (%)")
        shown = hi + [v for _, v in tried] + [v * 100 for _, s in points for v in s.baselines.values()]
        ax.set_ylim(-2, min(102.0, max(shown + [10.0]) * 1.15))
        ax.set_xticks(xs or [1])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    axes[-1].set_xlabel("cycle")
    return fig


def cost(reports: list[CycleReport], fig=None):
    fig = fig or _figure()
    ax = fig.subplots()
    xs = _cycles(reports)
    bottom = [0.0] * len(reports)
    for part, colour in (("cpu_usd", "tab:blue"), ("gpu_usd", "tab:purple"), ("serving_usd", "tab:green")):
        values = [getattr(r.cost, part) if r.cost else (r.cost_usd if part == "cpu_usd" else 0.0) for r in reports]
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


def intelligence(reports: list[CycleReport], fig=None):
    fig = fig or _figure()
    ax = fig.subplots()
    xs = _cycles(reports)
    cumulative = [r.cumulative_intelligence_per_dollar for r in reports]
    ax.plot([x for x, v in zip(xs, cumulative) if v is not None], [v for v in cumulative if v is not None],
            marker="o", color="tab:blue", label="cumulative (total gain / total cost)")
    per_cycle = [(x, r.intelligence_per_dollar) for x, r in zip(xs, reports) if r.intelligence_per_dollar is not None]
    ax.bar([x for x, _ in per_cycle], [v for _, v in per_cycle], alpha=0.3, color="tab:orange", label="this cycle")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_title("intelligence per dollar (resolve-rate points per US$)", fontsize=10)
    ax.set_xlabel("cycle")
    ax.set_ylabel("points / $")
    ax.set_xticks(xs or [1])
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def tokens(reports: list[CycleReport], fig=None):
    fig = fig or _figure()
    ax = fig.subplots()
    points = [(r.cycle, r.cost_per_1m_tokens) for r in reports if r.cost_per_1m_tokens is not None]
    ax.plot([x for x, _ in points], [v for _, v in points], marker="o", color="tab:green")
    ax.set_title("cycle cost per million generated tokens of the traffic it learned from", fontsize=10)
    ax.set_xlabel("cycle")
    ax.set_ylabel("US$ / 1M tokens")
    ax.set_xticks([x for x, _ in points] or [1])
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    return fig


def overview(reports: list[CycleReport]):
    """The four charts on one figure (what each cycle's MLflow run shows)."""
    fig = _figure(13, 8)
    for sub, draw in zip(fig.subfigures(2, 2).flat, (resolve_rate, cost, intelligence, tokens)):
        draw(reports, sub)
    return fig


def write_charts(reports: list[CycleReport], out_dir: Path) -> dict[str, str]:
    """Save each chart as PNG in out_dir; returns {title: file name}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    drawers = {"resolve_rate": resolve_rate, "cost": cost, "intelligence": intelligence, "tokens": tokens}
    files = {}
    for title, name in CHARTS.items():
        drawers[name](reports).savefig(out_dir / f"{name}.png")
        files[title] = f"{name}.png"
    return files
