"""The alert outbox: events derived from the run rows that caused them and from freshness
checks, each recorded once in `incident_events` (docs/alerts.md, "Delivered once").

A pass (`Outbox.ingest`, run by the dispatcher) reads the run rows of the look-back window
(`run_history`, `pipeline_runs`, `promotion_status`), derives their events
(`lakeguard.rules.alerts.events`), and appends those not recorded yet, placed in their incidents, by
one compare-and-set append on the snapshot in which they were seen missing: two processes
record each event once, and a crash anywhere loses none (its cause row is still there for the
next pass). Runs write nothing for it: no metadata commit and no Spark job on the write path.
`Outbox.check_sla` (each scheduler pass) records a dataset whose latest approved version is
older than its freshness SLA, with no run needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from lakeguard.reads.reader import StoreReader
from lakeguard.reads.registry import Registry
from lakeguard.records.alerts.event_rows import DeliveryRow, IncidentEventRow
from lakeguard.records.decisions.records import DecisionRecord
from lakeguard.records.decisions.rows import DataVersionRow, DecisionRow
from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.evidence import CheckResult, Evidence
from lakeguard.records.runs.rows import PipelineRunRow, RunHistoryRow
from lakeguard.records.stuck import Blocked, stuck
from lakeguard.rules.alerts.events import (
    CAUSES,
    Occurrence,
    attempt_events,
    event_id,
    job_events,
    job_subject,
    sla_event,
)
from lakeguard.rules.alerts.incidents import Incident, fold, place, with_deliveries
from lakeguard.rules.policy.sla import sla_hours
from lakeguard.store.requests import find, recorded
from lakeguard.words.vocabulary import AlertEvent, AttemptStatus, JobStatus, Outcome

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

# Run rows this old are still turned into events (a dispatcher down for less loses none).
LOOKBACK_DAYS = 7
# A failed run of a job with retries left is an event once no retry was accepted this long
# after it ended (the service accepts a retry as the run ends).
RETRY_GRACE = timedelta(seconds=30)
# A dataset attempt whose job run has no terminal row yet is judged after this (a crash).
ORPHAN_GRACE = timedelta(hours=12)


class Outbox:
    """One tenant's events: derived, placed in their incidents, recorded once."""

    def __init__(self, store: MetadataStore, clock: Callable[[], datetime] | None = None) -> None:
        self.store = store
        self.reader = StoreReader(store)
        self.clock = clock or store.now

    # -- reading ----------------------------------------------------------------------------
    def events(self) -> list[IncidentEventRow]:
        """Every recorded event of the tenant."""
        return self.store.read(IncidentEventRow)

    def incidents(self) -> list[Incident]:
        """Every incident of the tenant, newest opened first, with its events and each
        event's deliveries."""
        return with_deliveries(fold(self.events()), self.store.read(DeliveryRow))

    # -- recording --------------------------------------------------------------------------
    def record(
        self, occurrences: Sequence[Occurrence], now: datetime | None = None
    ) -> list[IncidentEventRow]:
        """Append the occurrences not recorded yet, placed in their incidents (one
        compare-and-set commit, or none when all are recorded); the rows appended."""
        if not occurrences:
            return []
        when = now or self.clock()
        subjects = sorted({o.subject for o in occurrences})

        def decide(rows: list[IncidentEventRow]) -> list[IncidentEventRow] | None:
            new = place(occurrences, rows, tenant=self.store.tenant, now=when)
            return new or None

        appended = self.store.append_if(
            IncidentEventRow, decide, filters=[("subject", "in", subjects)]
        )
        return list(appended or [])

    def ingest(self, registry: Registry, now: datetime | None = None) -> list[IncidentEventRow]:
        """Record the events of the look-back window's run rows that are not recorded yet."""
        when = now or self.clock()
        found = self.derive(registry, when)
        return self.record(found, when)

    def check_sla(self, registry: Registry, now: datetime | None = None) -> list[IncidentEventRow]:
        """Record an SLA_MISSED event for each dataset whose latest approved version is older
        than its freshness SLA (the tightest `hours_since_approved` bound of the SLA policies
        of its layer); a dataset never promoted has no feed to miss yet."""
        when = now or self.clock()
        slas = {
            d.dataset_id: hours
            for d in registry.datasets.values()
            if (hours := sla_hours(registry.policies, d.layer)) is not None
        }
        if not slas:
            return []
        rows = self.store.read(
            DataVersionRow,
            filters=[("dataset_id", "in", sorted(slas))],
            newest_first="version",
            limit=1,
            per="dataset_id",
        )
        found = [
            event
            for row in rows
            if (
                event := sla_event(
                    row.dataset_id, ApprovedVersion.from_row(row), slas[row.dataset_id], when
                )
            )
            is not None
        ]
        return self.record(found, when)

    # -- deriving ---------------------------------------------------------------------------
    def derive(self, registry: Registry, now: datetime) -> list[Occurrence]:
        """The occurrences of the window's run rows that are not recorded yet, and the
        recoveries that close an open incident."""
        since = self.store.since(LOOKBACK_DAYS, now)
        attempts = sorted(
            self.store.read(RunHistoryRow, filters=[("run_date", ">=", since)]),
            key=lambda a: a.end_time,
        )
        runs = {
            r.pipeline_logging_id: r
            for r in self.store.read(PipelineRunRow, filters=[("run_date", ">=", since)])
        }
        decisions = sorted(
            self.store.read(DecisionRow, filters=[("evaluated_date", ">=", since)]),
            key=lambda d: d.evaluated_at,
        )
        recorded_rows = self.events()
        known = {r.event_id for r in recorded_rows}
        # each open incident's (subject, cause), and when it opened: a recovery closes only
        # what opened before it
        opened_at = {(i.subject, i.cause): i.opened_at for i in fold(recorded_rows) if i.open}
        by_run = {d.run_id: d for d in decisions}
        tenant = self.store.tenant
        found: list[Occurrence] = []

        def new(event: AlertEvent, cause_key: str) -> bool:
            return event_id(tenant, event, cause_key) not in known

        for attempt in attempts:
            key = f"run_history:{attempt.run_id}"
            row = by_run.get(attempt.run_id)
            if attempt.status == AttemptStatus.BLOCKED:
                if not (new(AlertEvent.BLOCKED, key) or new(AlertEvent.STUCK, key)):
                    continue
                found += self._explained(attempt, row, decisions, final=True)
            elif attempt.status == AttemptStatus.FAILED:
                if not new(AlertEvent.FAILED, key):
                    continue
                run = runs.get(attempt.pipeline_logging_id)
                if run is None:
                    final = now - attempt.end_time >= ORPHAN_GRACE
                else:
                    final = self._final(run, registry, now)
                if final:
                    found += attempt_events(attempt, None, final=True)
            else:
                evidence = Evidence.from_json(row.evidence) if row is not None else Evidence()
                raises = {
                    AlertEvent.ALERT
                    for c in evidence.checks
                    if c.result == CheckResult.ALERT and row is not None and row.allowed
                } | {
                    AlertEvent.WARN
                    for outcome in evidence.rules.values()
                    if outcome == Outcome.WARN and row is not None and row.allowed
                }
                closes = (
                    CAUSES - raises if attempt.data_version is not None else {AlertEvent.FAILED}
                )
                opening = {
                    *(k for k, at in opened_at.items() if at <= attempt.end_time),
                    *((o.subject, o.event) for o in found),
                }
                recovers = any((attempt.dataset_id, c) in opening for c in closes)
                if not (recovers or any(new(e, key) for e in raises)):
                    continue
                found += self._explained(attempt, row, decisions, final=True)
        # a job run whose dataset failed or was blocked (an abort) is told by that dataset
        failed_runs = {
            a.pipeline_logging_id
            for a in attempts
            if a.status in (AttemptStatus.FAILED, AttemptStatus.BLOCKED)
        }
        for run in sorted(runs.values(), key=lambda r: r.end_time):
            key = f"pipeline_runs:{run.pipeline_logging_id}"
            subject = job_subject(run.pipeline_id)
            if run.status == JobStatus.FAILED:
                if run.pipeline_logging_id in failed_runs or not new(AlertEvent.FAILED, key):
                    continue
                if self._final(run, registry, now):
                    found += job_events(run, attempts_failed=False, final=True)
            elif run.status == JobStatus.COMPLETED and (
                opened_at.get((subject, AlertEvent.FAILED), run.end_time) < run.end_time
                or (subject, AlertEvent.FAILED) in {(o.subject, o.event) for o in found}
            ):
                found += job_events(run, attempts_failed=False, final=True)
        return found

    def _explained(
        self,
        attempt: RunHistoryRow,
        row: DecisionRow | None,
        decisions: Sequence[DecisionRow],
        *,
        final: bool,
    ) -> list[Occurrence]:
        """The attempt's events, with its decision as `laketx explain` shows it (and whether
        the dataset was stuck as of this decision, from the decisions up to it)."""
        record: DecisionRecord | None = None
        if row is not None:
            record = self.reader.decisions.latest_decision(attempt.dataset_id, attempt.run_id)
            if record is not None:
                before = [
                    Blocked.from_row(d)
                    for d in decisions
                    if d.dataset_id == attempt.dataset_id and d.evaluated_at <= row.evaluated_at
                ]
                blocked = stuck(before)
                record = replace(record, stuck=blocked.summary() if blocked else None)
        return attempt_events(attempt, record, final=final)

    def _final(self, run: PipelineRunRow, registry: Registry, now: datetime) -> bool:
        """Whether a failed job run is the last of its line: no retry was accepted for it and
        none will be (its job retries nothing, or it was not accepted by the service, or its
        retries are spent, or the service had the time to accept one and did not)."""
        if recorded(self.store, f"retry:{run.pipeline_logging_id}") is not None:
            return False
        request = find(self.store, run.pipeline_logging_id)
        job = registry.job(run.pipeline_id)
        retries = job.max_retries if job is not None else 0
        if request is None or retries == 0:
            return True
        used, current = 0, request
        while current.retry_of is not None and used < 100:
            used += 1
            earlier = find(self.store, current.retry_of)
            if earlier is None:
                break
            current = earlier
        return used >= retries or now - run.end_time >= RETRY_GRACE
