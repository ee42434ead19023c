"""Records of the definition tables a run is made of: datasets (with their transform),
quality rules, policies, jobs and their tasks."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import JsonValue

from lakeguard.records.checks.rule_rows import PolicyRuleRow, QualityRuleRow
from lakeguard.records.definitions.datasets import DatasetRow
from lakeguard.records.definitions.jobs import JobParameterRow, JobRow, JobTaskRow
from lakeguard.records.quality.profiling import ProfileCadence
from lakeguard.records.rows.parsing import json_or, str_tuple
from lakeguard.words.vocabulary import (
    DeleteMissing,
    Enforcement,
    FailBehavior,
    Layer,
    LoadType,
    vocab,
)


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
    tags: tuple[str, ...] = ()  # what notification routes select it by

    @classmethod
    def from_row(cls, row: DatasetRow) -> DatasetDef:
        raw = json_or(row.transform, {})
        where = f"dataset_registry[{row.dataset_id}]"
        return cls(
            dataset_id=row.dataset_id,
            dataset_name=row.dataset_name or row.dataset_id,
            layer=vocab(Layer, row.layer, f"{where}.layer"),
            table_name=row.table_name,
            parents=str_tuple(row.parents),
            business_keys=str_tuple(row.business_keys),
            sequence_by=row.sequence_by,
            load_type=vocab(LoadType, row.load_type or "append", f"{where}.load_type"),
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
            domain=row.domain,
            owner=row.owner,
            description=row.description,
            definition_hash=row.definition_hash,
            tags=str_tuple(row.tags),
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
    def from_row(cls, row: QualityRuleRow) -> RuleDef:
        return cls(
            rule_id=row.rule_id,
            dataset_id=row.dataset_id,
            rule_type=row.rule_type,
            rule_expression=row.rule_expression or "{}",
            severity=row.severity or "FAIL",
            layer=row.layer,
            description=row.description,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class PolicyDef:
    """A platform guarantee checked before every write to the layers it covers."""

    policy_id: str
    policy_type: str  # a type of lakeguard.rules.policy.kinds
    layers: tuple[str, ...]
    expression: str
    enforcement: Enforcement
    parameters: dict[str, JsonValue] = field(
        default_factory=dict
    )  # its type's, as the document gave them
    description: str | None = None

    @classmethod
    def from_row(cls, row: PolicyRuleRow) -> PolicyDef:
        return cls(
            policy_id=row.policy_id,
            policy_type=row.policy_type,
            layers=tuple(x for x in row.applies_to_layer.split(",") if x),
            expression=row.policy_expression or "",
            enforcement=vocab(
                Enforcement, row.enforcement, f"policy_rules[{row.policy_id}].enforcement"
            ),
            parameters=dict(json_or(row.parameters, {})),
            description=row.description,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class JobTaskDef:
    task_id: str
    dataset_id: str
    execution_order: int
    depends_on: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, row: JobTaskRow) -> JobTaskDef:
        return cls(
            task_id=row.task_id,
            dataset_id=row.dataset_id,
            execution_order=row.execution_order,
            depends_on=tuple(row.depends_on),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class JobDef:
    """A job as it runs: its row's values (a NULL as the row class's default), its tasks in
    their order and its parameters; no default of its own (`from_row` makes every one)."""

    job_id: str
    max_retries: int
    retry_delay_seconds: int
    enabled: bool
    schedule: str | None
    timezone: str
    triggers: tuple[str, ...]  # file_arrival, upstream, webhook (besides its schedule)
    webhook_secret_ref: str | None
    created_at: datetime | None  # its schedule owes no tick from before
    tasks: tuple[JobTaskDef, ...] = ()
    parameters: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_row(
        cls, row: JobRow, tasks: Iterable[JobTaskRow] = (), params: Iterable[JobParameterRow] = ()
    ) -> JobDef:
        """The job of a stored row, with its own task and parameter rows."""
        return cls(
            job_id=row.job_id,
            max_retries=row.max_retries,
            retry_delay_seconds=row.retry_delay_seconds,
            enabled=row.enabled,
            schedule=row.schedule,
            timezone=row.timezone,
            triggers=tuple(row.trigger_sources),
            webhook_secret_ref=row.webhook_secret_ref,
            created_at=row.created_at,
            tasks=tuple(
                sorted((JobTaskDef.from_row(t) for t in tasks), key=lambda t: t.execution_order)
            ),
            parameters={p.param_key: p.param_value for p in params},
        )
