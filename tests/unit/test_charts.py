"""The resolve-rate chart draws, per split, the chance baselines `postgame bootstrap` measured (empty patch, random
single edit) as dashed horizontal lines at their values, and names in the legend the ones not measured.

Checked on the matplotlib objects the chart function returns, not on pixels."""

from __future__ import annotations

import pytest

from postgame.charts import ChanceBaseline, ChartData, CyclePoint, SplitPoint, SplitSeries, resolve_rate
from postgame.report import UNMEASURED, CycleReport, SplitScore, chance_from_tags, chart_data, measured_chance

INDOMAIN = [
    ChanceBaseline("empty patch", 0.0, "bootstrap of v1, 56 tasks"),
    ChanceBaseline("random single edit", 4 / 56, "bootstrap of v1, 56 tasks"),
]
UNKNOWN = [ChanceBaseline("empty patch", None, UNMEASURED), ChanceBaseline("random single edit", None, UNMEASURED)]


def _data() -> ChartData:
    points = [SplitPoint(cycle=c, champion=0.16, interval=(0.09, 0.28), candidate=0.2) for c in (1, 2)]
    return ChartData(
        splits=[
            SplitSeries("indomain", "in-domain held-out bugs", 56, points, INDOMAIN),
            SplitSeries("eval", "unseen-project guard", 30, points, UNKNOWN),
        ],
        cycles=[CyclePoint(cycle=1, cpu_usd=0.01), CyclePoint(cycle=2, cpu_usd=0.01)],
    )


def _horizontal(ax) -> dict[str, float]:
    """{label: y in %} of the lines spanning the whole x axis (axhline: x data 0..1 in axes coordinates)."""
    return {
        line.get_label(): line.get_ydata()[0]
        for line in ax.get_lines()
        if list(line.get_xdata()) == [0, 1] and line.get_ydata()[0] == line.get_ydata()[1]
    }


def test_measured_baselines_are_dashed_lines_at_their_rate_per_split():
    fig = resolve_rate(_data())
    indomain, guard = fig.axes
    lines = _horizontal(indomain)
    assert lines == {
        "empty patch: 0.0% (bootstrap of v1, 56 tasks)": 0.0,
        "random single edit: 7.1% (bootstrap of v1, 56 tasks)": pytest.approx(100 * 4 / 56),
    }
    dashed = [line for line in indomain.get_lines() if line.get_label() in lines]
    assert all(line.get_linestyle() == "--" for line in dashed)
    assert indomain.get_ylim()[1] >= 100 * 4 / 56  # the line is inside the plot, not above it
    assert _horizontal(guard) == {}  # nothing measured for eval: nothing drawn there


def test_unmeasured_baselines_are_named_in_the_legend_not_left_out():
    indomain, guard = resolve_rate(_data()).axes
    guard_legend = [t.get_text() for t in guard.get_legend().get_texts()]
    assert f"empty patch: unknown ({UNMEASURED})" in guard_legend
    assert f"random single edit: unknown ({UNMEASURED})" in guard_legend
    assert not any("unknown" in t.get_text() for t in indomain.get_legend().get_texts())


def test_the_legend_sits_beside_each_plot_not_on_its_points():
    # guards: the legend drawn inside the axes, where it hid the first candidate's cross in the demo's chart (a
    # champion at 56% and a candidate at 54% sit under "upper left" with five entries)
    points = [SplitPoint(cycle=c, champion=0.557, interval=(0.47, 0.64), candidate=0.536) for c in (0, 1, 2, 3)]
    fig = resolve_rate(ChartData(splits=[SplitSeries("indomain", "in-domain", 140, points, INDOMAIN)], cycles=[]))
    fig.draw_without_rendering()  # the layout places the legend
    (ax,) = fig.axes
    legend, plot = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert legend.x0 >= plot.x1  # wholly to the right of the plot
    assert fig.bbox.contains(legend.x1 - 1, legend.y1 - 1)  # and inside the figure, not cut off


