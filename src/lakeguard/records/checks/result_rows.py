"""What a dataset attempt found in its batch: quality and rule outcomes, profiles, schema
snapshots and changes, and the trust score after it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.runtime import RuntimeRow, new_id
from lakeguard.records.rows.schema import Comment, Int32, RuntimeTable
from lakeguard.records.schema.drift import ChangeKind, DriftDecision
from lakeguard.words.vocabulary import DqStatus, Outcome


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
    # the rule as it judged (lakeguard.records.judged); null in rows recorded before it was kept
    threshold: Annotated[float | None, Comment("Failing share the rule tolerated then")] = None
    rule_expression: Annotated[
        str | None, Comment("The rule's parameters then, threshold aside (JSON)")
    ] = None
    asks: Annotated[str | None, Comment("What the rule asked then, in words")] = None


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
class TrustScoreRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="trust_scores",
        comment=(
            "The trust score of a dataset after each attempt, with the components behind it (see "
            "lakeguard/records/trust.py)."
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
    quality: Annotated[
        float, Comment("Rules' failing shares against thresholds, last 10 promoted batches")
    ]
    freshness: Annotated[
        float, Comment("1 under 24 h since the latest approved version, 0 at 7 days")
    ]
    stability: Annotated[
        float, Comment("1 / (1 + unsettled schema changes + failed attempts), not held ones")
    ]
    lineage: Annotated[
        float, Comment("Share of approved versions with an allowed decision and evidence")
    ]
    computed_at: datetime
