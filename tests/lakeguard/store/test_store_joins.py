"""The reads DataFusion answers by joins (`store/joins.py`) give what the Python folds over
every row give: runs in flight, a dataset's source progress, its last approved profile (no
Spark)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.records.checks.result_rows import ProfileRow
from lakeguard.records.decisions.rows import DataVersionRow
from lakeguard.records.runs.rows import PipelineRunRow, RunEventRow, RunHistoryRow
from lakeguard.records.sources.progress import fold
from lakeguard.records.sources.progress_rows import SourceProgressRow
from lakeguard.store import MetadataStore
from lakeguard.store.store import utcnow
from lakeguard.words.vocabulary import IN_FLIGHT, AttemptStatus, EventStatus, JobStatus
from tests.support.project import copied_store

DS = "bronze_x"


@pytest.fixture
def store(empty_store_template: Path, tmp_path: Path) -> MetadataStore:
    s = copied_store(empty_store_template, tmp_path / "meta")
    return s


def version(run_id: str, number: int, at: datetime, tenant: str = "default") -> DataVersionRow:
    return DataVersionRow(
        tenant_id=tenant,
        dataset_id=DS,
        version=number,
        snapshot_ref=str(number),
        schema_hash="h",
        row_count=number,
        rows_written=1,
        upstream_refs="{}",
        run_id=run_id,
        promoted_at=at,
        promoted_by="test",
    )


def event(run_id: str, status: EventStatus, at: datetime, tenant: str = "default") -> RunEventRow:
    return RunEventRow(
        run_id=run_id,
        pipeline_logging_id=run_id,
        pipeline_id="job",
        tenant_id=tenant,
        status=status,
        event_time=at,
        trigger_type="manual",
        triggered_by="test",
    )


def test_in_flight_keeps_only_runs_without_an_ending(store: MetadataStore) -> None:
    now = utcnow()
    store.append_rows(
        [
            event("flying", EventStatus.PENDING, now - timedelta(minutes=3)),
            event("flying", EventStatus.RUNNING, now - timedelta(minutes=2)),
            event("ended_by_event", EventStatus.RUNNING, now),
            event("ended_by_event", EventStatus.COMPLETED, now),
            event("ended_by_attempt", EventStatus.RUNNING, now),
            event("ended_by_job_run", EventStatus.PENDING, now),
            event("too_old", EventStatus.RUNNING, now - timedelta(days=40)),
            event("other_tenant", EventStatus.RUNNING, now, tenant="other"),
            RunHistoryRow(
                run_id="ended_by_attempt",
                pipeline_logging_id="ended_by_attempt",
                tenant_id="default",
                dataset_id=DS,
                layer="bronze",
                status=AttemptStatus.SUCCESS,
                start_time=now,
                end_time=now,
                triggered_by="test",
            ),
            PipelineRunRow(
                pipeline_logging_id="ended_by_job_run",
                pipeline_id="job",
                tenant_id="default",
                status=JobStatus.FAILED,
                trigger_type="manual",
                trigger_by="test",
                start_time=now,
                end_time=now,
            ),
        ]
    )
    flying = StoreReader(store).runs.in_flight()
    assert [(r.run_id, r.status) for r in flying] == [("flying", EventStatus.RUNNING)]
    assert flying[0].event_time == now - timedelta(minutes=3)  # started by its first event
    assert all(s in IN_FLIGHT for s in (r.status for r in flying))


def mark(
    run_id: str,
    data_version: int,
    kind: str,
    key: str | None,
    state: str | None,
    path: str | None = None,
) -> SourceProgressRow:
    return SourceProgressRow(
        tenant_id="default",
        dataset_id=DS,
        source_object_id="src",
        run_id=run_id,
        data_version=data_version,
        kind=kind,
        mark_key=key,
        state=state,
        recorded_at=utcnow(),
        path=path,
    )


def test_source_progress_is_the_fold_of_the_approved_runs_marks(store: MetadataStore) -> None:
    now = utcnow()
    marks = [
        mark("r1", 1, "FILE", "a.csv", '{"path": "a.csv", "size": 1}'),
        mark("r2", 2, "FILE", "a.csv", '{"path": "a.csv", "size": 2}'),  # replaces r1's
        mark("r1", 1, "FILE", "b.csv", '{"path": "b.csv", "size": 3}'),
        mark("r1", 1, "FILE", None, None, path="legacy.csv"),  # before keys and state
        mark("r1", 1, "WATERMARK", "", '{"watermark": "5"}'),
        mark("r2", 2, "WATERMARK", "", '{"watermark": "9"}'),
        mark("r3", 3, "WATERMARK", "", '{"watermark": "12"}'),  # blocked: took nothing
        mark("r2", 2, "FILE", "b.csv", None),  # no field at all: the fold skips it
    ]
    store.append_rows(marks)
    store.append_rows(
        [version("r1", 1, now), version("r2", 2, now), version("r9", 9, now, tenant="other")],
        _by_gate=True,
    )
    progress = StoreReader(store).versions.source_progress(DS)
    assert progress == fold(marks, {"r1", "r2"})
    assert progress.marks[("src", "FILE")]["a.csv"] == {"path": "a.csv", "size": 2}
    assert progress.marks[("src", "FILE")]["b.csv"] == {"path": "b.csv", "size": 3}
    assert progress.marks[("src", "WATERMARK")][""] == {"watermark": "9"}
    assert StoreReader(store).versions.source_progress("nothing") == fold([], set())


def test_a_rejection_counts_although_its_run_was_blocked(store: MetadataStore) -> None:
    """What a batch blocked as wholly malformed read counts (the latest recorded of a data
    version winning); the blocked run's other marks still take nothing."""
    now = utcnow()
    first = mark("r2", 2, "HTTP_REJECTED", "u", '{"url": "u", "content_hash": "a"}')
    later = mark("r3", 2, "HTTP_REJECTED", "u", '{"url": "u", "content_hash": "b"}')
    later = replace(later, recorded_at=first.recorded_at + timedelta(seconds=1))
    store.append_rows(
        [
            mark("r1", 1, "WATERMARK", "", '{"watermark": "5"}'),
            later,
            first,
            mark("r3", 2, "WATERMARK", "", '{"watermark": "9"}'),  # blocked: took nothing
        ]
    )
    store.append_rows([version("r1", 1, now)], _by_gate=True)
    progress = StoreReader(store).versions.source_progress(DS)
    assert progress.marks[("src", "WATERMARK")][""] == {"watermark": "5"}
    assert progress.marks[("src", "HTTP_REJECTED")]["u"] == {"url": "u", "content_hash": "b"}


