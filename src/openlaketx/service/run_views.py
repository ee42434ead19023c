"""What the runs look like to a reader, for the API and the dashboard alike: a run's summary in
the one outcome vocabulary (`openlaketx.outcomes`), every run reachable by a page filtered by
job, outcome, trigger and time window (newest first, a keyset cursor: stable however many runs
end meanwhile), each task of a run with its outcome (the ones never attempted too) and each
run that touched a dataset. Each answer is a fixed number of store reads, whatever the number
of rows it shows."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from lakeguard.records.runs.records import JobRunRecord
from lakeguard.records.runs.rows import PipelineRunRow, RunHistoryRow
from lakeguard.words.errors import ValidationError
from lakeguard.words.vocabulary import IN_FLIGHT, TriggerType
from openlaketx.lakehouse import Lakehouse
from openlaketx.outcomes import STORED_RUN_STATUS, RunOutcome, attempt_outcome

PAGE = 50
MAX_PAGE = 200
_TRIGGER = re.compile(r"[a-z][a-z_]{0,39}")  # a trigger word, stored ones of before too
FILTERABLE = (RunOutcome.PROMOTED, RunOutcome.HELD, RunOutcome.FAILED, RunOutcome.RUNNING)


@dataclass(frozen=True, slots=True)
class RunFilter:
    """Which runs a page lists; None: any."""

    job: str | None = None
    outcome: RunOutcome | None = None
    trigger: str | None = None
    since: datetime | None = None  # started at or after (UTC, as the tables hold it)
    until: datetime | None = None  # started before

    @classmethod
    def parse(
        cls,
        job: str | None = None,
        outcome: str | None = None,
        trigger: str | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> RunFilter:
        """A filter from a page's query (empty fields: any); a value it cannot mean is refused
        with the words it can."""
        errors: list[dict[str, str]] = []
        word: RunOutcome | None = None
        if outcome:
            try:
                word = RunOutcome(outcome.strip().upper())
            except ValueError:
                word = None
            if word not in FILTERABLE:
                errors.append(
                    {
                        "path": "outcome",
                        "message": "one of " + ", ".join(str(w) for w in FILTERABLE),
                    }
                )
        if trigger and not _TRIGGER.fullmatch(trigger):  # a word stored before is kept
            errors.append(
                {"path": "trigger", "message": "one of " + ", ".join(str(t) for t in TriggerType)}
            )
        start, end = _moment(since, "since", errors), _moment(until, "until", errors, end=True)
        if start and end and end <= start:
            errors.append({"path": "until", "message": "must be after since"})
        if errors:
            raise ValidationError(
                "the runs filter does not fit: "
                + "; ".join(f"{e['path']}: {e['message']}" for e in errors),
                errors=errors,
                fix="pick a word the filter offers, and times as YYYY-MM-DD or ISO 8601",
            )
        return cls(job or None, word, trigger or None, start, end)

    def query(self) -> dict[str, str]:
        """The filter as a page's query fields (empty ones left out)."""
        fields = {
            "job": self.job,
            "outcome": None if self.outcome is None else str(self.outcome),
            "trigger": self.trigger,
            "since": None if self.since is None else self.since.isoformat(),
            "until": None if self.until is None else self.until.isoformat(),
        }
        return {k: v for k, v in fields.items() if v}

    def admits(self, run: JobRunRecord) -> bool:
        """Whether a run in flight passes the filter (ended ones are filtered by the store)."""
        start = naive(run.start_time)
        return (
            (self.job is None or run.pipeline_id == self.job)
            and (self.outcome is None or self.outcome == RunOutcome.RUNNING)
            and (self.trigger is None or str(run.trigger_type) == self.trigger)
            and (self.since is None or start >= self.since)
            and (self.until is None or start < self.until)
        )

    def store_filters(self) -> list[tuple[str, str, Any]]:
        found: list[tuple[str, str, Any]] = []
        if self.job is not None:
            found.append(("pipeline_id", "=", self.job))
        if self.outcome is not None:
            found.append(("status", "=", STORED_RUN_STATUS.get(self.outcome, "-")))
        if self.trigger is not None:
            found.append(("trigger_type", "=", self.trigger))
        if self.since is not None:  # the day partitions before it are not read
            found += [("run_date", ">=", self.since.date()), ("start_time", ">=", self.since)]
        if self.until is not None:
            found += [("run_date", "<=", self.until.date()), ("start_time", "<", self.until)]
        return found


def _moment(
    text: str | None, name: str, errors: list[dict[str, str]], *, end: bool = False
) -> datetime | None:
    """A time of a filter: an ISO date (`until`: the end of that day) or date and time (UTC
    when it names no zone)."""
    if not text:
        return None
    text = text.strip()
    try:
        if len(text) == 10:
            moment = datetime.combine(date.fromisoformat(text), time())
            return moment + timedelta(days=1) if end else moment
        found = datetime.fromisoformat(text)
    except ValueError:
        errors.append({"path": name, "message": "a date (YYYY-MM-DD) or an ISO 8601 time"})
        return None
    return naive(found)


