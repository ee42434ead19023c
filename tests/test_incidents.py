"""Events and incidents without Spark: events derived from run rows planted in a real store
(as a run writes them), each recorded once whoever derives it and however often, placed in
an incident per (dataset, cause), repeats joining it, a promotion resolving it; a stopped
feed's SLA found with no run; a failure with retries left waiting for its last retry."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from lakeguard.alerts.events import Occurrence
from lakeguard.alerts.incidents import fold, place
from lakeguard.alerts.outbox import RETRY_GRACE, Outbox
from lakeguard.catalog.apply import apply_file
from lakeguard.evidence import CheckKind, CheckRecord, CheckResult, Evidence
from lakeguard.hashing import to_json
from lakeguard.store import MetadataStore, StoreReader
from lakeguard.store.runtime_rows import (
    DataVersionRow,
    DecisionRow,
    PipelineRunRow,
    RuleResultRow,
    RunHistoryRow,
    RunRequestRow,
    new_id,
)
from lakeguard.vocabulary import AlertEvent, AttemptStatus, IncidentAction, JobStatus, Outcome
from tests.conftest import cells_yaml, copied_store, write

T0 = datetime(2026, 12, 1, 8, 0, 0)
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


class Plant:
    """Rows as a run writes them: the job run, the attempt, its decision and rule results."""

    def __init__(self, store: MetadataStore) -> None:
        self.store = store
        self.at = T0

    def attempt(
        self,
        status: AttemptStatus,
        *,
        dataset: str = "bronze_cells_i",
        allowed: bool | None = None,
        version: int | None = None,
        error: str | None = None,
        checks: tuple[CheckRecord, ...] = (),
        warn: bool = False,
        job_status: JobStatus | None = None,
        retry_of: str | None = None,
        accepted: bool = False,
    ) -> RunHistoryRow:
        self.at += timedelta(minutes=10)
        job_run, attempt = new_id(), new_id()
        tenant = self.store.tenant
        row = RunHistoryRow(
            run_id=attempt,
            pipeline_logging_id=job_run,
            tenant_id=tenant,
            dataset_id=dataset,
            layer="bronze",
            status=status,
            start_time=self.at - timedelta(minutes=1),
            end_time=self.at,
            data_version=version,
            error_message=error,
            triggered_by="test",
        )
        rows: list = [row]
        if allowed is not None:
            rules = {"lat_range_i": Outcome.FAIL if not allowed else Outcome.PASS}
            if warn:
                rules["radio_known_i"] = Outcome.WARN
            evidence = Evidence(rules=rules, checks=checks)
            decision = DecisionRow(
                tenant_id=tenant,
                dataset_id=dataset,
                run_id=attempt,
                from_layer="source",
                to_layer="bronze",
                allowed=allowed,
                reason="blocked by FAIL rule lat_range_i" if not allowed else "allowed",
                evidence=to_json(evidence.to_json()),
                evaluated_at=self.at - timedelta(seconds=30),
            )
            self.store.append_rows([decision], _by_gate=True)
            if not allowed:
                rows.append(
                    RuleResultRow(
                        run_id=attempt,
                        tenant_id=tenant,
                        dataset_id=dataset,
                        rule_id="lat_range_i",
                        rule_type="RANGE",
                        severity="FAIL",
                        outcome=Outcome.FAIL,
                        failed_rows=2,
                        rows_evaluated=10,
                        sample_values=["91.5"],
                        executed_at=self.at,
                    )
                )
            if warn:
                rows.append(
                    RuleResultRow(
                        result_id=new_id(),
                        run_id=attempt,
                        tenant_id=tenant,
                        dataset_id=dataset,
                        rule_id="radio_known_i",
                        rule_type="ALLOWED_VALUES",
                        severity="WARN",
                        outcome=Outcome.WARN,
                        failed_rows=3,
                        rows_evaluated=10,
                        executed_at=self.at,
                    )
                )
        if version is not None:
            self.store.append_rows(
                [
                    DataVersionRow(
                        tenant_id=tenant,
                        dataset_id=dataset,
                        version=version,
                        snapshot_ref=str(version),
                        schema_hash="h",
                        row_count=10,
                        run_id=attempt,
                        promoted_at=self.at,
                        promoted_by="test",
                    )
                ],
                _by_gate=True,
            )
        status_of = {
            AttemptStatus.SUCCESS: JobStatus.COMPLETED,
            AttemptStatus.BLOCKED: JobStatus.BLOCKED,
            AttemptStatus.FAILED: JobStatus.FAILED,
        }
        rows.append(
            PipelineRunRow(
                pipeline_logging_id=job_run,
                pipeline_id="cells_job_i",
                tenant_id=tenant,
                status=job_status or status_of[status],
                trigger_type="manual",
                trigger_by="test",
                start_time=self.at - timedelta(minutes=2),
                end_time=self.at,
                error_message=error,
            )
        )
        if accepted:
            rows.append(
                RunRequestRow(
                    request_key=job_run,
                    tenant_id=tenant,
                    job_id="cells_job_i",
                    run_id=job_run,
                    trigger_type="retry" if retry_of else "api",
                    triggered_by="test",
                    retry_of=retry_of,
                    requested_at=self.at - timedelta(minutes=3),
                )
            )
        self.store.append_rows(rows)
        return row


def outbox(store: MetadataStore) -> tuple[Outbox, object]:
    return Outbox(store), StoreReader(store).registry()


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


def test_a_failure_judged_final_after_the_recovery_opens_nothing() -> None:
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
    assert place([fail, recovered], [], tenant="t", now=at) == []
    (opened,) = place([fail], [], tenant="t", now=at)
    assert opened.event_id == fail.event_id("t")  # derived from its cause, stable
    assert [r.action for r in place([recovered], [opened], tenant="t", now=at)] == [
        IncidentAction.RESOLVED
    ]
