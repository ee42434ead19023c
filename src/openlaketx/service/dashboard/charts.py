"""Inline SVG charts, drawn on the server (no chart library, no script): a rule's failing share
per batch with the share it tolerated at each batch drawn as a step line, and line charts of
values over batches (profile drift, trust and its components)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from lakeguard.records.judged import share_text
from openlaketx.service.insights import RuleTrend

WIDTH, HEIGHT, PAD = 420, 140, 28
# the top of a share's scale: the first of these at or above the largest share shown, so an
# axis reads 50 %, not 103.5 %, and never passes 100 %
SHARE_TOPS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.75, 1.0)


def share_top(largest: float) -> float:
    """The top of a failing-share axis that holds `largest` with some room above it."""
    return next((t for t in SHARE_TOPS if t >= largest * 1.05), 1.0)


@dataclass(frozen=True, slots=True)
class Tick:
    """A label under the x axis: a batch's time at its place."""

    x: float
    text: str
    anchor: str  # the SVG text-anchor: start, middle or end


def time_ticks(times: Sequence[datetime], xs: Sequence[float]) -> tuple[Tick, ...]:
    """The oldest and the newest batch's time under the axis, and the middle one's when there
    are five batches or more (so labels never overlap at the chart's width)."""
    if not times:
        return ()
    picked = [0, len(times) - 1] if len(times) > 1 else [0]
    if len(times) >= 5:
        picked.insert(1, len(times) // 2)
    anchors = {0: "start", len(times) - 1: "end"} if len(times) > 1 else {0: "middle"}
    return tuple(Tick(xs[i], f"{times[i]:%m-%d %H:%M}", anchors.get(i, "middle")) for i in picked)


def batches_text(count: int) -> str:
    """What the x axis counts."""
    return f"{count} batch{'es' if count != 1 else ''}, oldest to newest (UTC)"


@dataclass(frozen=True, slots=True)
class Dot:
    x: float
    y: float
    outcome: str  # PASS, WARN or FAIL: the dot's class
    label: str  # its tooltip
    threshold: str  # the threshold it was judged against ("unknown" when not known)


@dataclass(frozen=True, slots=True)
class Change:
    """Where a rule's definition changed: between the batch before and this one."""

    x: float
    label: str  # what changed ("threshold 10% → 50%")


@dataclass(frozen=True, slots=True)
class TrendChart:
    rule_id: str
    width: int
    height: int
    line: str  # the polyline's points
    dots: tuple[Dot, ...]
    threshold_path: str  # the step line of the thresholds judged against ("": none known)
    threshold_y: float | None  # the newest judged threshold's height (None: unknown)
    threshold_text: str  # the newest judged threshold ("unknown" when not known)
    threshold_label: str
    changes: tuple[Change, ...]
    top_label: str  # the share at the top of the plot
    bottom_y: float
    left_x: float
    right_x: float
    ticks: tuple[Tick, ...] = ()  # batch times under the x axis
    x_label: str = ""  # what the x axis counts


def trend_chart(trend: RuleTrend) -> TrendChart:
    """The plot of one rule: x = batches oldest to newest (the times of the oldest, middle and
    newest under the axis), y = failing share, scaled so every threshold judged against and
    every point fit (0..1% at least, 100% at most). The threshold is a step line through time:
    each batch's own, broken where it is unknown; each change of the rule's definition is
    marked between the two batches it falls between."""
    points = trend.points
    shares = [p.failed_share for p in points]
    known = [p.threshold for p in points if p.threshold is not None]
    top = share_top(max([*shares, *known, 0.0]))
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    step = inner_w / max(len(shares) - 1, 1)

    def y_of(share: float) -> float:
        return round(PAD + inner_h * (1 - share / top), 1)

    xs = [round(PAD + i * step, 1) for i in range(len(points))]
    dots = tuple(
        Dot(
            x=x,
            y=y_of(p.failed_share),
            outcome=p.outcome,
            label=f"{p.evaluated_at:%Y-%m-%d %H:%M:%S} {p.failed_rows}/{p.rows_evaluated} "
            f"failing ({p.failed_share:.1%}) {p.outcome}, judged as {p.severity} with "
            f"threshold {share_text(p.threshold) or 'unknown'}",
            threshold=share_text(p.threshold) or "unknown",
        )
        for x, p in zip(xs, points, strict=True)
    )
    newest = points[-1].threshold if points else None
    return TrendChart(
        rule_id=trend.rule_id,
        width=WIDTH,
        height=HEIGHT,
        line=" ".join(f"{d.x},{d.y}" for d in dots),
        dots=dots,
        threshold_path=step_path(
            [
                (x, None if p.threshold is None else y_of(p.threshold))
                for x, p in zip(xs, points, strict=True)
            ],
            step / 2 if len(points) > 1 else inner_w / 2,
            (PAD, WIDTH - PAD),
        ),
        threshold_y=None if newest is None else y_of(newest),
        threshold_text=share_text(newest) or "unknown",
        threshold_label=f"threshold {share_text(newest) or 'unknown'}",
        changes=tuple(
            Change(x=round(x - step / 2, 1), label="; ".join(p.changed))
            for x, p in zip(xs, points, strict=True)
            if p.changed
        ),
        top_label=share_text(top) or "",
        bottom_y=PAD + inner_h,
        left_x=PAD,
        right_x=WIDTH - PAD,
        ticks=time_ticks([p.evaluated_at for p in points], xs),
        x_label=batches_text(len(points)),
    )


def step_path(
    steps: Sequence[tuple[float, float | None]], half: float, bounds: tuple[float, float]
) -> str:
    """An SVG path through `steps` (x, y; y None: unknown): level at each step's y for `half`
    either side of its x (within `bounds`), rising or falling midway to the next; broken
    around the unknown ones."""
    parts: list[str] = []
    previous: float | None = None
    for x, y in steps:
        if y is None:
            previous = None
            continue
        left, right = max(bounds[0], round(x - half, 1)), min(bounds[1], round(x + half, 1))
        parts.append(f"M{left},{y}" if previous is None else f"V{y}")
        parts.append(f"H{right}")
        previous = y
    return " ".join(parts)


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
    ticks: tuple[Tick, ...] = ()  # batch times under the x axis
    x_label: str = ""  # what the x axis counts


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
        ticks=time_ticks(times, [round(pad + i * step, 1) for i in range(len(times))]),
        x_label=batches_text(len(times)),
    )
