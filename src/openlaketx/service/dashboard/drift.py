"""The dataset page's history charts: one small line per column and drift metric (null ratio,
mean, distinct count over the last batches) and the trust score with its components over the
last attempts, drawn by `charts.line_chart`."""

from __future__ import annotations

from dataclasses import dataclass

from openlaketx.service.dashboard.charts import LineChart, line_chart
from openlaketx.service.history import DRIFT_METRICS, ProfileHistory, TrustHistory

SPARK_W, SPARK_H, SPARK_PAD = 170, 44, 6
COMPONENTS = ("quality", "freshness", "stability", "lineage")


@dataclass(frozen=True, slots=True)
class MetricCell:
    metric: str
    chart: LineChart | None  # None: the metric was not recorded for this column
    latest: str  # the newest value, as text ("" when there is none)


@dataclass(frozen=True, slots=True)
class ColumnDrift:
    column_name: str
    cells: tuple[MetricCell, ...]  # in DRIFT_METRICS' order


@dataclass(frozen=True, slots=True)
class TrustCharts:
    score: LineChart
    components: LineChart
    names: tuple[str, ...]  # the components, in the order of `components.lines`
    points: int


def _fmt(metric: str) -> str:
    return {"null_ratio": "{:.1%}", "approx_distinct": "{:,.0f}"}.get(metric, "{:.4g}")


def profile_charts(found: ProfileHistory) -> list[ColumnDrift]:
    """A row per column, a sparkline per drift metric (null ratio on 0..1)."""
    by_column: dict[str, dict[str, MetricCell]] = {}
    for series in found.series:
        fmt = _fmt(series.metric).format
        data = [(p.profiled_at, p.value) for p in series.points]
        values = [v for _, v in data if v is not None]
        chart = line_chart(
            [(series.metric, data)],
            width=SPARK_W,
            height=SPARK_H,
            pad=SPARK_PAD,
            low=0.0 if series.metric == "null_ratio" else None,
            high=1.0 if series.metric == "null_ratio" else None,
            fmt=fmt,
        )
        by_column.setdefault(series.column_name, {})[series.metric] = MetricCell(
            metric=series.metric, chart=chart, latest=fmt(values[-1]) if values else ""
        )
    return [
        ColumnDrift(
            column_name=column,
            cells=tuple(
                cells.get(metric, MetricCell(metric=metric, chart=None, latest=""))
                for metric in DRIFT_METRICS
            ),
        )
        for column, cells in sorted(by_column.items())
    ]


def trust_charts(found: TrustHistory) -> TrustCharts | None:
    """The score on 0..100 and the four components on 0..1, after each attempt (None: no
    score recorded yet)."""
    if not found.points:
        return None
    score = line_chart(
        [("score", [(p.computed_at, float(p.score)) for p in found.points])],
        low=0.0,
        high=100.0,
        fmt="{:.0f}".format,
    )
    components = line_chart(
        [
            (name, [(p.computed_at, float(getattr(p, name))) for p in found.points])
            for name in COMPONENTS
        ],
        low=0.0,
        high=1.0,
        fmt="{:.2f}".format,
    )
    return TrustCharts(
        score=score, components=components, names=COMPONENTS, points=len(found.points)
    )
