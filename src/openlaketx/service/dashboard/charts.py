"""Inline SVG charts, drawn on the server (no chart library, no script): a rule's failing share
per batch with the share it tolerates drawn across, and line charts of values over batches
(profile drift, trust and its components)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from openlaketx.service.insights import RuleTrend

WIDTH, HEIGHT, PAD = 420, 140, 28


@dataclass(frozen=True, slots=True)
class Dot:
    x: float
    y: float
    outcome: str  # PASS, WARN or FAIL: the dot's class
    label: str  # its tooltip


@dataclass(frozen=True, slots=True)
class TrendChart:
    rule_id: str
    width: int
    height: int
    line: str  # the polyline's points
    dots: tuple[Dot, ...]
    threshold_y: float | None  # None: the rule is no longer defined
    threshold_label: str
    top_label: str  # the share at the top of the plot
    bottom_y: float
    left_x: float
    right_x: float


def trend_chart(trend: RuleTrend) -> TrendChart:
    """The plot of one rule: x = batches oldest to newest, y = failing share, scaled so the
    threshold and every point fit (at least 0..1%)."""
    shares = [p.failed_share for p in trend.points]
    top = max([*shares, trend.threshold or 0.0, 0.01]) * 1.15
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    step = inner_w / max(len(shares) - 1, 1)

    def y_of(share: float) -> float:
        return round(PAD + inner_h * (1 - share / top), 1)

    dots = tuple(
        Dot(
            x=round(PAD + i * step, 1),
            y=y_of(p.failed_share),
            outcome=p.outcome,
            label=f"{p.evaluated_at:%Y-%m-%d %H:%M:%S} {p.failed_rows}/{p.rows_evaluated} "
            f"failing ({p.failed_share:.1%}) {p.outcome}",
        )
        for i, p in enumerate(trend.points)
    )
    return TrendChart(
        rule_id=trend.rule_id,
        width=WIDTH,
        height=HEIGHT,
        line=" ".join(f"{d.x},{d.y}" for d in dots),
        dots=dots,
        threshold_y=None if trend.threshold is None else y_of(trend.threshold),
        threshold_label="" if trend.threshold is None else f"threshold {trend.threshold:.1%}",
        top_label=f"{top:.1%}",
        bottom_y=PAD + inner_h,
        left_x=PAD,
        right_x=WIDTH - PAD,
    )


@dataclass(frozen=True, slots=True)
class Mark:
    x: float
    y: float
    value: float  # the datum itself, for a script reading the page (data-value)
    label: str  # its tooltip


@dataclass(frozen=True, slots=True)
class Line:
    name: str
    points: str  # the polyline's points
    marks: tuple[Mark, ...]


@dataclass(frozen=True, slots=True)
class LineChart:
    width: int
    height: int
    lines: tuple[Line, ...]
    top_label: str  # the value at the top of the plot
    bottom_label: str  # the value at the bottom
    top_y: float
    bottom_y: float
    left_x: float
    right_x: float


Datum = tuple[datetime, float | None]


def line_chart(
    series: Sequence[tuple[str, Sequence[Datum]]],
    *,
    width: int = WIDTH,
    height: int = HEIGHT,
    pad: int = PAD,
    low: float | None = None,
    high: float | None = None,
    fmt: Callable[[float], str] = "{:.4g}".format,
) -> LineChart:
    """Several named series on one plot: x = the batches (every series' times, oldest to
    newest, evenly spaced), y = the value between `low` and `high` (the values' own range when
    not given). A datum without a value is left out of its line."""
    times = sorted({t for _, data in series for t, _ in data})
    slot = {t: i for i, t in enumerate(times)}
    values = [v for _, data in series for _, v in data if v is not None]
    bottom = low if low is not None else min(values, default=0.0)
    top = high if high is not None else max(values, default=1.0)
    if top <= bottom:  # a flat series: a band around its value, so it is drawn mid-plot
        spread = abs(top) * 0.1 or 1.0
        bottom, top = bottom - spread, top + spread
    inner_w, inner_h = width - 2 * pad, height - 2 * pad
    step = inner_w / max(len(times) - 1, 1)
    lines = []
    for name, data in series:
        marks = tuple(
            Mark(
                x=round(pad + slot[t] * step, 1),
                y=round(pad + inner_h * (1 - (v - bottom) / (top - bottom)), 1),
                value=v,
                label=f"{t:%Y-%m-%d %H:%M:%S} {name} {fmt(v)}",
            )
            for t, v in sorted(data, key=lambda d: d[0])
            if v is not None
        )
        lines.append(Line(name=name, points=" ".join(f"{m.x},{m.y}" for m in marks), marks=marks))
    return LineChart(
        width=width,
        height=height,
        lines=tuple(lines),
        top_label=fmt(top),
        bottom_label=fmt(bottom),
        top_y=pad,
        bottom_y=pad + inner_h,
        left_x=pad,
        right_x=width - pad,
    )
