"""Which run rows and checks are events, and what each says (pure).

An event is derived from the row that caused it — a dataset attempt's terminal `run_history`
row (with its decision), a job run's `pipeline_runs` row, a freshness check of a dataset's
latest approved version — and its id from that row's id, so deriving it again (after a crash,
by a second process, on the next pass) gives the same event, which is recorded once
(`lakeguard.actors.alerts.outbox`). Nothing is written in the run's own commits: a run that crashes
after its terminal row loses no event, and one that crashes before it has no row yet (the
reaper's FAILED row is then the cause).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Required, TypedDict

from lakeguard.records.decisions.records import DecisionRecord
from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.evidence import CheckResult
from lakeguard.records.runs.rows import PipelineRunRow, RunHistoryRow
from lakeguard.rules.alerts.text import decision_text
from lakeguard.words.hashing import digest
from lakeguard.words.vocabulary import AlertEvent, AlertSeverity, AttemptStatus, JobStatus, Outcome

SEVERITY: dict[AlertEvent, AlertSeverity] = {
    AlertEvent.BLOCKED: AlertSeverity.CRITICAL,
    AlertEvent.FAILED: AlertSeverity.CRITICAL,
    AlertEvent.STUCK: AlertSeverity.CRITICAL,
    AlertEvent.SLA_MISSED: AlertSeverity.WARNING,
    AlertEvent.ALERT: AlertSeverity.WARNING,
    AlertEvent.WARN: AlertSeverity.INFO,
    AlertEvent.RECOVERED: AlertSeverity.INFO,
}
CAUSES = frozenset(e for e in AlertEvent if e is not AlertEvent.RECOVERED)


def job_subject(job_id: str) -> str:
    return f"job:{job_id}"


def event_id(tenant: str, event: AlertEvent, cause_key: str) -> str:
    """An event's id: derived from what caused it, so deriving it again gives the same."""
    return digest(f"{tenant}|{event}|{cause_key}", 32)


class Cause(TypedDict, total=False):
    """What every event of one cause row shares (the `Occurrence` fields it fills)."""

    subject: Required[str]
    cause_key: Required[str]
    occurred_at: Required[datetime]
    dataset_id: str | None
    job_id: str | None
    run_id: str | None
    pipeline_run_id: str | None
    decision_id: str | None
    page: str | None


@dataclass(frozen=True, kw_only=True)
class Occurrence:
    """One event as derived from its cause, before it is placed in an incident."""

    event: AlertEvent
    subject: str
    cause_key: str  # the cause row's id: the event's id is derived from it
    title: str
    explain: str
    occurred_at: datetime
    dataset_id: str | None = None
    job_id: str | None = None
    run_id: str | None = None
    pipeline_run_id: str | None = None
    decision_id: str | None = None
    page: str | None = None
    # what routes filter on (`incidents.details` reads them back): JSON when stored
    details: Mapping[str, object] = field(default_factory=dict)
    resolves: frozenset[AlertEvent] = frozenset()  # RECOVERED: the causes it closes

    @property
    def severity(self) -> AlertSeverity:
        return SEVERITY[self.event]

    def event_id(self, tenant: str) -> str:
        return event_id(tenant, self.event, self.cause_key)


def _failure_text(what: str, error: str | None) -> str:
    error = error or "no error was recorded"
    why, _, fix = error.partition(" — fix: ")
    lines = [f"what: {what}", f"why: {why}"]
    if fix:
        lines += ["fix:", f"  - {fix}"]
    return "\n".join(lines)


