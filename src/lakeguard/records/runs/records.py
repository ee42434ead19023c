"""Job runs as the reader returns them: ended, accepted or in flight, and the live lease on a
dataset."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from lakeguard.records.runs.rows import PipelineRunRow
from lakeguard.words.vocabulary import EventStatus, TriggerType


@dataclass(frozen=True, kw_only=True, slots=True)
class JobRunRecord:
    """A job run: accepted (PENDING), in flight (RUNNING, with its current step) or ended (a
    `pipeline_runs` row)."""

    pipeline_logging_id: str
    pipeline_id: str
    status: EventStatus
    trigger_type: str
    start_time: datetime
    end_time: datetime | None
    duration_ms: int | None
    error_message: str | None
    triggered_by: str | None = None
    current_step: str | None = None  # a run in flight: the phase it is in
    retry_of: str | None = None  # a retry: the run it retries (its run request says)
    scheduled_for: datetime | None = None  # a schedule tick's run: the tick

    @classmethod
    def from_row(cls, row: PipelineRunRow) -> JobRunRecord:
        return cls(
            pipeline_logging_id=row.pipeline_logging_id,
            pipeline_id=row.pipeline_id,
            status=EventStatus(row.status),
            trigger_type=row.trigger_type,
            start_time=row.start_time,
            end_time=row.end_time,
            duration_ms=row.duration_ms,
            error_message=row.error_message,
            triggered_by=row.trigger_by,
        )

    @classmethod
    def in_flight(cls, run: InFlightRun, current_step: str | None) -> JobRunRecord:
        return cls(
            pipeline_logging_id=run.pipeline_logging_id,
            pipeline_id=run.pipeline_id,
            status=run.status,
            trigger_type=run.trigger_type or TriggerType.UNKNOWN,
            triggered_by=run.triggered_by,
            start_time=run.event_time,
            end_time=None,
            duration_ms=None,
            error_message=None,
            current_step=current_step,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class InFlightRun:
    """A PENDING or RUNNING event without a terminal row: a run accepted or in flight, or one
    whose process died."""

    run_id: str
    pipeline_logging_id: str
    pipeline_id: str
    dataset_id: str | None
    worker_instance: str | None
    event_time: datetime
    status: EventStatus = EventStatus.RUNNING
    trigger_type: str | None = None
    triggered_by: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Lease:
    """The live lease on a dataset, folded from `dataset_leases`."""

    lease_id: str
    dataset_id: str
    run_id: str
    holder: str
    expires_at: datetime
