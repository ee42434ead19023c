"""One typed row class per runtime table, and that table's one declaration (pure).

A class's fields are its table's columns, in order, with their types, nullability and
comments; its `TABLE` is the rest (name, comment, date partition, Z-order columns):
`rowschema.py` reads the table off the class, and `definitions.py` ships it with the
definition tables. Fields with a vocabulary carry its type. Writers append these rows, never a
table name plus a dict; the reader reads full rows back as them (`from_row`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Annotated, Any, ClassVar, Self

from lakeguard.progress import ProgressMark
from lakeguard.schema.drift import ChangeKind, DriftDecision
from lakeguard.shapes import StoredRow
from lakeguard.store.rowschema import Comment, Int32, RuntimeTable, field_columns
from lakeguard.vocabulary import (
    AttemptStatus,
    DqStatus,
    EventStatus,
    JobStatus,
    LeaseAction,
    Outcome,
    StepStatus,
    SyncOutcome,
    vocab,
)


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, kw_only=True)
class RuntimeRow:
    """A row of an append-only runtime table."""

    TABLE: ClassVar[RuntimeTable]

    def as_row(self) -> StoredRow:
        """The row as delta-rs takes it (`arrow.to_arrow`): values by column name."""
        return asdict(self)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        """A stored row (every column, as `MetadataStore.rows` reads it) as this class; a word
        outside its vocabulary is a ValidationError naming the table and column."""
        values = {}
        for column in field_columns(cls):
            value = row.get(column.name)
            if column.vocabulary is not None and value is not None:
                value = vocab(column.vocabulary, value, f"{cls.TABLE.name}.{column.name}")
            values[column.name] = value
        return cls(**values)


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


@dataclass(frozen=True, kw_only=True)
class DqResultRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="dq_results",
        comment="Validation summary per dataset attempt (seed 003).",
        day="ingestion_date",
        date_of="executed_at",
        cluster_by=("tenant_id", "target_table", "overall_status"),
    )
    dq_result_id: str = field(default_factory=new_id)
    pipeline_logging_id: str
    run_id: str
    tenant_id: str
    dataset_id: str
    target_table: str
    dq_config_id: Annotated[str, Comment("Fingerprint of the rule set evaluated")]
    executed_at: datetime
    rows_evaluated: int
    expectations_passed: Int32
    expectations_failed: Int32
    failed_expectations: Annotated[str | None, Comment("JSON array")] = None
    overall_status: Annotated[DqStatus, Comment("PASS, WARNING, FAIL")]


@dataclass(frozen=True, kw_only=True)
class RuleResultRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="data_quality_results",
        comment="One outcome per rule per dataset attempt (seed 001).",
        day="executed_date",
        date_of="executed_at",
        cluster_by=("tenant_id", "dataset_id", "outcome"),
    )
    result_id: str = field(default_factory=new_id)
    run_id: str
    tenant_id: str
    dataset_id: str
    rule_id: str
    rule_type: str
    severity: str
    columns: list[str] | None = field(default_factory=list)
    rows_evaluated: int
    failed_rows: int
    failed_ratio: float | None = None
    sample_values: Annotated[list[str] | None, Comment("A few offending values")] = field(
        default_factory=list
    )
    outcome: Annotated[Outcome, Comment("PASS, WARN, FAIL")]
    executed_at: datetime


@dataclass(frozen=True, kw_only=True)
class ProfileRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="data_profiling_results",
        comment="Column profiling metrics (seed 001).",
        day="profiled_date",
        date_of="profiled_at",
        cluster_by=("tenant_id", "dataset_id", "column_name"),
    )
    profile_id: str = field(default_factory=new_id)
    run_id: str
    tenant_id: str
    dataset_id: str
    column_name: str
    metric: Annotated[str, Comment("min, max, null_count, approx_distinct, ...")]
    value: str | None = None
    profiled_at: datetime


@dataclass(frozen=True, kw_only=True)
class SchemaSnapshotRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="schema_history",
        comment="Schema snapshot captured at run time (seed 001).",
        day="captured_date",
        date_of="captured_at",
        cluster_by=("tenant_id", "dataset_id"),
    )
    snapshot_id: str = field(default_factory=new_id)
    run_id: str
    tenant_id: str
    dataset_id: str
    source_object_id: str | None = None
    schema_hash: str
    schema_json: Annotated[str, Comment("JSON array of {name, type, nullable}")]
    captured_at: datetime


@dataclass(frozen=True, kw_only=True)
class SchemaChangeRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="schema_change_log",
        comment="Detected schema drift and the framework's decision (seed 001).",
        day="detected_date",
        date_of="detected_at",
        cluster_by=("tenant_id", "dataset_id", "decision"),
    )
    change_id: str = field(default_factory=new_id)
    run_id: str
    tenant_id: str
    dataset_id: str
    column_name: str | None = None
    change_kind: ChangeKind
    old_type: str | None = None
    new_type: str | None = None
    profile: str | None = None
    decision: Annotated[DriftDecision, Comment("ALLOW / WARN / BLOCK")]
    detected_at: datetime


@dataclass(frozen=True, kw_only=True)
class SourceProgressRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="source_progress",
        comment=(
            "What each promoted batch took from its sources: files (path, size, modification time,"
            " content hash), watermarks, source table versions. Written before the data commit; a "
            "row counts only once its run has an approved version, so a crash can neither lose nor"
            " repeat input."
        ),
        day="recorded_date",
        date_of="recorded_at",
        cluster_by=("tenant_id", "dataset_id", "source_object_id"),
    )
    progress_id: str = field(default_factory=new_id)
    tenant_id: str
    dataset_id: str
    source_object_id: str
    run_id: Annotated[str, Comment("The dataset attempt that read it")]
    data_version: Annotated[int, Comment("The version the attempt was to publish")]
    kind: Annotated[
        str,
        Comment(
            "What the row remembers, as its source kind declares it: FILE, WATERMARK, "
            "SOURCE_VERSION, HTTP_FILE, ..."
        ),
    ]
    path: Annotated[str | None, Comment("FILE: the file's full path")] = None
    size: Annotated[int | None, Comment("FILE, HTTP_FILE: bytes")] = None
    modification_time: Annotated[
        datetime | None, Comment("FILE: as the file system reports it")
    ] = None
    content_hash: Annotated[
        str | None, Comment("FILE: sha256 of the content, where the source asks for it")
    ] = None
    watermark: Annotated[
        str | None, Comment("WATERMARK: the highest watermark value read, as text")
    ] = None
    source_version: Annotated[
        int | None, Comment("SOURCE_VERSION: the Delta version of a source table read up to")
    ] = None
    recorded_at: datetime
    mark_key: Annotated[
        str | None,
        Comment(
            "What a later row of the same kind replaces (a path, a URL); empty for a single "
            "value such as a watermark"
        ),
    ] = ""
    state: Annotated[
        str | None,
        Comment("JSON object: every field of the mark (columns above hold those that have one)"),
    ] = None

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
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="trust_scores",
        comment=(
            "The trust score of a dataset after each attempt, with the components behind it (see "
            "lakeguard/trust.py)."
        ),
        day="computed_date",
        date_of="computed_at",
        cluster_by=("tenant_id", "dataset_id"),
    )
    score_id: str = field(default_factory=new_id)
    tenant_id: str
    dataset_id: str
    run_id: Annotated[str, Comment("The attempt after which it was computed")]
    score: Annotated[Int32, Comment("0..100")]
    quality: Annotated[float, Comment("Mean share of rules passed, last 10 batches")]
    freshness: Annotated[
        float, Comment("1 under 24 h since the latest approved version, 0 at 7 days")
    ]
    stability: Annotated[
        float, Comment("1 / (1 + schema changes not simply allowed, last 10 batches)")
    ]
    lineage: Annotated[
        float, Comment("Share of approved versions with an allowed decision and evidence")
    ]
    computed_at: datetime


@dataclass(frozen=True, kw_only=True)
class DataVersionRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="data_versions",
        comment=(
            "Approved versions of datasets: append-only, strictly increasing per dataset (seed "
            "002)."
        ),
        day="promoted_date",
        date_of="promoted_at",
        cluster_by=("tenant_id", "dataset_id"),
    )
    tenant_id: str
    dataset_id: str
    version: int
    snapshot_ref: Annotated[str, Comment("The Delta commit version of the dataset table")]
    schema_hash: str
    row_count: Annotated[int, Comment("Rows in the table at this version")]
    rows_written: Annotated[int | None, Comment("Rows the promoting batch inserted or updated")] = (
        None
    )
    upstream_refs: Annotated[
        str | None, Comment("JSON object: parent dataset id -> parent data version consumed")
    ] = None
    content_hash: Annotated[
        str | None,
        Comment(
            "Order-independent hash of the rows this version wrote (rows:sum of xxhash64 over data"
            " columns); replay compares it"
        ),
    ] = None
    run_id: str
    promoted_at: datetime
    promoted_by: Annotated[str, Comment("Job / pipeline")]
    definition_hash: Annotated[
        str | None,
        Comment("Hash of the dataset's definition, rules and source objects it was made under"),
    ] = None


@dataclass(frozen=True, kw_only=True)
class DecisionRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="promotion_status",
        comment="Gate decisions: how the control plane says yes or no (seed 002).",
        day="evaluated_date",
        date_of="evaluated_at",
        cluster_by=("tenant_id", "dataset_id", "allowed"),
    )
    decision_id: str = field(default_factory=new_id)
    tenant_id: str
    dataset_id: str
    run_id: str
    from_layer: str
    to_layer: str
    allowed: bool
    reason: str
    evidence: Annotated[  # lakeguard.evidence.Evidence
        str | None, Comment("JSON: rule outcomes and checks behind the decision")
    ] = None
    evaluated_at: datetime

    @property
    def backed(self) -> bool:
        """An allowed decision that carries evidence (what trust's lineage part counts)."""
        return self.allowed and bool(self.evidence)


@dataclass(frozen=True, kw_only=True)
class LeaseEventRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="dataset_leases",
        comment=(
            "Who may publish a dataset now: an append-only log of lease events, folded per dataset"
            " (one run per dataset at a time)."
        ),
        day="event_date",
        date_of="event_time",
        cluster_by=("tenant_id", "dataset_id"),
    )
    lease_id: Annotated[str, Comment("One id per acquisition; renewals and the release repeat it")]
    tenant_id: str
    dataset_id: str
    run_id: Annotated[
        str, Comment("The job run holding the lease (pipeline_runs.pipeline_logging_id)")
    ]
    holder: Annotated[str, Comment("host:pid of the holding process")]
    action: Annotated[LeaseAction, Comment("ACQUIRE, RENEW, RELEASE")]
    expires_at: Annotated[datetime, Comment("The lease is free after this unless renewed")]
    event_time: datetime