def attempt_events(
    attempt: RunHistoryRow, decision: DecisionRecord | None, *, final: bool
) -> list[Occurrence]:
    """What a dataset attempt's terminal row tells: BLOCKED (and STUCK when it is), FAILED
    (only once no retry will follow: `final`), or, for a success, RECOVERED with the ALERT
    and WARN it logged."""
    dataset = attempt.dataset_id
    key = f"run_history:{attempt.run_id}"
    common: Cause = {
        "subject": dataset,
        "cause_key": key,
        "dataset_id": dataset,
        "run_id": attempt.run_id,
        "pipeline_run_id": attempt.pipeline_logging_id,
        "occurred_at": attempt.end_time,
        "decision_id": decision.decision_id if decision else None,
        "page": f"/datasets/{dataset}/decisions/{attempt.run_id}" if decision else None,
    }
    explain = decision_text(decision) if decision else None
    if attempt.status == AttemptStatus.BLOCKED:
        found = [
            Occurrence(
                event=AlertEvent.BLOCKED,
                title=f"{dataset}: promotion blocked",
                explain=explain or _failure_text(f"{dataset} blocked", attempt.error_message),
                **common,
            )
        ]
        if decision is not None and decision.stuck:
            found.append(
                Occurrence(
                    event=AlertEvent.STUCK,
                    title=f"{dataset}: stuck, blocked again on the same input",
                    explain=explain or decision.stuck,
                    **common,
                )
            )
        return found
    if attempt.status == AttemptStatus.FAILED:
        if not final:
            return []
        what = f"{dataset}: attempt {attempt.run_id} of run {attempt.pipeline_logging_id} FAILED"
        failed: Cause = {**common, "page": f"/runs/{attempt.pipeline_logging_id}"}
        return [
            Occurrence(
                event=AlertEvent.FAILED,
                title=f"{dataset}: run failed",
                explain=_failure_text(what, attempt.error_message),
                **failed,
            )
        ]
    found = []
    if decision is not None and decision.allowed:
        alerts = [c for c in decision.evidence.checks if c.result == CheckResult.ALERT]
        if alerts:
            names = ", ".join(c.name for c in alerts)
            found.append(
                Occurrence(
                    event=AlertEvent.ALERT,
                    title=f"{dataset}: promoted with an alert ({names})",
                    explain=explain or names,
                    details={"checks": [c.name for c in alerts]},
                    **common,
                )
            )
        warned = {
            r.rule_id: (r.failed_rows / r.rows_evaluated if r.rows_evaluated else 0.0)
            for r in decision.rules
            if r.outcome == Outcome.WARN
        }
        if warned:
            found.append(
                Occurrence(
                    event=AlertEvent.WARN,
                    title=f"{dataset}: WARN rule(s) {', '.join(sorted(warned))} failing",
                    explain=explain or "",
                    details={"warn_shares": warned},
                    **common,
                )
            )
    raised = frozenset(o.event for o in found)
    closes = CAUSES - raised if attempt.data_version is not None else {AlertEvent.FAILED}
    version = f" version {attempt.data_version}" if attempt.data_version is not None else ""
    found.append(
        Occurrence(
            event=AlertEvent.RECOVERED,
            title=f"{dataset}: recovered (attempt {attempt.status}{version})",
            explain=explain or f"what: {dataset}: attempt {attempt.run_id} SUCCESS{version}",
            resolves=frozenset(closes),
            **common,
        )
    )
    return found


def job_events(run: PipelineRunRow, *, attempts_failed: bool, final: bool) -> list[Occurrence]:
    """A job run that failed before (or besides) any dataset attempt failing — its leases
    were held, its definitions refused — is an event of the job; its next completed run
    recovers it."""
    subject = job_subject(run.pipeline_id)
    common: Cause = {
        "subject": subject,
        "cause_key": f"pipeline_runs:{run.pipeline_logging_id}",
        "job_id": run.pipeline_id,
        "pipeline_run_id": run.pipeline_logging_id,
        "occurred_at": run.end_time,
        "page": f"/runs/{run.pipeline_logging_id}",
    }
    if run.status == JobStatus.FAILED:
        if attempts_failed or not final:
            return []  # its dataset's failure is the event
        what = f"job {run.pipeline_id}: run {run.pipeline_logging_id} FAILED"
        return [
            Occurrence(
                event=AlertEvent.FAILED,
                title=f"job {run.pipeline_id}: run failed",
                explain=_failure_text(what, run.error_message),
                **common,
            )
        ]
    if run.status == JobStatus.COMPLETED:
        return [
            Occurrence(
                event=AlertEvent.RECOVERED,
                title=f"job {run.pipeline_id}: completed",
                explain=f"what: job {run.pipeline_id}: run {run.pipeline_logging_id} completed",
                resolves=frozenset({AlertEvent.FAILED}),
                **common,
            )
        ]
    return []


def sla_event(
    dataset_id: str, latest: ApprovedVersion, sla_hours: float, now: datetime
) -> Occurrence | None:
    """A freshness SLA missed: no approved version since the latest one for longer than the
    SLA (one event per stale version; the next promotion recovers it)."""
    if latest.promoted_at is None:
        return None
    due = latest.promoted_at + timedelta(hours=sla_hours)
    if now <= due:
        return None
    age = (now - latest.promoted_at).total_seconds() / 3600
    what = (
        f"what: {dataset_id}: no approved version for {age:.1f} h, over its freshness SLA of "
        f"{sla_hours:g} h (the latest is version {latest.version}, promoted "
        f"{latest.promoted_at:%Y-%m-%d %H:%M:%S} UTC)"
    )
    return Occurrence(
        event=AlertEvent.SLA_MISSED,
        subject=dataset_id,
        cause_key=f"sla:{dataset_id}@v{latest.version}",
        title=f"{dataset_id}: freshness SLA of {sla_hours:g} h missed",
        explain=what + "\nwhy: no run has promoted a new version since\nfix:\n"
        "  - check its feed (did the source stop delivering?), its job's schedule and "
        "triggers, and its latest runs (laketx runs, laketx explain)",
        occurred_at=due,
        dataset_id=dataset_id,
        page=f"/datasets/{dataset_id}",
        details={"sla_hours": sla_hours, "version": latest.version},
    )
