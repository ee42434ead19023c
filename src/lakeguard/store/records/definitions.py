"""Records of the definition tables a run is made of: datasets (with their transform),
quality rules, policies, jobs and their tasks."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from lakeguard.quality.profiling import ProfileCadence
from lakeguard.shapes import JsonObject, StoredRow
from lakeguard.store.records.parsing import json_or, str_tuple
from lakeguard.vocabulary import DeleteMissing, Enforcement, FailBehavior, Layer, LoadType, vocab


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
    def from_row(cls, row: StoredRow) -> DatasetDef:
        raw = json_or(row.get("transform"), {})
        where = f"dataset_registry[{row['dataset_id']}]"
        return cls(
            dataset_id=row["dataset_id"],
            dataset_name=row.get("dataset_name") or row["dataset_id"],
            layer=vocab(Layer, row["layer"], f"{where}.layer"),
            table_name=row["table_name"],
            parents=str_tuple(row.get("parents")),
            business_keys=str_tuple(row.get("business_keys")),
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
            tags=str_tuple(row.get("tags")),
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
            parameters=dict(json_or(row.get("parameters"), {})),
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