def naive(moment: datetime) -> datetime:
    """A time as the tables hold it: UTC without a zone (a time without one is UTC)."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a page of ended runs starts: after the run that ended the page before, in the
    order (start_time, run id), newest first."""

    start_time: datetime
    run_id: str

    def text(self) -> str:
        return f"{self.start_time.isoformat()}~{self.run_id}"

    @classmethod
    def parse(cls, text: str | None) -> Cursor | None:
        if not text:
            return None
        moment, _, run_id = text.partition("~")
        try:
            at = datetime.fromisoformat(moment)
        except ValueError:
            at = None
        if at is None or len(run_id) != 32 or not run_id.isalnum():
            raise ValidationError(
                "the page cursor is not one this server gave",
                errors=[{"path": "after", "message": "<start time>~<run id>"}],
                fix="follow the page's own Older link, or start from the first page",
            )
        return cls(naive(at), run_id)


@dataclass(frozen=True, slots=True)
class RunsPage:
    runs: list[JobRunRecord]
    after: Cursor | None  # the next page's cursor; None: this is the last page
    first: bool  # no cursor: the runs in flight lead the page


def _key(r: PipelineRunRow) -> tuple[datetime, str]:
    return (r.start_time, r.pipeline_logging_id)


def runs_page(
    lh: Lakehouse, where: RunFilter, after: Cursor | None = None, limit: int = PAGE
) -> RunsPage:
    """One page of a tenant's runs that pass `where`, newest first: on the first page the runs
    in flight, then the ended ones from `after` on, ordered by (start time, run id) descending
    so that no run is shown twice or skipped between pages. At most three store reads (the
    first page: the runs in flight, the top of the ended ones, the ties at its edge; a later
    one: the ties at its cursor instead of the runs in flight)."""
    limit = max(1, min(limit, MAX_PAGE))
    store, base = lh.store, where.store_filters()
    live: list[JobRunRecord] = []
    if after is None and (where.outcome is None or where.outcome == RunOutcome.RUNNING):
        flying = sorted(lh.reader.runs.in_flight(), key=lambda r: r.event_time, reverse=True)
        records = [JobRunRecord.in_flight(r, None) for r in flying if r.dataset_id is None]
        live = [r for r in records if where.admits(r)][:limit]
    if where.outcome == RunOutcome.RUNNING:
        return RunsPage(live, None, True)
    found: list[PipelineRunRow] = []
    if after is not None:  # the runs that started at the cursor's very time, after it
        ties = store.read(PipelineRunRow, filters=[*base, ("start_time", "=", after.start_time)])
        found += [r for r in ties if _key(r) < (after.start_time, after.run_id)]
    older = [*base, ("start_time", "<", after.start_time)] if after is not None else base
    top = store.read(PipelineRunRow, filters=older, newest_first="start_time", limit=limit + 1)
    if len(top) > limit:  # the store's order leaves ties at the edge in any order: take all
        edge = top[-1].start_time
        found += [r for r in top if r.start_time > edge]
        found += store.read(PipelineRunRow, filters=[*older, ("start_time", "=", edge)])
    else:
        found += top
    found.sort(key=_key, reverse=True)
    shown = found[:limit]
    more = len(found) > limit
    runs = [*live, *(JobRunRecord.from_row(r) for r in shown)]
    cursor = Cursor(shown[-1].start_time, shown[-1].pipeline_logging_id) if more else None
    return RunsPage(runs, cursor, after is None)


@dataclass(frozen=True, slots=True)
class TaskView:
    """One task of a run as its page lists it."""

    dataset_id: str
    outcome: str
    attempt: RunHistoryRow | None  # None: never attempted in this run
    error: str | None


def run_tasks(
    lh: Lakehouse, record: JobRunRecord, attempts: Sequence[RunHistoryRow]
) -> list[TaskView]:
    """Each task of the run's job with its outcome: its attempts in this run (a retried task
    has several), then the job's tasks it never attempted: PENDING while it runs, then as
    `untried` says (SKIPPED, or FAILED when the run failed before any task began)."""
    shown = [
        TaskView(
            a.dataset_id,
            attempt_outcome(a.status, a.data_version, a.rows_written),
            a,
            a.error_message,
        )
        for a in attempts
    ]
    tried = {a.dataset_id for a in attempts}
    job = lh.reader.definitions.registry().jobs.get(record.pipeline_id)
    tasks = sorted(job.tasks, key=lambda t: t.execution_order) if job is not None else []
    ended = record.status not in IN_FLIGHT
    for task in tasks:
        if task.dataset_id in tried:
            continue
        if not ended:
            shown.append(TaskView(task.dataset_id, str(RunOutcome.PENDING), None, None))
            continue
        word, why = untried(bool(attempts), str(record.status), record.error_message)
        shown.append(TaskView(task.dataset_id, word, None, why))
    return shown


