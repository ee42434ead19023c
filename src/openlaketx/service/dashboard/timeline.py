"""The overview's run timeline as an SVG: each run a bar from its start to its end on a time
axis, coloured by its outcome and labelled by its trigger; runs that overlap (or whose labels
would) are stacked on separate lanes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from lakeguard.records.runs.records import JobRunRecord
from openlaketx.outcomes import word_of

WIDTH, PAD, LANE_H, BAR_H, AXIS_H = 1100, 12, 22, 14, 24
MIN_BAR = 6.0  # px: a run of a few seconds on a day's axis stays visible
CHAR_W = 6.2  # px per label character at the chart's font size (an estimate, for lanes)
LABEL_ROOM = 80  # px right of the axis: the newest run's label stays inside the chart
MAX_LANES = 12
TICKS = 6


@dataclass(frozen=True, slots=True)
class RunMark:
    run_id: str
    x: float
    y: float
    width: float
    outcome: str  # PROMOTED, HELD, FAILED, RUNNING or PENDING: the bar's class
    label: str  # the trigger, drawn after the bar
    title: str  # the tooltip: job, outcome, start, duration, trigger and who


@dataclass(frozen=True, slots=True)
class Tick:
    x: float
    label: str


@dataclass(frozen=True, slots=True)
class TimelineChart:
    width: int
    height: int
    marks: tuple[RunMark, ...]
    ticks: tuple[Tick, ...]
    axis_y: float
    left_x: float
    right_x: float


def timeline_chart(
    runs: Sequence[JobRunRecord], now: datetime, width: int = WIDTH
) -> TimelineChart:
    """Lay the runs out on a time axis from the first start to the last end (a run in flight
    ends `now`)."""
    spans = [(r, r.start_time, _end(r, now)) for r in sorted(runs, key=lambda r: r.start_time)]
    first = min((s for _, s, _ in spans), default=now - timedelta(hours=1))
    last = max((e for _, _, e in spans), default=now)
    if last <= first:
        last = first + timedelta(seconds=1)
    seconds = (last - first).total_seconds()
    inner = width - 2 * PAD - LABEL_ROOM

    def x_of(t: datetime) -> float:
        return PAD + inner * (t - first).total_seconds() / seconds

    lanes: list[float] = []  # the right end (bar and label) of each lane's last run
    marks = []
    for run, start, end in spans:
        x = x_of(start)
        bar = max(x_of(end) - x, MIN_BAR)
        label = str(run.trigger_type)
        right = x + bar + 4 + CHAR_W * len(label)
        lane = next((i for i, end_x in enumerate(lanes) if end_x < x), None)
        if lane is None:
            if len(lanes) < MAX_LANES:
                lanes.append(0.0)
                lane = len(lanes) - 1
            else:  # no free lane: the one that frees first (labels may touch)
                lane = min(range(len(lanes)), key=lanes.__getitem__)
        lanes[lane] = right
        outcome = word_of(run.status) or "RUNNING"  # the one vocabulary (openlaketx.outcomes)
        took = "" if run.duration_ms is None else f", {run.duration_ms / 1000:.1f} s"
        who = f" by {run.triggered_by}" if run.triggered_by else ""
        marks.append(
            RunMark(
                run_id=run.pipeline_logging_id,
                x=round(x, 1),
                y=PAD + lane * LANE_H,
                width=round(bar, 1),
                outcome=outcome,
                label=label,
                title=f"{run.pipeline_id} {outcome} at {start:%Y-%m-%d %H:%M:%S}{took}, "
                f"{label}{who}",
            )
        )
    axis_y = PAD + max(len(lanes), 1) * LANE_H + 2
    fmt = "%H:%M:%S" if seconds < 86_400 else "%m-%d %H:%M"
    ticks = tuple(
        Tick(
            x=round(PAD + inner * i / (TICKS - 1), 1),
            label=f"{first + timedelta(seconds=seconds * i / (TICKS - 1)):{fmt}}",
        )
        for i in range(TICKS)
    )
    return TimelineChart(
        width=width,
        height=int(axis_y + AXIS_H),
        marks=tuple(marks),
        ticks=ticks,
        axis_y=axis_y,
        left_x=PAD,
        right_x=PAD + inner,
    )


def _end(run: JobRunRecord, now: datetime) -> datetime:
    if run.end_time is not None:
        return run.end_time
    if run.duration_ms is not None:
        return run.start_time + timedelta(milliseconds=run.duration_ms)
    return max(now, run.start_time)
