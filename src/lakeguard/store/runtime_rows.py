"""One typed row per runtime table: what a run appends, built in one place (pure).

Each class names its table (`TABLE`) and carries exactly the table's writable columns (the
suite checks both against the shipped table definitions); fields with a vocabulary carry its
type. Writers append these rows, never a table name plus a dict.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import ClassVar

from lakeguard.progress import ProgressMark
from lakeguard.schema.drift import ChangeKind, DriftDecision
from lakeguard.shapes import StoredRow
from lakeguard.vocabulary import (
    AttemptStatus,
    DqStatus,
    EventStatus,
    JobStatus,
    LeaseAction,
    Outcome,
    StepStatus,
    SyncOutcome,
)


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, kw_only=True)
class RuntimeRow:
    """A row of an append-only runtime table."""

    TABLE: ClassVar[str]

    def as_row(self) -> StoredRow:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class PipelineRunRow(RuntimeRow):
    TABLE: ClassVar[str] = "pipeline_runs"
    pipeline_logging_id: str
    pipeline_id: str
    tenant_id: str
    status: JobStatus
    trigger_type: str
    trigger_by: str  # seed 003's column name
    start_time: datetime
    end_time: datetime
    duration_ms: int | None = None
    config_version: str | None = None
    worker_instance: str | None = None
    error_message: str | None = None
    parameters: str | None = None  # JSON


@dataclass(frozen=True, kw_only=True)
class RunEventRow(RuntimeRow):
    TABLE: ClassVar[str] = "run_events"
    run_id: str
    pipeline_logging_id: str
    pipeline_id: str
    tenant_id: str
    status: EventStatus
    event_time: datetime
    dataset_id: str | None = None
    worker_instance: str | None = None
    message: str | None = None
    trigger_type: str | None = None
    triggered_by: str | None = None
    event_id: str = field(default_factory=new_id)


@dataclass(frozen=True, kw_only=True)
class StepLogRow(RuntimeRow):
    TABLE: ClassVar[str] = "step_logs"
    pipeline_logging_id: str
    tenant_id: str
    step_name: str
    step_type: str
    step_index: int
    status: StepStatus
    start_time: datetime
    end_time: datetime
    dataset_id: str | None = None
    duration_ms: int | None = None
    rows_processed: int | None = None
    error_message: str | None = None
    metadata: str | None = None  # JSON
    step_logging_id: str = field(default_factory=new_id)


@dataclass(frozen=True, kw_only=True)
class RunHistoryRow(RuntimeRow):
    TABLE: ClassVar[str] = "run_history"
    run_id: str
    pipeline_logging_id: str
    tenant_id: str
    dataset_id: str
    layer: str
    status: AttemptStatus
    start_time: datetime
    end_time: datetime
    triggered_by: str
    rows_read: int | None = None
    rows_written: int | None = None
    data_version: int | None = None
    error_message: str | None = None


@dataclass(frozen=True, kw_only=True)
class DqResultRow(RuntimeRow):
    TABLE: ClassVar[str] = "dq_results"
    pipeline_logging_id: str
    run_id: str
    tenant_id: str
    dataset_id: str
    target_table: str
    dq_config_id: str
    executed_at: datetime
    rows_evaluated: int
    expectations_passed: int
    expectations_failed: int
    overall_status: DqStatus
    failed_expectations: str | None = None  # JSON
    dq_result_id: str = field(default_factory=new_id)


@dataclass(frozen=True, kw_only=True)
class RuleResultRow(RuntimeRow):
    TABLE: ClassVar[str] = "data_quality_results"
    run_id: str
    tenant_id: str
    dataset_id: str
    rule_id: str
    rule_type: str
    severity: str
    rows_evaluated: int
    failed_rows: int
    outcome: Outcome
    executed_at: datetime
    columns: list[str] = field(default_factory=list)
    failed_ratio: float | None = None
    sample_values: list[str] = field(default_factory=list)
    result_id: str = field(default_factory=new_id)


@dataclass(frozen=True, kw_only=True)
class ProfileRow(RuntimeRow):
    TABLE: ClassVar[str] = "data_profiling_results"
    run_id: str
    tenant_id: str
    dataset_id: str
    column_name: str
    metric: str
    profiled_at: datetime
    value: str | None = None
    profile_id: str = field(default_factory=new_id)


@dataclass(frozen=True, kw_only=True)
class SchemaSnapshotRow(RuntimeRow):
    TABLE: ClassVar[str] = "schema_history"
    run_id: str
    tenant_id: str
    dataset_id: str
    schema_hash: str
    schema_json: str
    captured_at: datetime
    source_object_id: str | None = None
    snapshot_id: str = field(default_factory=new_id)


@dataclass(frozen=True, kw_only=True)
class SchemaChangeRow(RuntimeRow):
    TABLE: ClassVar[str] = "schema_change_log"
    run_id: str
    tenant_id: str
    dataset_id: str
    change_kind: ChangeKind
    decision: DriftDecision
    detected_at: datetime
    column_name: str | None = None
    old_type: str | None = None
    new_type: str | None = None
    profile: str | None = None
    change_id: str = field(default_factory=new_id)


@dataclass(frozen=True, kw_only=True)
class SourceProgressRow(RuntimeRow):
    TABLE: ClassVar[str] = "source_progress"
    tenant_id: str
    dataset_id: str
    source_object_id: str
    run_id: str
    data_version: int
    kind: str  # the mark's KIND (lakeguard.progress)
    recorded_at: datetime
    mark_key: str = ""
    state: str | None = None
    path: str | None = None
    size: int | None = None
    modification_time: datetime | None = None
    content_hash: str | None = None
    watermark: str | None = None
    source_version: int | None = None
    progress_id: str = field(default_factory=new_id)

    @classmethod
    def of(
        cls,
        mark: ProgressMark,
        *,
        tenant_id: str,
        dataset_id: str,
        source_object_id: str,
        run_id: str,
        data_version: int,
        recorded_at: datetime,
    ) -> SourceProgressRow:
        return cls(
            tenant_id=tenant_id,
            dataset_id=dataset_id,
            source_object_id=source_object_id,
            run_id=run_id,
            data_version=data_version,
            recorded_at=recorded_at,
            kind=mark.KIND,
            mark_key=mark.key(),
            state=mark.state(),
            **mark.columns(),
        )


@dataclass(frozen=True, kw_only=True)
class TrustScoreRow(RuntimeRow):
    TABLE: ClassVar[str] = "trust_scores"
    tenant_id: str
    dataset_id: str
    run_id: str
    score: int
    quality: float
    freshness: float
    stability: float
    lineage: float
    computed_at: datetime
    score_id: str = field(default_factory=new_id)


@dataclass(frozen=True, kw_only=True)
class DataVersionRow(RuntimeRow):
    TABLE: ClassVar[str] = "data_versions"
    tenant_id: str
    dataset_id: str
    version: int
    snapshot_ref: str
    schema_hash: str
    row_count: int
    run_id: str
    promoted_at: datetime
    promoted_by: str
    rows_written: int | None = None
    upstream_refs: str | None = None  # JSON
    content_hash: str | None = None
    definition_hash: str | None = None


@dataclass(frozen=True, kw_only=True)
class DecisionRow(RuntimeRow):
    TABLE: ClassVar[str] = "promotion_status"
    tenant_id: str
    dataset_id: str
    run_id: str
    from_layer: str
    to_layer: str
    allowed: bool
    reason: str
    evaluated_at: datetime
    evidence: str | None = None  # JSON (lakeguard.evidence.Evidence)
    decision_id: str = field(default_factory=new_id)


@dataclass(frozen=True, kw_only=True)
class LeaseEventRow(RuntimeRow):
    TABLE: ClassVar[str] = "dataset_leases"
    lease_id: str
    tenant_id: str
    dataset_id: str
    run_id: str
    holder: str
    action: LeaseAction
    expires_at: datetime
    event_time: datetime


@dataclass(frozen=True, kw_only=True)
class RunRequestRow(RuntimeRow):
    TABLE: ClassVar[str] = "run_requests"
    request_key: str
    tenant_id: str
    job_id: str
    run_id: str
    trigger_type: str
    triggered_by: str
    requested_at: datetime
    retry_of: str | None = None
    not_before: datetime | None = None
    scheduled_for: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class MetadataSyncRow(RuntimeRow):
    TABLE: ClassVar[str] = "metadata_syncs"
    tenant_id: str
    folder: str
    file: str
    content_hash: str
    outcome: SyncOutcome
    watcher: str
    synced_at: datetime
    changes: str | None = None  # JSON
    definitions: str | None = None  # JSON
    errors: str | None = None  # JSON
    sync_id: str = field(default_factory=new_id)


@dataclass(frozen=True, kw_only=True)
class StoreMigrationRow(RuntimeRow):
    TABLE: ClassVar[str] = "store_migrations"
    version: int
    name: str
    tenant_id: str
    applied_at: datetime
    worker: str
    changes: str | None = None  # JSON


ROW_TYPES: tuple[type[RuntimeRow], ...] = (
    StoreMigrationRow,
    MetadataSyncRow,
    RunRequestRow,
    PipelineRunRow,
    RunEventRow,
    StepLogRow,
    RunHistoryRow,
    DqResultRow,
    RuleResultRow,
    ProfileRow,
    SchemaSnapshotRow,
    SchemaChangeRow,
    SourceProgressRow,
    TrustScoreRow,
    DataVersionRow,
    DecisionRow,
    LeaseEventRow,
)