def test_base_version_tags_become_per_split_baselines():
    tags = {
        "bootstrap.indomain.empty": "0.000000",
        "bootstrap.indomain.random_edit": "0.071429",
        "bootstrap.indomain.instances": "56.000000",
        "bootstrap.eval.random_edit": "0.061728",
        "bootstrap.eval.pass_at_1": "0.000000",
        "eval.resolved_rate": "0.160714",
        "origin": "bootstrap",
    }
    chance = chance_from_tags(tags, "3")
    assert chance["indomain"] == [
        ChanceBaseline("empty patch", 0.0, "bootstrap of v3, 56 tasks"),
        ChanceBaseline("random single edit", 0.071429, "bootstrap of v3, 56 tasks"),
    ]
    assert chance["eval"] == [ChanceBaseline("random single edit", 0.061728, "bootstrap of v3")]
    assert set(chance) == {"indomain", "eval"}
    assert chance_from_tags({"origin": "bootstrap"}, "1") == {}  # a base registered and never measured


def test_the_demos_chance_scores_are_tagged_as_bootstrap_tags_them():
    """`postgame demo` measures the chance baselines of the graded sets (models.measure.measure_chance) and tags the
    base with ChanceScores.tags(): the charts read them back as bootstrap's."""
    from models.measure import ChanceScores

    tags = ChanceScores("holdout", 30, empty=0.0, random_edit=1 / 30, errors=0).tags()
    assert chance_from_tags(tags, "1") == {
        "holdout": [
            ChanceBaseline("empty patch", 0.0, "bootstrap of v1, 30 tasks"),
            ChanceBaseline("random single edit", round(1 / 30, 6), "bootstrap of v1, 30 tasks"),
        ]
    }


def test_chart_data_gives_a_split_without_measurements_unknown_baselines():
    score = SplitScore(
        split="holdout",
        role="unseen-project guard",
        instances=30,
        candidate=0.0,
        champion=0.0,
        champion_after=0.0,
        interval=(0.0, 0.11),
    )
    report = CycleReport(
        run_id="r",
        status="completed",
        snapshot_ids=[],
        records_ingested=1,
        quarantined={},
        metric="resolved_rate",
        scores=[score.model_copy(update={"split": "indomain"}), score],
        seconds=1,
        cpu_seconds=1,
        cost_usd=0.01,
    )
    data = chart_data([report], {"indomain": INDOMAIN})
    assert {s.split: s.chance for s in data.splits} == {"indomain": INDOMAIN, "holdout": UNKNOWN}


def test_measured_chance_reads_the_newest_measured_version(cfg, tmp_path):
    from mlflow import MlflowClient

    from postgame.runtime import resolve

    uri = resolve(cfg).tracking_uri
    client = MlflowClient(tracking_uri=uri, registry_uri=uri)
    assert measured_chance(cfg) == {}  # no registered model yet
    client.create_registered_model(cfg.tracking.registered_model)
    for tags in (
        {"origin": "bootstrap", "bootstrap.indomain.random_edit": "0.05"},  # an older measured base
        {"origin": "bootstrap", "bootstrap.indomain.random_edit": "0.07"},  # the newest measured base
        {"origin": "cycle"},
    ):  # a candidate: no bootstrap measurement
        client.create_model_version(cfg.tracking.registered_model, str(tmp_path), tags=tags)
    assert measured_chance(cfg) == {"indomain": [ChanceBaseline("random single edit", 0.07, "bootstrap of v2")]}


def test_the_chart_starts_at_the_champion_the_first_cycle_faced():
    """A promotion in the first cycle is a step up from the champion it replaced, not a line that starts high."""

    def cycle(n: int, before: float, after: float, candidate: float) -> CycleReport:
        score = SplitScore(
            split="indomain",
            role="in-domain held-out bugs",
            instances=56,
            candidate=candidate,
            champion=before,
            champion_after=after,
            interval=(after - 0.1, after + 0.1),
        )
        return CycleReport(
            run_id=f"r{n}",
            status="completed",
            cycle=n,
            snapshot_ids=[],
            records_ingested=1,
            quarantined={},
            metric="resolved_rate",
            scores=[score],
            seconds=1,
            cpu_seconds=1,
            cost_usd=0.01,
        )

    data = chart_data([cycle(1, 9 / 56, 17 / 56, 17 / 56), cycle(2, 17 / 56, 17 / 56, 9 / 56)])
    [series] = data.splits
    assert [(p.cycle, p.champion, p.candidate) for p in series.points] == [
        (0, 9 / 56, None),  # the base the demo registered: what cycle 1 was measured against
        (1, 17 / 56, 17 / 56),
        (2, 17 / 56, 9 / 56),
    ]
    low, high = series.points[0].interval
    assert low < 9 / 56 < high
    indomain = resolve_rate(data).axes[0]
    assert list(indomain.get_xticks()) == [0, 1, 2]