@dataclass(frozen=True, slots=True)
class TaskRow:
    """A run's task as the API's `RunDetail.tasks` gives it (the page's words)."""

    dataset_id: str
    outcome: str
    attempt_id: str | None  # None: never attempted in this run
    error: str | None


def task_rows(tasks: Sequence[TaskView]) -> list[TaskRow]:
    """A run's tasks as the API's `RunDetail.tasks` is to give them (the page's words)."""
    return [
        TaskRow(
            dataset_id=t.dataset_id,
            outcome=t.outcome,
            attempt_id=None if t.attempt is None else t.attempt.run_id,
            error=t.error,
        )
        for t in tasks
    ]


def untried(others_tried: bool, status: str, error: str | None) -> tuple[str, str]:
    """The word and the why of a task an ended run never attempted: SKIPPED when the run
    attempted others (one it depends on did not succeed, or the run was aborted or out of
    time), FAILED when the run failed before any task began (a lease it could not take...)."""
    if not others_tried and status == "FAILED":
        return str(RunOutcome.FAILED), f"the run failed before any task began: {error or '?'}"
    why = "not attempted: a task it depends on did not succeed, or the run stopped first"
    return str(RunOutcome.SKIPPED), f"{why} ({error})" if error else why


@dataclass(frozen=True, slots=True)
class AttemptView:
    """One run that touched a dataset, as the dataset's page lists it."""

    run_id: str  # the job run
    job_id: str | None
    attempt_id: str | None  # the dataset attempt (None: skipped)
    outcome: str
    start_time: datetime
    error: str | None
    data_version: int | None
    rows_read: int | None
    rows_written: int | None


@dataclass(frozen=True, slots=True)
class DatasetRuns:
    attempts: list[AttemptView]  # newest first
    jobs: list[str]  # the jobs with a task of the dataset


def dataset_attempts(lh: Lakehouse, dataset_id: str, limit: int) -> DatasetRuns:
    """The newest `limit` runs that touched `dataset_id`, newest first: each attempt at it
    (PROMOTED, HELD, FAILED, NOTHING-NEW, with its error) and each ended run of a job with a
    task of it that never attempted it (SKIPPED, or FAILED when the run failed before any
    task began; see `untried`). At most three store reads."""
    store = lh.store
    rows = store.read(
        RunHistoryRow,
        filters=[("dataset_id", "=", dataset_id)],
        newest_first="start_time",
        limit=limit,
    )
    jobs = sorted(
        j.job_id
        for j in lh.reader.definitions.registry().jobs.values()
        if any(t.dataset_id == dataset_id for t in j.tasks)
    )
    found = [
        AttemptView(
            run_id=r.pipeline_logging_id,
            job_id=None,
            attempt_id=r.run_id,
            outcome=attempt_outcome(r.status, r.data_version, r.rows_written),
            start_time=r.start_time,
            error=r.error_message,
            data_version=r.data_version,
            rows_read=r.rows_read,
            rows_written=r.rows_written,
        )
        for r in rows
    ]
    if jobs:
        since = min(r.start_time for r in rows) if len(rows) >= limit else None
        filters: list[tuple[str, str, Any]] = [("pipeline_id", "in", jobs)]
        if since is not None:
            filters.append(("start_time", ">=", since))
        runs = store.read(PipelineRunRow, filters=filters, newest_first="start_time", limit=limit)
        tried = {r.pipeline_logging_id for r in rows}
        untouched = [r for r in runs if r.pipeline_logging_id not in tried]
        others = (
            {  # which of those attempted another dataset: one read for them all
                r.pipeline_logging_id
                for r in store.read(
                    RunHistoryRow,
                    filters=[
                        ("pipeline_logging_id", "in", [r.pipeline_logging_id for r in untouched])
                    ],
                )
            }
            if untouched
            else set()
        )
        for run in untouched:
            word, why = untried(
                run.pipeline_logging_id in others, str(run.status), run.error_message
            )
            found.append(
                AttemptView(
                    run_id=run.pipeline_logging_id,
                    job_id=run.pipeline_id,
                    attempt_id=None,
                    outcome=word,
                    start_time=run.start_time,
                    error=why,
                    data_version=None,
                    rows_read=None,
                    rows_written=None,
                )
            )
    found.sort(key=lambda a: (a.start_time, a.run_id), reverse=True)
    return DatasetRuns(found[:limit], jobs)
