"""The metadata-as-code document: pydantic models with `extra="forbid"` everywhere.

A document declares source systems, source objects (with their approved columns), datasets,
quality rules and jobs. Field names are the ones a data engineer writes in YAML; `apply.py`
maps them onto the control tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    Field,
    TypeAdapter,
    field_validator,
)
from pydantic import ValidationError as PydanticError

from lakeguard.records.definitions.jobs import JobRow
from lakeguard.records.schema.drift import ChangeKind, DriftDecision
from lakeguard.rules.catalog.alert_models import NotificationChannel, NotificationRoute
from lakeguard.rules.catalog.source_models import (
    KIND_FIELDS,
    ColumnRule,
    ColumnSpec,
    SourceObject,
    SourceObjectBase,
    SourceSystem,
    SourceSystemBase,
    system_model,
)
from lakeguard.rules.policy.kinds import POLICY_TYPES
from lakeguard.rules.quality.kinds import RULE_KINDS, Rule
from lakeguard.words.fields import ColumnName, Identifier, Strict
from lakeguard.words.vocabulary import DeleteMissing, Enforcement, FailBehavior, Layer, LoadType

__all__ = [
    "KIND_FIELDS",
    "ColumnName",
    "ColumnRule",
    "ColumnSpec",
    "Identifier",
    "Rule",
    "SourceObject",
    "SourceObjectBase",
    "SourceSystem",
    "SourceSystemBase",
    "Strict",
    "system_model",
]


class SchemaProfile(Strict):
    """A named schema compatibility profile: what each kind of drift does (ALLOW, ALERT,
    BLOCK). It starts from a shipped profile (`base`) and overrides some kinds."""

    id: Identifier
    base: Literal["strict", "additive", "permissive"] | None = Field(
        default=None, description="Shipped profile to start from (default: every kind BLOCK)"
    )
    rules: dict[ChangeKind, DriftDecision] = Field(default_factory=dict)
    description: str | None = None


if TYPE_CHECKING:
    PolicyType = str
else:  # the registry's list, as the Literal a document is validated with
    PolicyType = Literal[POLICY_TYPES]


class Policy(Strict):
    """A platform guarantee: checked before every write to the layers it covers."""

    id: Identifier
    type: PolicyType
    applies_to: list[Layer] = Field(min_length=1, description="The layers it covers")
    enforcement: Enforcement = Enforcement.BLOCK
    expression: str | None = Field(
        default=None,
        description="A boolean over the type's metrics (docs/metadata.md); default per type",
    )
    window: int = Field(
        default=5, ge=1, le=100, description="VOLUME: approved versions the band is learnt from"
    )
    description: str | None = None


class ProfileSchedule(Strict):
    """When the full column profile (distinct counts, means, deviations, top values) runs;
    the footer profile (nulls, min, max) runs with every batch anyway."""

    every: int | None = Field(default=None, ge=1, description="Every Nth evaluated batch")
    cron: str | None = Field(default=None, description="When a cron time has passed since")
    top_values: int = Field(default=5, ge=0, le=100, description="Most frequent string values")

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str | None, info: Any) -> str | None:
        from croniter import croniter  # start-up time: only documents with a cron load it

        if value is not None and info.data.get("every") is not None:
            raise ValueError("say either every or cron, not both")
        if value is not None and not croniter.is_valid(value):
            raise ValueError(f"{value!r} is not a cron expression")
        return value


class IncludeColumns(Strict):
    include: list[ColumnName] = Field(min_length=1)


class ExcludeColumns(Strict):
    exclude: list[ColumnName] = Field(min_length=1)


HashStrategy = Literal["all"] | IncludeColumns | ExcludeColumns


class Dataset(Strict):
    id: Identifier
    name: str | None = None
    layer: Layer
    domain: str | None = None
    owner: str | None = None
    tags: list[str] = Field(
        default_factory=list, description="Free words notification routes can select it by"
    )
    description: str | None = None
    table: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$",
        description="Qualified table name; default <layer>.<id>",
    )
    parents: list[Identifier] = Field(default_factory=list)
    business_keys: list[ColumnName] = Field(default_factory=list)
    sequence_by: ColumnName | None = None
    load_type: LoadType | None = Field(
        default=None,
        description="How approved batches are published: append, merge (upsert on business "
        "keys), full (replace), scd2 (history on business keys). Default: merge with keys",
    )
    hash_strategy: HashStrategy = Field(
        default="all",
        description="Which columns make the row hash that tells a changed row (merge, scd2): "
        "all non-key columns, or {include: [...]} / {exclude: [...]}",
    )
    delete_missing: DeleteMissing = Field(
        default=DeleteMissing.NONE,
        description="A full snapshot lacks a key the table has: keep it (none), mark it "
        "deleted (soft: _laketx_deleted_at / scd2 closes it), or delete it (hard)",
    )
    filter: str | None = Field(default=None, description="SQL predicate rows must meet to enter")
    columns: dict[ColumnName, str] | None = Field(
        default=None, description="Output column -> SQL expression over the input"
    )
    sql: str | None = Field(
        default=None,
        description="A SQL model: one SELECT over the parents, each named by its dataset id "
        "(joins, aggregates, windows and CTEs allowed); replaces filter and columns",
    )
    refresh_keys: list[ColumnName] | None = Field(
        default=None,
        description="SQL models: recompute only the keys the parents' new rows touch "
        "(default: full refresh)",
    )
    profile: bool | ProfileSchedule = Field(
        default=True,
        description="false: no profile; true: the footer profile of every batch; a schedule: "
        "also the full profile at that cadence ({} for every batch)",
    )
    schema_profile: str = Field(
        default="additive",
        description="How a change of this dataset's schema is decided (see schema_profiles)",
    )
    fail_behavior: FailBehavior = Field(
        default=FailBehavior.QUARANTINE,
        description="Derived datasets: what a FAIL rule breach does (as for source objects)",
    )

    @property
    def table_name(self) -> str:
        return self.table or f"{self.layer.value}.{self.id}"

    @property
    def hash_spec(self) -> str | dict[str, list[str]]:
        """`hash_strategy` as plain data: "all", {"include": [...]} or {"exclude": [...]}."""
        if isinstance(self.hash_strategy, str):
            return self.hash_strategy
        return self.hash_strategy.model_dump()

    @property
    def effective_load_type(self) -> LoadType:
        if self.load_type:
            return self.load_type
        if self.sql is not None:
            return LoadType.MERGE if self.refresh_keys else LoadType.FULL
        return LoadType.MERGE if self.business_keys else LoadType.APPEND


JobTrigger = Literal["file_arrival", "upstream", "webhook"]


class Task(Strict):
    id: Identifier
    dataset: Identifier
    depends_on: list[Identifier] = Field(default_factory=list)


class Job(Strict):
    id: Identifier
    description: str | None = None
    owner: str | None = None
    schedule: str | None = Field(
        default=None, description="Cron expression, read in `timezone` (laketx serve runs it)"
    )
    # a default a stored row's NULL also reads as is its row class's (`records/definitions/`)
    timezone: str = Field(default=JobRow.timezone, description="IANA time zone of the schedule")
    triggers: list[JobTrigger] = Field(
        default_factory=list,
        description="Besides its schedule, what starts the job under `laketx serve`: "
        "file_arrival (a new file in one of its file sources), upstream (a parent dataset of "
        "one of its tasks got a new approved version from another job), webhook",
    )
    webhook_secret_ref: str | None = Field(
        default=None,
        pattern=r"^(env:)?[A-Za-z_][A-Za-z0-9_]*$|^file:.+$",
        description="Where the webhook's HMAC-SHA256 secret is (an environment variable or a "
        "file), like credential_ref; the secret itself is never stored",
    )
    enabled: bool = True
    max_retries: int = Field(default=JobRow.max_retries, ge=0, le=10)
    retry_delay_seconds: int = Field(default=JobRow.retry_delay_seconds, ge=0)
    parameters: dict[str, str] = Field(default_factory=dict)
    tasks: list[Task] = Field(min_length=1)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # start-up time: jobs only

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"{value!r} is not an IANA time zone (e.g. Europe/Paris)") from exc
        return value


class MetadataDocument(Strict):
    """One YAML document of metadata."""

    version: Literal[1] = 1
    schema_profiles: list[SchemaProfile] = Field(default_factory=list)
    policies: list[Policy] = Field(default_factory=list)
    source_systems: list[SourceSystem] = Field(default_factory=list)
    source_objects: list[SourceObject] = Field(default_factory=list)
    datasets: list[Dataset] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)
    jobs: list[Job] = Field(default_factory=list)
    notification_channels: list[NotificationChannel] = Field(
        default_factory=list, description="Where events are sent (docs/alerts.md)"
    )
    notification_routes: list[NotificationRoute] = Field(
        default_factory=list, description="Which events go to which channel"
    )

    def column_rules(self) -> list[tuple[tuple[Any, ...], Any]]:
        """Rules written under source columns, each expanded into a full rule (or, when its
        parameters do not make one, the reason), with its location in the document."""

        adapter: TypeAdapter[Any] = TypeAdapter(Rule)
        found: list[tuple[tuple[Any, ...], Any]] = []
        for i, obj in enumerate(self.source_objects):
            for j, col in enumerate(obj.columns):
                for k, rule in enumerate(col.rules):
                    spec = rule.model_dump(exclude_none=True)
                    spec["id"] = rule.id or f"{obj.id}_{col.name.lower()}_{rule.type.lower()}"[:63]
                    spec["dataset"] = obj.dataset
                    if RULE_KINDS[rule.type].per_column == "columns":
                        spec["columns"] = [col.name]
                    else:
                        spec["column"] = col.name
                    loc = ("source_objects", i, "columns", j, "rules", k)
                    try:
                        found.append((loc, adapter.validate_python(spec)))
                    except PydanticError as exc:
                        found.append((loc, "; ".join(e["msg"] for e in exc.errors())))
        return found

    @property
    def all_rules(self) -> list[Any]:
        """The declared rules and those written under source columns."""
        expanded = [r for _, r in self.column_rules() if not isinstance(r, str)]
        return [*self.rules, *expanded]
