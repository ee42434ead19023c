"""Incidents, folded from the `incident_events` log (pure): one per (subject, cause) while it
is open. An event whose cause has an open incident joins it (REPEATED); one that has none
opens one (OPENED, its id the incident's); a recovery resolves the subject's open incidents
of the causes it closes (RESOLVED). Nothing is updated: the state is read off the rows."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from lakeguard.records.alerts.event_rows import DeliveryRow, IncidentEventRow
from lakeguard.rules.alerts.events import Occurrence
from lakeguard.words.hashing import digest, to_json
from lakeguard.words.vocabulary import AlertEvent, AlertSeverity, DeliveryAction, IncidentAction


@dataclass
class Incident:
    """One incident and its events, oldest first."""

    incident_id: str
    subject: str
    cause: AlertEvent
    events: list[IncidentEventRow] = field(default_factory=list)
    # each event's delivery rows (claims, attempts, outcomes), oldest first, when read with them
    deliveries: dict[str, list[DeliveryRow]] = field(default_factory=dict)

    @property
    def opened(self) -> IncidentEventRow:
        return self.events[0]

    @property
    def open(self) -> bool:
        return self.events[-1].action != IncidentAction.RESOLVED

    @property
    def opened_at(self) -> datetime:
        return self.opened.occurred_at

    @property
    def resolved_at(self) -> datetime | None:
        return None if self.open else self.events[-1].occurred_at

    @property
    def last_seen(self) -> datetime:
        return max(e.occurred_at for e in self.events if e.action != IncidentAction.RESOLVED)

    @property
    def severity(self) -> AlertSeverity:
        return self.opened.severity

    @property
    def repeats(self) -> int:
        return sum(1 for e in self.events if e.action == IncidentAction.REPEATED)

    @property
    def dataset_id(self) -> str | None:
        return self.opened.dataset_id


def fold(rows: Iterable[IncidentEventRow]) -> list[Incident]:
    """Every incident the rows make, newest opened first (each event once by its id)."""
    seen: set[str] = set()
    found: dict[str, Incident] = {}
    for row in sorted(rows, key=lambda r: (r.recorded_at, r.occurred_at)):
        if row.event_id in seen:
            continue
        seen.add(row.event_id)
        incident = found.setdefault(
            row.incident_id, Incident(row.incident_id, row.subject, row.cause)
        )
        incident.events.append(row)
    return sorted(found.values(), key=lambda i: i.opened_at, reverse=True)


def delivery_order(row: DeliveryRow) -> tuple[int, datetime, int]:
    """A delivery's rows in the order they happened: an attempt's claim before its outcome,
    even at the same instant."""
    return (row.attempt, row.at, 0 if row.action == DeliveryAction.CLAIMED else 1)


def with_deliveries(incidents: list[Incident], rows: Iterable[DeliveryRow]) -> list[Incident]:
    """`incidents`, each event with its delivery rows."""
    by_event: dict[str, list[DeliveryRow]] = {}
    for row in sorted(rows, key=lambda r: (r.delivery_id, *delivery_order(r))):
        by_event.setdefault(row.event_id, []).append(row)
    for incident in incidents:
        incident.deliveries = {e.event_id: by_event.get(e.event_id, []) for e in incident.events}
    return incidents


def place(
    occurrences: Sequence[Occurrence],
    rows: Iterable[IncidentEventRow],
    *,
    tenant: str,
    now: datetime,
) -> list[IncidentEventRow]:
    """The rows to append for `occurrences` that are not recorded yet, each in its incident:
    `rows` are the recorded events of their subjects (recorded ones are skipped by id)."""
    recorded = list(rows)
    known = {r.event_id for r in recorded}
    open_by: dict[tuple[str, AlertEvent], Incident] = {
        (i.subject, i.cause): i for i in fold(recorded) if i.open
    }
    new: list[IncidentEventRow] = []
    ordered = sorted(occurrences, key=lambda o: (o.occurred_at, o.event == AlertEvent.RECOVERED))
    for occurrence in ordered:
        event_id = occurrence.event_id(tenant)
        if occurrence.event == AlertEvent.RECOVERED:
            for cause in sorted(occurrence.resolves):
                incident = open_by.get((occurrence.subject, cause))
                if incident is None or incident.opened_at > occurrence.occurred_at:
                    continue
                resolved_id = digest(f"{event_id}|{incident.incident_id}", 32)
                if resolved_id in known:
                    continue
                row = _row(occurrence, resolved_id, incident.incident_id, cause, tenant, now)
                row = _as(row, IncidentAction.RESOLVED)
                new.append(row)
                known.add(resolved_id)
                incident.events.append(row)
                del open_by[(occurrence.subject, cause)]
            continue
        if event_id in known:
            continue
        key = (occurrence.subject, occurrence.event)
        incident = open_by.get(key)
        if incident is None:
            row = _row(occurrence, event_id, event_id, occurrence.event, tenant, now)
            incident = Incident(event_id, occurrence.subject, occurrence.event, [row])
            open_by[key] = incident
        else:
            row = _as(
                _row(occurrence, event_id, incident.incident_id, occurrence.event, tenant, now),
                IncidentAction.REPEATED,
            )
            incident.events.append(row)
        new.append(row)
        known.add(event_id)
    return new


def _row(
    o: Occurrence, event_id: str, incident_id: str, cause: AlertEvent, tenant: str, now: datetime
) -> IncidentEventRow:
    return IncidentEventRow(
        event_id=event_id,
        tenant_id=tenant,
        incident_id=incident_id,
        subject=o.subject,
        dataset_id=o.dataset_id,
        job_id=o.job_id,
        cause=cause,
        action=IncidentAction.OPENED,
        severity=o.severity,
        title=o.title,
        explain=o.explain,
        run_id=o.run_id,
        pipeline_run_id=o.pipeline_run_id,
        decision_id=o.decision_id,
        page=o.page,
        cause_key=o.cause_key,
        details=to_json(o.details) if o.details else None,
        occurred_at=o.occurred_at,
        recorded_at=now,
    )


def _as(row: IncidentEventRow, action: IncidentAction) -> IncidentEventRow:
    return replace(row, action=action)


def details(row: IncidentEventRow) -> dict[str, object]:
    """An event's details (what routes filter on), parsed."""
    try:
        value = json.loads(row.details or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