def profile(run_id: str, metric: str, value: str, at: datetime) -> ProfileRow:
    return ProfileRow(
        run_id=run_id,
        tenant_id="default",
        dataset_id=DS,
        column_name="c",
        metric=metric,
        value=value,
        profiled_at=at,
    )


def test_last_profiles_reads_from_the_last_approved_full_profile(store: MetadataStore) -> None:
    t0 = utcnow() - timedelta(hours=5)
    at = [t0 + timedelta(hours=i) for i in range(5)]
    store.append_rows(
        [
            profile("r0", "mean", "1.0", at[0]),  # approved full profile, older
            profile("r1", "mean", "2.0", at[1]),  # the last approved full profile
            profile("r1", "null_count", "10", at[1]),
            profile("r2", "null_count", "20", at[2]),  # approved, footer only
            profile("r3", "mean", "9.0", at[3]),  # blocked full profile: not kept
            profile("r4", "null_count", "40", at[4]),  # blocked
        ]
    )
    store.append_rows(
        [version("r0", 1, at[0]), version("r1", 2, at[1]), version("r2", 3, at[2])],
        _by_gate=True,
    )
    last = StoreReader(store).versions.last_profiles(DS)
    assert dict(last.latest) == {("c", "mean"): "2.0", ("c", "null_count"): "20"}
    assert last.full_at == at[3]  # the newest full profile, approved or not
    assert last.batches_since_full == 1  # r4


def test_last_profiles_without_an_approved_full_profile_reads_every_row(
    store: MetadataStore,
) -> None:
    at = utcnow()
    store.append_rows([profile("r1", "null_count", "1", at), profile("r2", "mean", "3", at)])
    store.append_rows([version("r1", 1, at)], _by_gate=True)
    last = StoreReader(store).versions.last_profiles(DS)
    assert dict(last.latest) == {("c", "null_count"): "1"}
    assert last.full_at == at
    assert last.batches_since_full == 0


def test_a_steps_version_reads_are_bounded_by_what_it_consumed_and_its_window(
    store: MetadataStore,
) -> None:
    now = utcnow()
    store.append_rows([version(f"r{n}", n, now) for n in (3, 1, 5, 2, 4)], _by_gate=True)
    reader = StoreReader(store)
    every = [v.version for v in reader.versions.versions(DS)]
    assert every == [1, 2, 3, 4, 5]
    assert [v.version for v in reader.versions.versions(DS, after=2)] == [3, 4, 5]
    assert [v.version for v in reader.versions.versions(DS, after=2, upto=4)] == [3, 4]
    assert reader.versions.versions(DS, after=5) == []
    assert [v.version for v in reader.versions.newest(DS, 2)] == [4, 5]  # oldest first
    assert [v.version for v in reader.versions.newest(DS, 10)] == every
