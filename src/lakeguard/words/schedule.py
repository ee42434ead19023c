"""When a job's schedule fires (pure): cron in an IANA time zone, ticks in UTC.

A schedule is a cron expression read on the wall clock of its time zone. Each tick is the UTC
instant of one such wall-clock time; a tick is the unit a scheduler claims, so two schedulers
never run one twice. At the daylight-saving transitions:

- a wall-clock time that does not exist that day (the clocks jump forward over it) fires once,
  as soon as the clocks have jumped: the gap's length later (02:30 fires at 03:30);
- a wall-clock time that happens twice (the clocks fall back) fires once, at its first
  occurrence.

After downtime, `due` gives the latest missed tick only (catch-up `latest`, the default) or
every missed tick (`all`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

from croniter import croniter

# A cron expression fires at most this often; a scan for ticks stops after this many.
MAX_TICKS = 10_000


class CatchUp(StrEnum):
    LATEST = "latest"  # after downtime, run the latest missed tick only
    ALL = "all"  # run every missed tick, oldest first


def _utc(local: datetime, zone: ZoneInfo) -> datetime:
    """The UTC instant of a naive wall-clock time (see the module: gaps and folds)."""
    aware = local.replace(tzinfo=zone, fold=0)
    return aware.astimezone(UTC).replace(tzinfo=None)


def ticks(cron: str, timezone: str, after: datetime, until: datetime) -> list[datetime]:
    """The schedule's ticks in (after, until], as naive UTC datetimes, oldest first."""
    zone = ZoneInfo(timezone)
    # walk the wall clock from a little before `after`, so a tick shifted by a gap is not lost
    start = after.replace(tzinfo=UTC).astimezone(zone).replace(tzinfo=None) - timedelta(hours=3)
    walk = croniter(cron, start)
    found: list[datetime] = []
    for _ in range(MAX_TICKS):
        local = walk.get_next(datetime)
        tick = _utc(local, zone)
        if tick > until:
            break
        if tick > after and (not found or tick > found[-1]):
            found.append(tick)
    return found


def due(
    cron: str,
    timezone: str,
    *,
    last: datetime | None,
    now: datetime,
    catch_up: CatchUp = CatchUp.LATEST,
) -> list[datetime]:
    """The ticks to run now: those after the `last` one claimed, up to `now`. A schedule that
    never fired starts with its next tick (nothing before `now` is owed)."""
    if last is None:
        return []
    missed = ticks(cron, timezone, last, now)
    if catch_up == CatchUp.LATEST:
        return missed[-1:]
    return missed


def next_tick(cron: str, timezone: str, after: datetime) -> datetime | None:
    """The first tick after `after` (None: none within MAX_TICKS steps)."""
    found = ticks(cron, timezone, after, after + timedelta(days=400))
    return found[0] if found else None
