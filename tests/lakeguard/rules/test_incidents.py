"""Events and incidents without Spark: events derived from run rows planted in a real store
(as a run writes them), each recorded once whoever derives it and however often, placed in
an incident per (dataset, cause), repeats joining it, a promotion resolving it; a stopped
feed's SLA found with no run; a failure with retries left waiting for its last retry."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from lakeguard.actors.alerts.outbox import RETRY_GRACE, Outbox
from lakeguard.actors.catalog.apply import apply_file
from lakeguard.reads.reader import StoreReader
from lakeguard.records.evidence import CheckKind, CheckRecord, CheckResult
from lakeguard.records.runs.coordination import RunRequestRow
from lakeguard.rules.alerts.events import Occurrence
from lakeguard.rules.alerts.incidents import fold, place
from lakeguard.store import MetadataStore
from lakeguard.words.vocabulary import AlertEvent, AttemptStatus, IncidentAction
from tests.support.planted import T0, Plant
from tests.support.project import cells_yaml, copied_store, write

POLICY = (
    "policies:\n  - {id: daily, type: SLA, applies_to: [bronze], enforcement: ALERT,"
    " expression: 'hours_since_approved <= 24'}\n"
)
JOB_RETRIES = "    max_retries: 2\n"


@pytest.fixture
def store(empty_store_template: Path, tmp_path: Path) -> Iterator[MetadataStore]:
    s = copied_store(empty_store_template, tmp_path / "meta")
    text = POLICY + cells_yaml("_i").replace(
        "  - id: cells_job_i\n", "  - id: cells_job_i\n" + JOB_RETRIES
    )
    apply_file(s, write(tmp_path / "p" / "cells.yaml", text), "/warehouse")
    yield s


def outbox(store: MetadataStore) -> tuple[Outbox, object]:
    return Outbox(store), StoreReader(store).definitions.registry()


def test_a_blocked_attempt_opens_one_incident_repeats_join_it_and_a_promotion_resolves_it(
    store: MetadataStore,
) -> None:
    plant = Plant(store)
    box, registry = outbox(store)
    plant.attempt(AttemptStatus.BLOCKED, allowed=False, error="blocked by FAIL rule lat_range_i")
    first = box.ingest(registry, now=plant.at)
    assert [(r.cause, r.action) for r in first] == [(AlertEvent.BLOCKED, IncidentAction.OPENED)]
    opened = first[0]
    assert "what: bronze_cells_i: source -> bronze BLOCKED" in opened.explain
    assert "fix:" in opened.explain and "lat_range_i" in opened.explain
    assert opened.page == f"/datasets/bronze_cells_i/decisions/{opened.run_id}"
    assert opened.decision_id is not None and opened.pipeline_run_id is not None
    assert box.ingest(registry, now=plant.at) == []  # derived again: recorded once
    plant.attempt(AttemptStatus.BLOCKED, allowed=False)
    again = box.ingest(registry, now=plant.at)
    # the second block repeats the incident, and two in a row on the same input are stuck
    assert {(r.cause, r.action) for r in again} == {
        (AlertEvent.BLOCKED, IncidentAction.REPEATED),
        (AlertEvent.STUCK, IncidentAction.OPENED),
    }
    assert {r.incident_id for r in again if r.cause == AlertEvent.BLOCKED} == {opened.incident_id}
    plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=1)
    resolved = box.ingest(registry, now=plant.at)
    assert sorted((r.cause, r.action) for r in resolved) == [
        (AlertEvent.BLOCKED, IncidentAction.RESOLVED),
        (AlertEvent.STUCK, IncidentAction.RESOLVED),
    ]
    incidents = fold(box.events())
    assert len(incidents) == 2 and not any(i.open for i in incidents)
    blocked = next(i for i in incidents if i.cause == AlertEvent.BLOCKED)
    assert blocked.repeats == 1 and blocked.resolved_at == plant.at
    assert box.ingest(registry, now=plant.at) == []
    # blocked again after the recovery: a new incident
    plant.attempt(AttemptStatus.BLOCKED, allowed=False)
    (new,) = box.ingest(registry, now=plant.at)
    assert new.action == IncidentAction.OPENED and new.incident_id != opened.incident_id


def test_two_processes_deriving_at_once_record_each_event_once(store: MetadataStore) -> None:
    plant = Plant(store)
    for _ in range(3):
        plant.attempt(AttemptStatus.BLOCKED, allowed=False)
    start = threading.Barrier(2)
    results: list[int] = []

    def derive() -> None:
        box, registry = outbox(store)
        start.wait()
        results.append(len(box.ingest(registry, now=plant.at)))

    threads = [threading.Thread(target=derive) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = Outbox(store).events()
    assert len(events) == len({e.event_id for e in events}) == sum(results)
    assert sum(results) == 5  # 3 blocks, and stuck on the second and the third
    assert len(fold(events)) == 2


def test_a_failure_with_retries_left_waits_for_its_last_retry(store: MetadataStore) -> None:
    plant = Plant(store)
    box, registry = outbox(store)
    error = "cannot reach the database (at jdbc) — fix: check the server; the run can be retried"
    first = plant.attempt(AttemptStatus.FAILED, error=error, accepted=True)
    assert box.ingest(registry, now=plant.at) == []  # the service may still retry it
    # the service accepted its retry: this failure is not the last
    store.append_rows(
        [
            RunRequestRow(
                request_key=f"retry:{first.pipeline_logging_id}",
                tenant_id=store.tenant,
                job_id="cells_job_i",
                run_id="retry-1",
                trigger_type="retry",
                triggered_by="test",
                retry_of=first.pipeline_logging_id,
                requested_at=plant.at,
            )
        ]
    )
    assert box.ingest(registry, now=plant.at + RETRY_GRACE * 2) == []
    second = plant.attempt(
        AttemptStatus.FAILED, error=error, accepted=True, retry_of=first.pipeline_logging_id
    )
    assert box.ingest(registry, now=plant.at) == []  # one retry of two used: wait a little
    (failed,) = box.ingest(registry, now=plant.at + RETRY_GRACE)  # none came: it is the last
    assert failed.cause == AlertEvent.FAILED and failed.run_id == second.run_id
    assert "why: cannot reach the database (at jdbc)" in failed.explain
    assert "fix:\n  - check the server" in failed.explain
    assert failed.page == f"/runs/{second.pipeline_logging_id}"
    # a manual run (not accepted by the service) is never retried: at once
    plant.attempt(AttemptStatus.FAILED, error=error)
    (again,) = box.ingest(registry, now=plant.at)
    assert again.action == IncidentAction.REPEATED


def test_alert_and_warn_of_a_promotion_are_events(store: MetadataStore) -> None:
    plant = Plant(store)
    box, registry = outbox(store)
    volume = CheckRecord(
        name="policy:daily_volume", kind=CheckKind.POLICY, result=CheckResult.ALERT, detail="rows 3"
    )
    plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=1, checks=(volume,), warn=True)
    found = {r.cause: r for r in box.ingest(registry, now=plant.at)}
    assert set(found) == {AlertEvent.ALERT, AlertEvent.WARN}
    assert '"radio_known_i":0.3' in (found[AlertEvent.WARN].details or "")
    # the next clean promotion resolves both
    plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=2)
    assert {(r.cause, r.action) for r in box.ingest(registry, now=plant.at)} == {
        (AlertEvent.ALERT, IncidentAction.RESOLVED),
        (AlertEvent.WARN, IncidentAction.RESOLVED),
    }


def test_a_stopped_feed_misses_its_sla_with_no_run_and_the_next_promotion_resolves_it(
    store: MetadataStore,
) -> None:
    plant = Plant(store)
    box, registry = outbox(store)
    plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=1)
    box.ingest(registry, now=plant.at)
    assert box.check_sla(registry, now=plant.at + timedelta(hours=23)) == []
    late = plant.at + timedelta(hours=24, minutes=1)
    (missed,) = box.check_sla(registry, now=late)
    assert missed.cause == AlertEvent.SLA_MISSED and missed.dataset_id == "bronze_cells_i"
    assert missed.occurred_at == plant.at + timedelta(hours=24)
    assert "over its freshness SLA of 24 h" in missed.explain
    assert box.check_sla(registry, now=late + timedelta(hours=5)) == []  # one per stale version
    plant.at = late + timedelta(hours=6)
    plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=2)
    (resolved,) = box.ingest(registry, now=plant.at)
    assert resolved.action == IncidentAction.RESOLVED and resolved.cause == AlertEvent.SLA_MISSED


def test_a_failure_judged_final_after_its_recovery_opens_and_resolves() -> None:
    at = T0
    fail = Occurrence(
        event=AlertEvent.FAILED,
        subject="d",
        cause_key="run_history:a",
        title="t",
        explain="e",
        occurred_at=at,
    )
    recovered = Occurrence(
        event=AlertEvent.RECOVERED,
        subject="d",
        cause_key="run_history:b",
        title="t",
        explain="e",
        occurred_at=at + timedelta(minutes=1),
        resolves=frozenset({AlertEvent.FAILED}),
    )
    both = place([recovered, fail], [], tenant="t", now=at)  # placed in the order they happened
    assert [r.action for r in both] == [IncidentAction.OPENED, IncidentAction.RESOLVED]
    (opened,) = place([fail], [], tenant="t", now=at)
    assert opened.event_id == fail.event_id("t")  # derived from its cause, stable
    assert place([fail, recovered], both, tenant="t", now=at) == []  # recorded once


def test_routes_select_events_by_cause_severity_filters_and_warn_share() -> None:
    from dataclasses import replace as changed

    from lakeguard.actors.alerts.routing import covers
    from lakeguard.records.alerts.records import RouteDef
    from lakeguard.records.definitions.records import DatasetDef
    from lakeguard.rules.alerts.incidents import place as placed
    from lakeguard.words.vocabulary import AlertSeverity, Layer

    ds = DatasetDef(
        dataset_id="d",
        dataset_name="d",
        layer=Layer.SILVER,
        table_name="silver.d",
        domain="telecom",
        owner="radio",
        tags=("critical",),
    )
    at = T0

    def event(kind: AlertEvent, **details: object) -> object:
        o = Occurrence(
            event=kind,
            subject="d",
            cause_key=f"k:{kind}",
            title="t",
            explain="e",
            occurred_at=at,
            dataset_id="d",
            details=dict(details),
        )
        (row,) = placed([o], [], tenant="t", now=at)
        return row

    blocked, warn = event(AlertEvent.BLOCKED), event(AlertEvent.WARN, warn_shares={"r": 0.04})
    everything = RouteDef(route_id="r", channel_id="c")
    assert covers(everything, blocked, ds) and not covers(everything, warn, ds)  # WARN asks
    warns = changed(everything, events=(AlertEvent.WARN,), warn_share=0.05)
    assert not covers(warns, warn, ds)  # 4 % < 5 %
    assert covers(changed(warns, warn_share=0.04), warn, ds)
    assert not covers(changed(everything, min_severity=AlertSeverity.CRITICAL), warn, ds)
    for field, good, bad in [
        ("datasets", ("d",), ("e",)),
        ("layers", (Layer.SILVER,), (Layer.GOLD,)),
        ("domains", ("telecom",), ("retail",)),
        ("owners", ("radio",), ("finance",)),
        ("tags", ("critical",), ("minor",)),
    ]:
        assert covers(changed(everything, **{field: good}), blocked, ds), field
        assert not covers(changed(everything, **{field: bad}), blocked, ds), field
    assert not covers(changed(everything, enabled=False), blocked, ds)
    # a resolution goes where its cause went, whatever the route's minimum severity
    resolved = changed(blocked, action=IncidentAction.RESOLVED)
    assert covers(changed(everything, min_severity=AlertSeverity.CRITICAL), resolved, ds)
    assert not covers(changed(everything, events=(AlertEvent.FAILED,)), resolved, ds)
    assert covers(changed(everything, events=(AlertEvent.RECOVERED,)), resolved, ds)
    # a job's own failure: only routes that filter on nothing
    assert covers(everything, blocked, None)
    assert not covers(changed(everything, owners=("radio",)), blocked, None)
