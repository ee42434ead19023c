"""Who was told what: incidents folded from their events, and each delivery of an event to a
channel folded from its claims and attempts (docs/alerts.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.runtime import RuntimeRow
from lakeguard.records.rows.schema import Comment, Int32, RuntimeTable
from lakeguard.words.vocabulary import AlertEvent, AlertSeverity, DeliveryAction, IncidentAction


@dataclass(frozen=True, kw_only=True)
class IncidentEventRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="incident_events",
        comment=(
            "The alert outbox and the incidents in one log: one row per event (its id derived "
            "from the run row or check that caused it, so it is recorded once), an incident per "
            "(subject, cause) folded from its OPENED, REPEATED and RESOLVED rows."
        ),
        day="recorded_date",
        date_of="recorded_at",
        cluster_by=("tenant_id", "subject"),
    )
    event_id: Annotated[str, Comment("Derived from what caused it (a run row's id, a check)")]
    tenant_id: str
    incident_id: Annotated[str, Comment("The incident it belongs to: its OPENED event's id")]
    subject: Annotated[str, Comment("The dataset, or job:<id> for a job that failed alone")]
    dataset_id: str | None = None
    job_id: str | None = None
    cause: Annotated[AlertEvent, Comment("The incident's cause (BLOCKED, FAILED, SLA_MISSED, ...)")]
    action: Annotated[IncidentAction, Comment("OPENED, REPEATED, RESOLVED")]
    severity: Annotated[AlertSeverity, Comment("info, warning, critical")]
    title: Annotated[str, Comment("One line: what happened")]
    explain: Annotated[str, Comment("What, why and the fix, as `laketx explain` says them")]
    run_id: Annotated[str | None, Comment("The dataset attempt (run_history.run_id)")] = None
    pipeline_run_id: Annotated[str | None, Comment("The job run")] = None
    decision_id: Annotated[str | None, Comment("The gate's decision (promotion_status)")] = None
    page: Annotated[str | None, Comment("The dashboard's page for it, from its root")] = None
    cause_key: Annotated[str, Comment("What caused it: run_history:<run>, sla:<dataset>@v<n>")]
    details: Annotated[str | None, Comment("JSON: what routes filter on (WARN shares)")] = None
    occurred_at: Annotated[datetime, Comment("When its cause happened")]
    recorded_at: datetime


@dataclass(frozen=True, kw_only=True)
class DeliveryRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="notification_deliveries",
        comment=(
            "Each delivery of an incident event to a channel, folded from its rows: CLAIMED by "
            "one dispatcher (compare-and-set), then SENT, FAILED (retried later), GAVE_UP or "
            "SUPPRESSED (a repeat inside the route's interval)."
        ),
        day="delivery_date",
        date_of="at",
        cluster_by=("tenant_id", "delivery_id"),
    )
    delivery_id: Annotated[
        str,
        Comment("Derived from the event and the channel: the webhook-id, stable across retries"),
    ]
    tenant_id: str
    event_id: str
    incident_id: str
    channel_id: str
    route_id: str
    action: Annotated[DeliveryAction, Comment("CLAIMED, SENT, FAILED, GAVE_UP, SUPPRESSED")]
    attempt: Annotated[Int32, Comment("1 for the first attempt; a claim names the one it makes")]
    holder: Annotated[str | None, Comment("host:pid of the dispatcher")] = None
    expires_at: Annotated[datetime | None, Comment("A claim's end, unless it is settled")] = None
    next_attempt_at: Annotated[datetime | None, Comment("A failed attempt: not before")] = None
    status_code: Annotated[Int32 | None, Comment("The receiver's HTTP status, or SMTP code")] = None
    error: Annotated[str | None, Comment("Why it failed, naming no secret")] = None
    at: datetime
