"""When schedules fire (pure): cron in a time zone, ticks in UTC, and both daylight-saving
transitions; catch-up after downtime."""

from __future__ import annotations

from datetime import datetime

from lakeguard.words.schedule import CatchUp, due, next_tick, ticks


def test_a_daily_schedule_fires_at_local_wall_clock_time() -> None:
    # 06:00 in Paris is 05:00 UTC in winter, 04:00 UTC in summer
    assert ticks("0 6 * * *", "Europe/Paris", datetime(2026, 1, 10), datetime(2026, 1, 11, 12)) == [
        datetime(2026, 1, 10, 5),
        datetime(2026, 1, 11, 5),
    ]
    assert next_tick("0 6 * * *", "Europe/Paris", datetime(2026, 7, 1)) == datetime(2026, 7, 1, 4)
    assert next_tick("0 6 * * *", "UTC", datetime(2026, 7, 1)) == datetime(2026, 7, 1, 6)


def test_a_time_the_clocks_jump_over_fires_once_when_they_have_jumped() -> None:
    # Europe/Paris springs forward on 2026-03-29: 02:00 -> 03:00 local (01:00 UTC)
    found = ticks("30 2 * * *", "Europe/Paris", datetime(2026, 3, 27), datetime(2026, 3, 31))
    assert found == [
        datetime(2026, 3, 27, 1, 30),  # 02:30 CET
        datetime(2026, 3, 28, 1, 30),
        datetime(2026, 3, 29, 1, 30),  # 02:30 does not exist: fires at 03:30 CEST = 01:30 UTC
        datetime(2026, 3, 30, 0, 30),  # 02:30 CEST
    ]
    hourly = ticks("0 * * * *", "Europe/Paris", datetime(2026, 3, 28, 23), datetime(2026, 3, 29, 3))
    assert hourly == [datetime(2026, 3, 29, h) for h in (0, 1, 2, 3)]  # never twice, none lost


def test_a_time_that_happens_twice_fires_once_at_its_first_occurrence() -> None:
    # Europe/Paris falls back on 2026-10-25: 03:00 CEST -> 02:00 CET (01:00 UTC)
    found = ticks("30 2 * * *", "Europe/Paris", datetime(2026, 10, 24), datetime(2026, 10, 26))
    assert found == [
        datetime(2026, 10, 24, 0, 30),  # 02:30 CEST
        datetime(2026, 10, 25, 0, 30),  # the first 02:30 (CEST), not the second (CET)
    ]
    hourly = ticks(
        "0 * * * *", "Europe/Paris", datetime(2026, 10, 24, 23), datetime(2026, 10, 25, 3)
    )
    assert hourly == [datetime(2026, 10, 25, h) for h in (0, 2, 3)]  # 02:00 local once


def test_after_downtime_only_the_latest_missed_tick_runs_unless_asked() -> None:
    last, now = datetime(2026, 1, 1, 0), datetime(2026, 1, 1, 5, 30)
    assert due("0 * * * *", "UTC", last=last, now=now) == [datetime(2026, 1, 1, 5)]
    every = due("0 * * * *", "UTC", last=last, now=now, catch_up=CatchUp.ALL)
    assert every == [datetime(2026, 1, 1, h) for h in range(1, 6)]
    assert due("0 * * * *", "UTC", last=datetime(2026, 1, 1, 5), now=now) == []
    assert due("0 * * * *", "UTC", last=None, now=now) == []  # a new schedule owes nothing
