"""The alert incidents as the API and the dashboard answer them: typed records of each
incident, its events and each event's deliveries (docs/alerts.md), the caller's tenant only."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from lakeguard.records.alerts.event_rows import DeliveryRow, IncidentEventRow
from lakeguard.rules.alerts.incidents import Incident, details
from lakeguard.words.errors import NotRegisteredError
from openlaketx.lakehouse import Lakehouse

Status = Literal["open", "resolved", "all"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DeliveryEntry(_Model):
    """One row of a delivery: a claim, an attempt's outcome, a suppressed repeat."""

    delivery_id: str
    channel_id: str
    route_id: str
    action: str
    attempt: int
    status_code: int | None
    error: str | None
    at: datetime
    next_attempt_at: datetime | None


class IncidentEventEntry(_Model):
    event_id: str
    action: str
    severity: str
    title: str
    explain: str
    run_id: str | None
    pipeline_run_id: str | None
    decision_id: str | None
    page: str | None
    details: dict[str, object]
    occurred_at: datetime
    recorded_at: datetime
    deliveries: list[DeliveryEntry]


class IncidentEntry(_Model):
    incident_id: str
    subject: str
    dataset_id: str | None
    job_id: str | None
    cause: str
    severity: str
    status: Literal["open", "resolved"]
    title: str
    opened_at: datetime
    last_seen: datetime
    resolved_at: datetime | None
    repeats: int
    events: list[IncidentEventEntry]


class IncidentList(_Model):
    incidents: list[IncidentEntry]
    next_offset: int | None


def _delivery(row: DeliveryRow) -> DeliveryEntry:
    return DeliveryEntry(
        delivery_id=row.delivery_id,
        channel_id=row.channel_id,
        route_id=row.route_id,
        action=str(row.action),
        attempt=row.attempt,
        status_code=row.status_code,
        error=row.error,
        at=row.at,
        next_attempt_at=row.next_attempt_at,
    )


def _event(row: IncidentEventRow, deliveries: list[DeliveryRow]) -> IncidentEventEntry:
    return IncidentEventEntry(
        event_id=row.event_id,
        action=str(row.action),
        severity=str(row.severity),
        title=row.title,
        explain=row.explain,
        run_id=row.run_id,
        pipeline_run_id=row.pipeline_run_id,
        decision_id=row.decision_id,
        page=row.page,
        details=details(row),
        occurred_at=row.occurred_at,
        recorded_at=row.recorded_at,
        deliveries=[_delivery(d) for d in deliveries],
    )


def entry(incident: Incident) -> IncidentEntry:
    return IncidentEntry(
        incident_id=incident.incident_id,
        subject=incident.subject,
        dataset_id=incident.dataset_id,
        job_id=incident.opened.job_id,
        cause=str(incident.cause),
        severity=str(incident.severity),
        status="open" if incident.open else "resolved",
        title=incident.opened.title,
        opened_at=incident.opened_at,
        last_seen=incident.last_seen,
        resolved_at=incident.resolved_at,
        repeats=incident.repeats,
        events=[_event(e, incident.deliveries.get(e.event_id, [])) for e in incident.events],
    )


def incidents(
    lh: Lakehouse, status: Status = "all", limit: int = 50, offset: int = 0
) -> IncidentList:
    """The tenant's incidents, newest opened first (open ones or resolved ones only)."""
    found = [i for i in lh.incidents() if status == "all" or (status == "open") == i.open]
    page = found[offset : offset + limit]
    more = offset + limit < len(found)
    return IncidentList(
        incidents=[entry(i) for i in page], next_offset=offset + limit if more else None
    )


def incident(lh: Lakehouse, incident_id: str) -> IncidentEntry:
    """One incident of the tenant (404 when it is not one of the tenant's)."""
    for found in lh.incidents():
        if found.incident_id == incident_id:
            return entry(found)
    raise NotRegisteredError(f"no incident {incident_id}", where="incident_events")
