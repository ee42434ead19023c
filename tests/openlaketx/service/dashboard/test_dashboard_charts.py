"""The dashboard's charts as pure functions, without a browser or Spark: line charts of values
over batches (profile drift, trust), and the run timeline on a time axis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from lakeguard.records.runs.records import JobRunRecord
from lakeguard.words.vocabulary import EventStatus
from openlaketx.service.dashboard.charts import SHARE_TOPS, line_chart, share_top, time_ticks
from openlaketx.service.dashboard.drift import profile_charts, trust_charts
from openlaketx.service.dashboard.timeline import LABEL_ROOM, timeline_chart
from openlaketx.service.history import (
    ProfileHistory,
    ProfilePoint,
    ProfileSeries,
    TrustHistory,
    TrustPoint,
)

T0 = datetime(2026, 11, 1, 12, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_a_line_chart_places_each_batch_in_order_and_each_value_on_its_scale() -> None:
    chart = line_chart(
        [("a", [(at(2), 1.0), (at(0), 0.0), (at(1), 0.5)])],
        width=120,
        height=60,
        pad=10,
        low=0.0,
        high=1.0,
    )
    (line,) = chart.lines
    assert [(m.x, m.y, m.value) for m in line.marks] == [
        (10.0, 50.0, 0.0),  # oldest: left, at the bottom
        (60.0, 30.0, 0.5),
        (110.0, 10.0, 1.0),  # newest: right, at the top
    ]
    assert line.points == "10.0,50.0 60.0,30.0 110.0,10.0"
    assert (chart.top_label, chart.bottom_label) == ("1", "0")


def test_series_share_the_batches_and_a_missing_value_is_left_out_of_its_line() -> None:
    chart = line_chart(
        [("x", [(at(0), 2.0), (at(1), None), (at(2), 4.0)]), ("y", [(at(1), 3.0)])],
        width=120,
        height=60,
        pad=10,
    )
    x, y = chart.lines
    assert [m.x for m in x.marks] == [10.0, 110.0]  # the second batch had no value
    assert [m.x for m in y.marks] == [60.0]  # y's one batch is the middle one of all three
    assert (chart.top_label, chart.bottom_label) == ("4", "2")  # the values' own range


def test_a_flat_series_is_drawn_mid_plot_not_on_an_edge() -> None:
    (line,) = line_chart([("f", [(at(0), 7.0), (at(1), 7.0)])], height=60, pad=10).lines
    assert {m.y for m in line.marks} == {30.0}


def test_profile_charts_give_one_row_per_column_with_its_latest_values() -> None:
    def series(column: str, metric: str, values: list[float | None]) -> ProfileSeries:
        points = [
            ProfilePoint(run_id=f"r{i}", profiled_at=at(i), value=v) for i, v in enumerate(values)
        ]
        return ProfileSeries(column_name=column, metric=metric, points=points)

    found = profile_charts(
        ProfileHistory(
            dataset_id="d",
            batches=20,
            metrics=["null_ratio", "mean", "approx_distinct"],
            series=[
                series("lat", "null_ratio", [0.0, 0.25]),
                series("lat", "mean", [10.0, 12.5]),
                series("name", "null_ratio", [0.5]),
            ],
        )
    )
    assert [c.column_name for c in found] == ["lat", "name"]
    lat = {c.metric: c for c in found[0].cells}
    assert (lat["null_ratio"].latest, lat["mean"].latest) == ("25.0%", "12.5")
    assert lat["approx_distinct"].chart is None  # not recorded for this column
    null_marks = lat["null_ratio"].chart.lines[0].marks  # type: ignore[union-attr]
    assert [m.value for m in null_marks] == [0.0, 0.25]


def test_trust_charts_draw_the_score_and_its_four_components_after_each_attempt() -> None:
    points = [
        TrustPoint(
            run_id=f"r{i}",
            computed_at=at(i),
            score=s,
            quality=q,
            freshness=1.0,
            stability=1.0,
            lineage=1.0,
        )
        for i, (s, q) in enumerate([(100, 1.0), (80, 0.5)])
    ]
    assert trust_charts(TrustHistory(dataset_id="d", points=[])) is None
    charts = trust_charts(TrustHistory(dataset_id="d", points=points))
    assert charts is not None and charts.points == 2
    assert [m.value for m in charts.score.lines[0].marks] == [100.0, 80.0]
    assert [line.name for line in charts.components.lines] == list(charts.names)
    assert [m.value for m in charts.components.lines[0].marks] == [1.0, 0.5]  # quality


def run(n: int, start: float, minutes: float, status: EventStatus, trigger: str) -> JobRunRecord:
    return JobRunRecord(
        pipeline_logging_id=f"{n:032x}",
        pipeline_id="job",
        status=status,
        trigger_type=trigger,
        start_time=at(start),
        end_time=at(start + minutes),
        duration_ms=int(minutes * 60_000),
        error_message=None,
    )


def test_the_timeline_places_runs_by_start_and_duration_and_colours_them_by_outcome() -> None:
    runs = [
        run(3, 50, 10, EventStatus.FAILED, "retry"),  # newest first, as job_runs lists them
        run(2, 20, 10, EventStatus.BLOCKED, "schedule"),
        run(1, 0, 10, EventStatus.COMPLETED, "api"),
    ]
    # 600 px inside the pads and the labels' room: 10 px per minute
    chart = timeline_chart(runs, now=at(60), width=624 + LABEL_ROOM)
    marks = {m.run_id[-1]: m for m in chart.marks}
    assert [(marks[k].x, marks[k].width) for k in "123"] == [
        (12.0, 100.0),
        (212.0, 100.0),
        (512.0, 100.0),
    ]
    assert [marks[k].outcome for k in "123"] == ["PROMOTED", "HELD", "FAILED"]
    assert [marks[k].label for k in "123"] == ["api", "schedule", "retry"]
    assert {m.y for m in chart.marks} == {12}  # none overlaps: one lane
    assert chart.ticks[0].label == "12:00:00" and chart.ticks[-1].label == "13:00:00"


def test_overlapping_runs_get_lanes_of_their_own_and_a_run_in_flight_ends_now() -> None:
    flying = JobRunRecord(
        pipeline_logging_id="f" * 32,
        pipeline_id="job",
        status=EventStatus.RUNNING,
        trigger_type="webhook",
        start_time=at(5),
        end_time=None,
        duration_ms=None,
        error_message=None,
    )
    chart = timeline_chart([run(1, 0, 10, EventStatus.COMPLETED, "api"), flying], now=at(20))
    lanes = {m.run_id: m.y for m in chart.marks}
    assert lanes["f" * 32] != lanes[f"{1:032x}"]
    running = next(m for m in chart.marks if m.run_id == "f" * 32)
    assert running.outcome == "RUNNING" and running.x + running.width == chart.right_x


@given(st.floats(0, 1))
def test_a_share_axis_holds_its_largest_share_and_never_passes_100_percent(largest: float) -> None:
    top = share_top(largest)
    assert top in SHARE_TOPS and top <= 1.0
    assert top >= largest  # the point is on the chart
    smaller = [t for t in SHARE_TOPS if t < top]
    assert not smaller or smaller[-1] < largest * 1.05  # the smallest that leaves room


def test_a_90_percent_threshold_gets_a_100_percent_axis_not_103_5() -> None:
    assert share_top(0.9) == 1.0 and share_top(0.359) == 0.5 and share_top(0.0) == 0.01


def test_every_axis_says_the_times_of_its_oldest_middle_and_newest_batch() -> None:
    chart = line_chart([("a", [(at(i * 60), float(i)) for i in range(6)])])
    assert [t.text for t in chart.ticks] == ["11-01 12:00", "11-01 15:00", "11-01 17:00"]
    assert [t.anchor for t in chart.ticks] == ["start", "middle", "end"]
    assert chart.ticks[0].x == chart.left_x and chart.ticks[-1].x == chart.right_x
    assert chart.x_label == "6 batches, oldest to newest (UTC)"
    assert [t.text for t in time_ticks([at(0)], [100.0])] == ["11-01 12:00"]
    assert time_ticks([], []) == ()
    two = time_ticks([at(0), at(30)], [10.0, 20.0])
    assert [(t.x, t.anchor) for t in two] == [(10.0, "start"), (20.0, "end")]
