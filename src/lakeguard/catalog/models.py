"""The metadata-as-code document: pydantic models with `extra="forbid"` everywhere.

A document declares source systems, source objects (with their approved columns), datasets,
quality rules and jobs. Field names are the ones a data engineer writes in YAML; `apply.py`
maps them onto the control tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    create_model,
    field_validator,
)
from pydantic import ValidationError as PydanticError
from pydantic.fields import FieldInfo

from lakeguard.catalog.fields import ColumnName, Identifier, Strict
from lakeguard.durations import DURATION
from lakeguard.policy.kinds import POLICY_TYPES
from lakeguard.quality.kinds import PER_COLUMN_KINDS, RULE_KINDS, Rule
from lakeguard.schema.drift import ChangeKind, DriftDecision
from lakeguard.source_kinds import DEFAULT_KIND, KINDS, SOURCE_KINDS, ObjectOptions, SourceKind
from lakeguard.vocabulary import (
    DeleteMissing,
    Enforcement,
    FailBehavior,
    Layer,
    LoadType,
    Severity,
    SourceLoad,
)

__all__ = ["ColumnName", "Identifier", "Rule", "Strict"]

SparkType = Annotated[
    str,
    Field(
        pattern=r"^(string|boolean|int|bigint|long|double|float|date|timestamp|decimal\(\d{1,2},\d{1,2}\))$"
    ),
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
    PerColumnKind = str
    PolicyType = str
    SourceFormat = str
else:  # the registries' lists, as the Literals a document is validated with
    PerColumnKind = Literal[PER_COLUMN_KINDS]
    PolicyType = Literal[POLICY_TYPES]
    SourceFormat = Literal[tuple(dict.fromkeys(f for k in KINDS for f in k.formats))]


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


class SourceSystemBase(Strict):
    """A source system; its `kind` selects the typed model of its `options`."""

    id: Identifier
    kind: str = DEFAULT_KIND  # each kind's model narrows it to its name
    description: str | None = None
    enabled: bool = True
    options: Any = None  # each kind's model types it
    credential_ref: str | None = Field(
        default=None,
        pattern=r"^(env:)?[A-Za-z_][A-Za-z0-9_]*$|^file:.+$",
        description="Where the secret (a password, a token) is: an environment variable "
        "(NAME or env:NAME) or a file (file:/path). The secret itself is never stored.",
    )

    @property
    def source_kind(self) -> SourceKind[Any, Any]:
        return SOURCE_KINDS[self.kind]


def _system_model(kind: SourceKind[Any, Any]) -> type[SourceSystemBase]:
    name = kind.name.value
    options: Any = kind.system_options
    required = any(f.is_required() for f in options.model_fields.values())
    described = f"The options of a {name} system"
    literal: Any = Literal[name]
    # the default kind needs no word; any other is written, so an export keeps it
    default: Any = name if name == DEFAULT_KIND else ...
    return create_model(
        f"{name.title()}SourceSystem",
        __base__=SourceSystemBase,
        kind=(literal, default),
        options=(
            options,
            Field(description=described)
            if required
            else Field(default_factory=options, description=described),
        ),
    )


def system_model(kind: str) -> type[SourceSystemBase]:
    """The document model of a system of `kind` (the base model for an unknown kind)."""
    return _SYSTEM_MODELS.get(kind, SourceSystemBase)


def _kind_tag(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("kind", DEFAULT_KIND)
    else:
        kind = getattr(value, "kind", DEFAULT_KIND)
    return str(kind).upper()


_SYSTEM_MODELS = {k.name.value: _system_model(k) for k in KINDS}

if TYPE_CHECKING:
    SourceSystem = SourceSystemBase
else:  # one model per registered kind, selected by `kind` (file when it is left out)
    SourceSystem = Annotated[
        Union[tuple(Annotated[m, Tag(n.upper())] for n, m in _SYSTEM_MODELS.items())],  # noqa: UP007
        Discriminator(
            _kind_tag,
            custom_error_type="unknown_source_kind",
            custom_error_message="unknown source kind; source kinds are " + ", ".join(SOURCE_KINDS),
        ),
    ]


class ColumnSpec(Strict):
    name: ColumnName
    type: SparkType = "string"
    nullable: bool = True
    description: str | None = None
    pii: bool = False
    rules: list[ColumnRule] = Field(
        default_factory=list, description="Rules of this column (expanded into `rules`)"
    )


class SourceObjectBase(Strict):
    """A table, a file pattern or an endpoint of a source system, landing in one dataset.

    Its kind's own options (`lakeguard.source_kinds`) are written flat beside these fields;
    which of them apply is decided by the kind of its system (`kind_options`).
    """

    id: Identifier
    system: Identifier
    locator: str = Field(
        min_length=1,
        description="file: a path or glob under the system's root; jdbc: a table "
        "(schema.table); delta: a path under the root or a registered table name (db.table); "
        "http: a path (and query) under the system's base_url",
    )
    format: SourceFormat | None = Field(
        default=None, description="Default: the first format of the system's kind (files: csv)"
    )
    options: dict[str, str] = Field(default_factory=dict, description="Reader options")
    dataset: Identifier
    load_type: SourceLoad | None = Field(
        default=None,
        description="How the source is read: append (each new file once; files' default), "
        "full (a snapshot; JDBC's default), incremental (rows above the watermark, or a Delta "
        "table's new versions; Delta's default)",
    )
    watermark_column: ColumnName | None = Field(
        default=None, description="incremental: the column whose growth marks new rows"
    )
    lookback: float | Annotated[str, Field(pattern=DURATION)] | None = Field(
        default=None,
        description="Read again this far below the last watermark, for late rows: a number "
        "for a numeric watermark, a duration ('2 hours') for a date or timestamp one",
    )
    fail_behavior: FailBehavior = Field(
        default=FailBehavior.QUARANTINE,
        description="What a FAIL rule breach does: quarantine (the batch is blocked and kept "
        "in quarantine.<dataset>), drop (only the failing rows go to quarantine, the rest is "
        "promoted), abort (blocked, and the whole job stops)",
    )
    schema_profile: str = Field(
        default="additive",
        description="How schema drift of this source is decided: strict, additive, permissive "
        "or a profile of schema_profiles",
    )
    max_malformed_ratio: float = Field(
        default=0.0, ge=0.0, le=1.0, description="Share of unparseable rows tolerated"
    )
    relationship: str | None = None
    columns: list[ColumnSpec] = Field(min_length=1)

    def kind_defaults(self, kind: str) -> tuple[str, SourceLoad]:
        """(format, load type) with the defaults of a system of `kind` filled in."""
        found = SOURCE_KINDS.get(kind, SOURCE_KINDS[DEFAULT_KIND])
        return self.format or found.formats[0], self.load_type or found.default_load

    def written_kind_fields(self) -> dict[str, Any]:
        """The kinds' options this object sets (whatever its system's kind)."""
        return {name: getattr(self, name) for name in KIND_FIELDS if name in self.model_fields_set}

    def kind_options(self, kind: str) -> ObjectOptions:
        """The object's options as its kind's typed model (pydantic's ValidationError when one
        does not apply to the kind or does not parse)."""
        return SOURCE_KINDS[kind].object_options.model_validate(
            {k: _plain(v) for k, v in self.written_kind_fields().items()}
        )

    @field_validator("columns")
    @classmethod
    def _unique_columns(cls, cols: list[ColumnSpec]) -> list[ColumnSpec]:
        seen: set[str] = set()
        for col in cols:
            if col.name.lower() in seen:
                raise ValueError(f"column {col.name!r} is declared twice")
            seen.add(col.name.lower())
        return cols


def _plain(value: Any) -> Any:
    return value.model_dump(exclude_unset=True) if hasattr(value, "model_dump") else value


def _kind_fields() -> dict[str, tuple[Any, FieldInfo]]:
    """Every kind's object options, as optional fields of the document's source object."""
    fields: dict[str, tuple[Any, FieldInfo]] = {}
    owners: dict[str, list[str]] = {}
    for kind in KINDS:
        for name, info in kind.object_options.model_fields.items():
            owners.setdefault(name, []).append(kind.name.value)
            if name in fields:
                if fields[name][0] != info.annotation | None:
                    raise RuntimeError(
                        f"source kinds declare option {name!r} with different types; "
                        "give one of them another name"
                    )
                continue
            optional: FieldInfo = Field(default=None, description=info.description)  # type: ignore[assignment]
            fields[name] = (info.annotation | None, optional)
    for name, (_, info) in fields.items():
        info.description = f"{', '.join(owners[name])} sources: {info.description or name}"
    return fields


KIND_FIELDS: dict[str, tuple[Any, FieldInfo]] = _kind_fields()


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


class ColumnRule(Strict):
    """A rule written under a column (seed 001's per-column rule sets): a kind that can name
    one column, with that kind's parameters (checked when it is expanded into a full rule)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: PerColumnKind
    id: Identifier | None = Field(default=None, description="Default: <object>_<column>_<type>")
    severity: Severity = Severity.FAIL
    threshold: float = Field(default=0.0, ge=0.0, le=1.0)
    description: str | None = None


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
    timezone: str = Field(default="UTC", description="IANA time zone of the schedule")
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
    max_retries: int = Field(default=0, ge=0, le=10)
    retry_delay_seconds: int = Field(default=30, ge=0)
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


if TYPE_CHECKING:
    SourceObject = SourceObjectBase
else:  # the common fields and every kind's options (which apply: `kind_options`)
    SourceObject = create_model("SourceObject", __base__=SourceObjectBase, **KIND_FIELDS)


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
