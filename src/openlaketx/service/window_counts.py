"""What a window's dataset attempts came to (promoted, nothing new, held, failed, warned), in
all, per UTC day and per dataset, for the dashboard's summary and `GET /summary` (two delta-rs
reads, no Spark)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from lakeguard.records.checks.result_rows import RuleResultRow
from lakeguard.records.runs.rows import RunHistoryRow
from lakeguard.words.vocabulary import AttemptStatus, Outcome
from openlaketx.lakehouse import Lakehouse


@dataclass(frozen=True)
class Counts:
    """What the dataset attempts of a window came to: each attempt one of promoted (a new
    version), nothing new, held or failed; `warned` counts the attempts a WARN rule flagged."""

    promoted: int = 0
    nothing_new: int = 0
    held: int = 0
    failed: int = 0
    warned: int = 0

    @property
    def attempts(self) -> int:
        return self.promoted + self.nothing_new + self.held + self.failed

    def plus(self, other: Counts) -> Counts:
        return Counts(
            self.promoted + other.promoted,
            self.nothing_new + other.nothing_new,
            self.held + other.held,
            self.failed + other.failed,
            self.warned + other.warned,
        )


@dataclass(frozen=True)
class Summary:
    """The counts of a window, in all, per UTC day (oldest first) and per dataset."""

    since: datetime
    until: datetime
    total: Counts
    by_day: tuple[tuple[date, Counts], ...]
    by_dataset: tuple[tuple[str, Counts], ...]


def _one(status: AttemptStatus, version: int | None, warned: bool) -> Counts:
    if status == AttemptStatus.SUCCESS:
        kind = Counts(promoted=1) if version is not None else Counts(nothing_new=1)
    elif status == AttemptStatus.BLOCKED:
        kind = Counts(held=1)
    else:
        kind = Counts(failed=1)
    return kind.plus(Counts(warned=1)) if warned else kind


def summary(lh: Lakehouse, since: datetime) -> Summary:
    """What the tenant's dataset attempts that started at or after `since` came to."""
    until = lh.store.now()
    attempts = lh.store.read(RunHistoryRow, filters=[("start_time", ">=", since)])
    warned = {
        r.run_id
        for r in lh.store.read(
            RuleResultRow,
            filters=[("executed_at", ">=", since), ("outcome", "=", str(Outcome.WARN))],
        )
    }
    total = Counts()
    days: dict[date, Counts] = {}
    datasets: dict[str, Counts] = {}
    for a in attempts:
        one = _one(AttemptStatus(a.status), a.data_version, a.run_id in warned)
        total = total.plus(one)
        day = a.start_time.date()
        days[day] = days.get(day, Counts()).plus(one)
        datasets[a.dataset_id] = datasets.get(a.dataset_id, Counts()).plus(one)
    return Summary(
        since=since,
        until=until,
        total=total,
        by_day=tuple(sorted(days.items())),
        by_dataset=tuple(sorted(datasets.items())),
    )