@dataclass(frozen=True, kw_only=True)
class RunRequestRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="run_requests",
        comment=(
            "Runs accepted before they start (the API, the scheduler): one row per request key, "
            "claimed by compare-and-set, so the same Idempotency-Key or schedule tick gives the "
            "same run."
        ),
        day="requested_date",
        date_of="requested_at",
        cluster_by=("tenant_id", "request_key"),
    )
    request_key: Annotated[
        str, Comment("An Idempotency-Key, a schedule tick (job@time), or the run id itself")
    ]
    tenant_id: str
    job_id: Annotated[str, Comment("The job or dataset the run runs")]
    run_id: Annotated[str, Comment("The job run it became (pipeline_runs.pipeline_logging_id)")]
    trigger_type: str
    triggered_by: str
    retry_of: Annotated[str | None, Comment("The run a retry retries")] = None
    not_before: Annotated[datetime | None, Comment("A retry's backoff: it starts after this")] = (
        None
    )
    scheduled_for: Annotated[
        datetime | None, Comment("A schedule tick's time (UTC): the tick this run is for")
    ] = None
    requested_at: datetime
    fingerprint: Annotated[
        str | None,
        Comment(
            "An Idempotency-Key's request (sha256 of method, path and body): the same key "
            "with another request is refused"
        ),
    ] = None


