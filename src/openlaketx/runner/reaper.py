"""Find runs whose process died in flight and record them FAILED (invariant 4).

A run in flight has a RUNNING event and no terminal row. It is abandoned when its worker ran on
this host and that process is gone, or when it has been running longer than `stale_after`
(a worker on another host cannot be checked). Reaping appends the missing terminal rows; it
reads and writes metadata only, through delta-rs: no Spark.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from lakeguard.reads.reader import StoreReader
from lakeguard.records.rows.runtime import RuntimeRow
from lakeguard.records.runs.records import InFlightRun
from lakeguard.records.runs.rows import PipelineRunRow, RunEventRow, RunHistoryRow
from lakeguard.store import MetadataStore, RunWriter
from lakeguard.words.liveness import known_dead, worker_instance
from lakeguard.words.vocabulary import AttemptStatus, EventStatus, JobStatus, TriggerType


def is_abandoned(worker: str | None, age: timedelta, stale_after: timedelta) -> bool:
    """Pure test of one in-flight run: is its worker known dead, or has it run too long?"""
    return age > stale_after or known_dead(worker)


def _terminal_row(
    run: InFlightRun, tenant: str, layer: str, now: datetime, message: str
) -> RunHistoryRow | PipelineRunRow:
    """The terminal row the dead run never wrote; it keeps the trigger its run announced."""
    if run.dataset_id:
        return RunHistoryRow(
            run_id=run.run_id,
            pipeline_logging_id=run.pipeline_logging_id,
            tenant_id=tenant,
            dataset_id=run.dataset_id,
            layer=layer,
            status=AttemptStatus.FAILED,
            start_time=run.event_time,
            end_time=now,
            error_message=message,
            triggered_by="reaper",
        )
    return PipelineRunRow(
        pipeline_logging_id=run.run_id,
        pipeline_id=run.pipeline_id,
        tenant_id=tenant,
        status=JobStatus.FAILED,
        trigger_type=run.trigger_type or TriggerType.UNKNOWN,  # the trigger it was started by
        trigger_by=run.triggered_by or "reaper",
        start_time=run.event_time,
        end_time=now,
        duration_ms=int((now - run.event_time).total_seconds() * 1000),
        worker_instance=run.worker_instance,
        error_message=message,
    )


def reap(store: MetadataStore, stale_after: timedelta = timedelta(hours=12)) -> list[str]:
    """Record every abandoned run FAILED; returns the run ids reaped."""
    reader, writer = StoreReader(store), RunWriter(store)
    now = store.now()
    runs = [
        r
        for r in reader.runs.in_flight()
        if is_abandoned(r.worker_instance, now - r.event_time, stale_after)
    ]
    if not runs:
        return []
    layers = {d.dataset_id: d.layer for d in reader.definitions.datasets()}
    rows: list[RuntimeRow] = []
    for r in runs:
        message = (
            f"abandoned: worker {r.worker_instance} stopped without finishing "
            f"(found by {worker_instance()})"
        )
        rows.append(
            _terminal_row(r, store.tenant, layers.get(r.dataset_id or "", "unknown"), now, message)
        )
        rows.append(
            RunEventRow(
                run_id=r.run_id,
                pipeline_logging_id=r.pipeline_logging_id,
                pipeline_id=r.pipeline_id,
                dataset_id=r.dataset_id,
                tenant_id=store.tenant,
                status=EventStatus.FAILED,
                worker_instance=worker_instance(),
                message=message,
                event_time=now,
            )
        )
    writer.append(rows)
    return [r.run_id for r in runs]
