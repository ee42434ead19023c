"""Typed records of the metadata tables, as the store's reader returns them (pure).

The engine, the gate and the facade see these frozen records, never raw rows or DataFrames.
Each `from_row` takes one stored row and parses its JSON-in-STRING columns once: a runtime
table's row as its row class (`runtime_rows.py`), a definition table's as the plain dict
delta-rs reads (definition tables have no row class: their rows come from documents and
direct SQL edits, and are checked here and in `catalog/recheck.py`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticError

from lakeguard.errors import ValidationError
from lakeguard.evidence import Evidence
from lakeguard.quality.profiling import ProfileCadence
from lakeguard.schema.drift import ChangeKind, DriftDecision
from lakeguard.shapes import JsonObject, StoredRow
from lakeguard.source_kinds import DEFAULT_KIND, SOURCE_KINDS, ObjectOptions, SystemOptions
from lakeguard.source_kinds.base import NoObjectOptions
from lakeguard.store.runtime_rows import (
    DataVersionRow,
    DecisionRow,
    PipelineRunRow,
    RuleResultRow,
    SchemaChangeRow,
)
from lakeguard.trust import TrustScore
from lakeguard.vocabulary import (
    AttemptStatus,
    DeleteMissing,
    Enforcement,
    EventStatus,
    FailBehavior,
    Layer,
    LoadType,
    Outcome,
    Severity,
    SourceKindName,
    SourceLoad,
    TriggerType,
    vocab,
)


def _json(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return default


def _tuple(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value or ())


M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, kw_only=True, slots=True)
class Transform:
    """How a derived dataset shapes its input and publishes it."""

    filter: str | None = None
    columns: dict[str, str] | None = None
    profile: bool = True
    profile_cadence: ProfileCadence | None = None  # the full profile's, if any
    sql: str | None = None  # a SQL model over the parents (replaces filter and columns)
    refresh_keys: tuple[str, ...] | None = None  # SQL models: incremental by these keys
    hash_strategy: str | dict[str, list[str]] = "all"
    delete_missing: DeleteMissing = DeleteMissing.NONE
    schema_profile: str = "additive"
    fail_behavior: FailBehavior = FailBehavior.QUARANTINE


@dataclass(frozen=True, kw_only=True, slots=True)
class DatasetDef:
    dataset_id: str
    dataset_name: str
    layer: Layer
    table_name: str
    parents: tuple[str, ...] = ()
    business_keys: tuple[str, ...] = ()
    sequence_by: str | None = None
    load_type: LoadType = LoadType.APPEND
    transform: Transform = field(default_factory=Transform)
    domain: str | None = None
    owner: str | None = None
    description: str | None = None
    definition_hash: str | None = None

    @classmethod
    def from_row(cls, row: StoredRow) -> DatasetDef:
        raw = _json(row.get("transform"), {})
        where = f"dataset_registry[{row['dataset_id']}]"
        return cls(
            dataset_id=row["dataset_id"],
            dataset_name=row.get("dataset_name") or row["dataset_id"],
            layer=vocab(Layer, row["layer"], f"{where}.layer"),
            table_name=row["table_name"],
            parents=_tuple(row.get("parents")),
            business_keys=_tuple(row.get("business_keys")),
            sequence_by=row.get("sequence_by"),
            load_type=vocab(LoadType, row.get("load_type") or "append", f"{where}.load_type"),
            transform=Transform(
                filter=raw.get("filter"),
                columns=raw.get("columns"),
                profile=isinstance(raw.get("profile"), dict) or bool(raw.get("profile", True)),
                profile_cadence=ProfileCadence.from_json(raw.get("profile")),
                sql=raw.get("sql"),
                refresh_keys=tuple(raw["refresh_keys"]) if raw.get("refresh_keys") else None,
                hash_strategy=raw.get("hash_strategy") or "all",
                delete_missing=vocab(
                    DeleteMissing, raw.get("delete_missing") or "none", f"{where}.delete_missing"
                ),
                schema_profile=raw.get("schema_profile") or "additive",
                fail_behavior=vocab(
                    FailBehavior, raw.get("fail_behavior") or "quarantine", f"{where}.fail_behavior"
                ),
            ),
            domain=row.get("domain"),
            owner=row.get("owner"),
            description=row.get("description"),
            definition_hash=row.get("definition_hash"),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class SourceSystemDef:
    source_system_id: str
    kind: SourceKindName
    options: SystemOptions  # the kind's typed model (lakeguard.source_kinds)
    enabled: bool = True
    credential_ref: str | None = None

    @classmethod
    def from_row(cls, row: StoredRow) -> SourceSystemDef:
        where = f"source_systems[{row['source_system_id']}]"
        kind = vocab(SourceKindName, row.get("kind") or DEFAULT_KIND, f"{where}.kind")
        return cls(
            source_system_id=row["source_system_id"],
            kind=kind,
            enabled=bool(row.get("enabled", True)),
            options=_parsed(
                lambda: SOURCE_KINDS[kind].system(_json(row.get("connection_options"), {})),
                f"{where}.connection_options",
            ),
            credential_ref=row.get("credential_ref"),
        )


def _parsed(parse: Callable[[], M], where: str) -> M:
    """What `parse` makes of a stored JSON column, its pydantic errors as a ValidationError."""
    try:
        return parse()
    except PydanticError as exc:
        errors = [
            {"path": ".".join([where, *map(str, e["loc"])]), "message": e["msg"]}
            for e in exc.errors()
        ]
        raise ValidationError(
            f"{where} does not parse: {errors[0]['path']}: {errors[0]['message']}",
            where=where,
            errors=errors,
            fix="correct the options (or re-apply the definition's document)",
        ) from None


@dataclass(frozen=True, kw_only=True, slots=True)
class SourceColumnDef:
    source_object_id: str
    column_name: str
    data_type: str
    nullable: bool
    ordinal: int
    is_pii: bool = False

    @classmethod
    def from_row(cls, row: StoredRow) -> SourceColumnDef:
        return cls(
            source_object_id=row["source_object_id"],
            column_name=row["column_name"],
            data_type=row["data_type"],
            nullable=bool(row["nullable"]),
            ordinal=int(row["ordinal"]),
            is_pii=bool(row.get("is_pii")),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class SourceObjectDef:
    source_object_id: str
    source_system_id: str
    locator: str
    format: str
    dataset_id: str
    read_options: dict[str, str] = field(default_factory=dict)
    load_type: SourceLoad = SourceLoad.APPEND
    watermark_column: str | None = None
    max_malformed_ratio: float = 0.0
    schema_profile: str = "additive"
    fail_behavior: FailBehavior = FailBehavior.QUARANTINE
    lookback: float | str | None = None
    options: ObjectOptions = field(default_factory=NoObjectOptions)  # its kind's typed model
    columns: tuple[SourceColumnDef, ...] = ()

    @classmethod
    def from_row(
        cls,
        row: StoredRow,
        columns: tuple[SourceColumnDef, ...] = (),
        kind: SourceKindName = SourceKindName.FILE,
    ) -> SourceObjectDef:
        """The stored row, its `ingest_options` read as the options of its system's `kind`."""
        where = f"source_objects[{row['source_object_id']}]"
        ingest = _json(row.get("ingest_options"), {})
        return cls(
            source_object_id=row["source_object_id"],
            source_system_id=row["source_system_id"],
            locator=row["locator"],
            format=row["format"],
            dataset_id=row["dataset_id"],
            read_options={str(k): str(v) for k, v in _json(row.get("read_options"), {}).items()},
            load_type=vocab(SourceLoad, row.get("load_type") or "append", f"{where}.load_type"),
            watermark_column=row.get("watermark_column"),
            max_malformed_ratio=float(row.get("max_malformed_ratio") or 0.0),
            schema_profile=row.get("schema_compat_profile") or "additive",
            fail_behavior=vocab(
                FailBehavior, row.get("dq_fail_behavior") or "quarantine", f"{where}.fail_behavior"
            ),
            lookback=ingest.get("lookback"),
            options=_parsed(lambda: SOURCE_KINDS[kind].object(ingest), f"{where}.ingest_options"),
            columns=tuple(sorted(columns, key=lambda c: c.ordinal)),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleDef:
    """A quality rule as stored; `rule_expression` stays raw so compiling can report it."""

    rule_id: str
    dataset_id: str
    rule_type: str
    rule_expression: str
    severity: str
    layer: str | None = None
    description: str | None = None

    @classmethod
    def from_row(cls, row: StoredRow) -> RuleDef:
        return cls(
            rule_id=row["rule_id"],
            dataset_id=row["dataset_id"],
            rule_type=row["rule_type"],
            rule_expression=row.get("rule_expression") or "{}",
            severity=row.get("severity") or "FAIL",
            layer=row.get("layer"),
            description=row.get("description"),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class PolicyDef:
    """A platform guarantee checked before every write to the layers it covers."""

    policy_id: str
    policy_type: str  # a type of lakeguard.policy.kinds
    layers: tuple[str, ...]
    expression: str
    enforcement: Enforcement
    parameters: JsonObject = field(default_factory=dict)  # its type's, as the document gave them
    description: str | None = None

    @classmethod
    def from_row(cls, row: StoredRow) -> PolicyDef:
        return cls(
            policy_id=row["policy_id"],
            policy_type=row["policy_type"],
            layers=tuple(x for x in (row.get("applies_to_layer") or "").split(",") if x),
            expression=row.get("policy_expression") or "",
            enforcement=vocab(
                Enforcement, row["enforcement"], f"policy_rules[{row['policy_id']}].enforcement"
            ),
            parameters=dict(_json(row.get("parameters"), {})),
            description=row.get("description"),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class JobTaskDef:
    task_id: str
    dataset_id: str
    execution_order: int
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class JobDef:
    job_id: str
    max_retries: int = 0
    retry_delay_seconds: int = 0
    enabled: bool = True
    schedule: str | None = None
    timezone: str = "UTC"
    triggers: tuple[str, ...] = ()  # file_arrival, upstream, webhook (besides its schedule)
    webhook_secret_ref: str | None = None
    created_at: datetime | None = None  # its schedule owes no tick from before
    tasks: tuple[JobTaskDef, ...] = ()
    parameters: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovedVersion:
    """One row of `data_versions`: an approved snapshot of a dataset."""

    dataset_id: str
    version: int
    snapshot_ref: str
    run_id: str
    upstream_refs: dict[str, int]
    row_count: int
    schema_hash: str | None = None
    promoted_at: datetime | None = None
    content_hash: str | None = None
    rows_written: int | None = None
    definition_hash: str | None = None  # Registry.definition_hash when it was made

    @classmethod
    def from_row(cls, row: DataVersionRow) -> ApprovedVersion:
        return cls(
            dataset_id=row.dataset_id,
            version=row.version,
            snapshot_ref=row.snapshot_ref,
            run_id=row.run_id,
            upstream_refs={k: int(v) for k, v in _json(row.upstream_refs, {}).items()},
            row_count=row.row_count,
            schema_hash=row.schema_hash,
            promoted_at=row.promoted_at,
            content_hash=row.content_hash,
            rows_written=row.rows_written,
            definition_hash=row.definition_hash,
        )


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
class DatasetStatus:
    """A registered dataset with its latest approved version and its latest attempt."""

    dataset_id: str
    layer: Layer
    table_name: str
    version: int | None = None
    snapshot_ref: str | None = None
    row_count: int | None = None
    promoted_at: datetime | None = None
    last_status: AttemptStatus | None = None
    last_run_at: datetime | None = None
    last_error: str | None = None
    trust: int | None = None  # 0..100, see lakeguard.trust
    stuck: str | None = None  # blocked again and again on the same input (lakeguard.stuck)


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleResult:
    """One row of `data_quality_results`: one rule's outcome on one batch."""

    rule_id: str
    rule_type: str
    severity: Severity
    failed_rows: int
    rows_evaluated: int
    outcome: Outcome
    sample_values: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, row: RuleResultRow) -> RuleResult:
        return cls(
            rule_id=row.rule_id,
            rule_type=row.rule_type,
            severity=vocab(Severity, row.severity, f"data_quality_results[{row.result_id}]"),
            failed_rows=row.failed_rows,
            rows_evaluated=row.rows_evaluated,
            outcome=row.outcome,
            sample_values=_tuple(row.sample_values),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class SchemaChange:
    """One row of `schema_change_log`, as `explain` shows it."""

    change_kind: ChangeKind
    column_name: str | None
    old_type: str | None
    new_type: str | None
    profile: str | None
    decision: DriftDecision

    @classmethod
    def from_row(cls, row: SchemaChangeRow) -> SchemaChange:
        return cls(
            change_kind=row.change_kind,
            column_name=row.column_name,
            old_type=row.old_type,
            new_type=row.new_type,
            profile=row.profile,
            decision=row.decision,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class DecisionRecord:
    """One row of `promotion_status`, with the rule results of its attempt."""

    decision_id: str
    dataset_id: str
    run_id: str
    from_layer: str
    to_layer: str
    allowed: bool
    reason: str
    evaluated_at: datetime
    evidence: Evidence = field(default_factory=Evidence)
    rules: tuple[RuleResult, ...] = ()
    schema_changes: tuple[SchemaChange, ...] = ()
    version: int | None = None  # the version the promotion produced, if it was published
    advice: tuple[str, ...] = ()
    trust: TrustScore | None = None  # the dataset's score and components
    stuck: str | None = None  # blocked again and again on the same input (lakeguard.stuck)
    asks: dict[str, str] = field(default_factory=dict)  # rule id -> what the rule asks, today

    @classmethod
    def from_row(cls, row: DecisionRow, rules: tuple[RuleResult, ...] = ()) -> DecisionRecord:
        return cls(
            decision_id=row.decision_id,
            dataset_id=row.dataset_id,
            run_id=row.run_id,
            from_layer=row.from_layer,
            to_layer=row.to_layer,
            allowed=row.allowed,
            reason=row.reason,
            evaluated_at=row.evaluated_at,
            evidence=Evidence.from_json(row.evidence),
            rules=rules,
        )

    def to_json(self) -> JsonObject:
        """The decision as `explain --json` and the API give it (a JSON object)."""
        trust = {**asdict(self.trust), "explanation": self.trust.explain()} if self.trust else {}
        return {**asdict(self), "evidence": self.evidence.to_json(), "trust": trust}


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
