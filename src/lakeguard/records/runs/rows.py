"""The rows a job run writes about itself: the job run, its events, its logged steps and
its dataset attempts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.runtime import RuntimeRow, new_id
from lakeguard.records.rows.schema import Comment, Int32, RuntimeTable
from lakeguard.words.vocabulary import AttemptStatus, EventStatus, JobStatus, StepStatus


@dataclass(frozen=True, kw_only=True)
class PipelineRunRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="pipeline_runs",
        comment=(
            "One row per finished job run, with its terminal status (seed 003; seed 000 "
            "MD_JOB_EXECUTION)."
        ),
        day="run_date",
        date_of="start_time",
        cluster_by=("tenant_id", "pipeline_id", "status"),
    )
    pipeline_logging_id: Annotated[str, Comment("The job run id")]
    pipeline_id: Annotated[str, Comment("The job id (or the dataset id for a single-dataset run)")]
    tenant_id: str
    status: Annotated[JobStatus, Comment("COMPLETED / FAILED / BLOCKED")]
    trigger_type: Annotated[str, Comment("manual, scheduler, api, webhook, retry")]
    trigger_by: Annotated[
        str,
        Comment("Who or what triggered the run (seed 003's name; run_events says triggered_by)"),
    ]
    start_time: datetime
    end_time: datetime
    duration_ms: int | None = None
    config_version: Annotated[
        str | None, Comment("Fingerprint of the definitions the run used")
    ] = None
    worker_instance: Annotated[str | None, Comment("host:pid of the driver")] = None
    error_message: str | None = None
    parameters: Annotated[str | None, Comment("JSON object of runtime parameters")] = None


@dataclass(frozen=True, kw_only=True)
class RunEventRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="run_events",
        comment=(
            "Lifecycle events of runs in flight (PENDING, RUNNING, ...): live status without "
            "updating rows."
        ),
        day="event_date",
        date_of="event_time",
        cluster_by=("tenant_id", "run_id", "status"),
    )
    event_id: str = field(default_factory=new_id)
    run_id: Annotated[str, Comment("The job run id, or a dataset attempt id")]
    pipeline_logging_id: Annotated[str, Comment("The job run this event belongs to")]
    pipeline_id: str
    dataset_id: Annotated[str | None, Comment("Set for the events of a dataset attempt")] = None
    tenant_id: str
    status: Annotated[EventStatus, Comment("PENDING, RUNNING, COMPLETED, FAILED, BLOCKED")]
    worker_instance: str | None = None
    message: str | None = None
    event_time: datetime
    trigger_type: Annotated[
        str | None,
        Comment(
            "How the run was triggered (seed 003: api, scheduler, manual, webhook, retry; also "
            "file_arrival, upstream)"
        ),
    ] = None
    triggered_by: Annotated[
        str | None, Comment("Who or what triggered it: a key id, a job's schedule, a user")
    ] = None


@dataclass(frozen=True, kw_only=True)
class StepLogRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="step_logs",
        comment="One row per finished step of a job run (seed 003).",
        day="run_date",
        date_of="start_time",
        cluster_by=("pipeline_logging_id", "status"),
    )
    step_logging_id: str = field(default_factory=new_id)
    pipeline_logging_id: str
    tenant_id: str
    step_name: str
    step_type: Annotated[str, Comment("read, validate, gate, write, record, ...")]
    step_index: Int32
    dataset_id: str | None = None
    status: Annotated[StepStatus, Comment("COMPLETED, FAILED, SKIPPED, BLOCKED")]
    start_time: datetime
    end_time: datetime
    duration_ms: int | None = None
    rows_processed: int | None = None
    error_message: str | None = None
    metadata: Annotated[str | None, Comment("JSON object")] = None


@dataclass(frozen=True, kw_only=True)
class RunHistoryRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="run_history",
        comment=(
            "Every dataset execution attempt: exactly one terminal row, never overwritten (seed "
            "002)."
        ),
        day="run_date",
        date_of="start_time",
        cluster_by=("tenant_id", "dataset_id", "status"),
    )
    run_id: Annotated[str, Comment("Unique id of this dataset attempt")]
    pipeline_logging_id: Annotated[str, Comment("The job run it belongs to")]
    tenant_id: str
    dataset_id: str
    layer: str
    status: Annotated[AttemptStatus, Comment("SUCCESS / FAILED / BLOCKED")]
    start_time: datetime
    end_time: datetime
    rows_read: int | None = None
    rows_written: int | None = None
    data_version: Annotated[
        int | None, Comment("The approved version this attempt produced (null when none)")
    ] = None
    error_message: str | None = None
    triggered_by: str