@dataclass(frozen=True, kw_only=True)
class MetadataSyncRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="metadata_syncs",
        comment=(
            "Each sync of a YAML document from a watched folder (laketx watch, or serve's "
            "watcher): the file, its content hash, the outcome and what changed. A file version is"
            " claimed by compare-and-set, so two watchers on one folder apply it once."
        ),
        day="synced_date",
        date_of="synced_at",
        cluster_by=("tenant_id", "file"),
    )
    sync_id: str = field(default_factory=new_id)
    tenant_id: str
    folder: Annotated[str, Comment("The watched folder")]
    file: Annotated[str, Comment("The document's path under the folder")]
    content_hash: Annotated[
        str, Comment("sha256 of the file's bytes (of the last applied version, for a removal)")
    ]
    outcome: Annotated[
        SyncOutcome,
        Comment(
            "APPLYING (claimed), APPLIED, UNCHANGED, REFUSED (invalid: nothing applied), FAILED "
            "(retried), DEACTIVATED (removed, with --deactivate-missing)"
        ),
    ]
    changes: Annotated[
        str | None,
        Comment("JSON: the definitions created, updated or deactivated [{table, key, action}]"),
    ] = None
    definitions: Annotated[
        str | None,
        Comment(
            "JSON: every definition the document defines [[table, key...]], what a removal "
            "deactivates"
        ),
    ] = None
    errors: Annotated[
        str | None, Comment("JSON: why it was refused or failed [{path, message}]")
    ] = None
    watcher: Annotated[str, Comment("host:pid of the watcher")]
    synced_at: datetime


@dataclass(frozen=True, kw_only=True)
class StoreMigrationRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="store_migrations",
        comment=(
            "Each migration of the store's own schema (laketx migrate), in order. The version each"
            " table is at is its table property laketx.store_version."
        ),
        day="applied_date",
        date_of="applied_at",
        cluster_by=("tenant_id", "version"),
    )
    version: Annotated[Int32, Comment("The migration's number")]
    name: str
    tenant_id: Annotated[str, Comment("The tenant whose store it migrated")]
    applied_at: datetime
    worker: Annotated[str, Comment("host:pid that ran it")]
    changes: Annotated[str | None, Comment("JSON: what it changed, table by table")] = None


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
