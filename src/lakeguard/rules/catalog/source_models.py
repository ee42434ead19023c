"""The source part of a metadata document: source systems, whose `kind` selects the typed
model of their options, and source objects with their approved columns (and the rules written
under them), whose kind options are written flat beside the common fields."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    create_model,
    field_validator,
)
from pydantic.fields import FieldInfo

from lakeguard.records.schema.types import TypeProblem, canonical
from lakeguard.records.sources.kinds import (
    DEFAULT_KIND,
    KINDS,
    SOURCE_KINDS,
    ObjectOptions,
    SourceKind,
)
from lakeguard.records.sources.rows import SourceObjectRow
from lakeguard.rules.quality.kinds import PER_COLUMN_KINDS
from lakeguard.words.durations import DURATION
from lakeguard.words.fields import ColumnName, Identifier, Strict
from lakeguard.words.vocabulary import FailBehavior, Severity, SourceLoad

_SCALAR = r"string|boolean|int|bigint|long|double|float|date|timestamp|decimal\(\d{1,2},\d{1,2}\)"


def _declared_type(text: str) -> str:
    """A nested type parsed and written as Spark's simpleString (a scalar as written)."""
    try:
        return canonical(text)
    except TypeProblem as exc:
        raise ValueError(str(exc)) from None


SparkType = Annotated[
    str,
    Field(
        pattern=rf"^({_SCALAR}|(array|map|struct)\s*<.*>)$",
        description="A scalar type, or for JSON sources array<T>, map<string,T> or "
        "struct<name:T,...>",
    ),
    AfterValidator(_declared_type),
]


if TYPE_CHECKING:
    PerColumnKind = str
    SourceFormat = str
else:  # the registries' lists, as the Literals a document is validated with
    PerColumnKind = Literal[PER_COLUMN_KINDS]
    SourceFormat = Literal[tuple(dict.fromkeys(f for k in KINDS for f in k.formats))]


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


class ColumnRule(Strict):
    """A rule written under a column (seed 001's per-column rule sets): a kind that can name
    one column, with that kind's parameters (checked when it is expanded into a full rule)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: PerColumnKind
    id: Identifier | None = Field(default=None, description="Default: <object>_<column>_<type>")
    severity: Severity = Severity.FAIL
    threshold: float = Field(default=0.0, ge=0.0, le=1.0)
    description: str | None = None


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

    Its kind's own options (`lakeguard.records.sources.kinds`) are written flat beside these fields;
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
    # the defaults a stored row's NULL also reads as are its row class's (`records/sources/rows.py`)
    fail_behavior: FailBehavior = Field(
        default=FailBehavior(SourceObjectRow.dq_fail_behavior),
        description="What a FAIL rule breach does: quarantine (the batch is blocked and kept "
        "in quarantine.<dataset>), drop (only the failing rows go to quarantine, the rest is "
        "promoted), abort (blocked, and the whole job stops)",
    )
    schema_profile: str = Field(
        default=SourceObjectRow.schema_compat_profile,
        description="How schema drift of this source is decided: strict, additive, permissive "
        "or a profile of schema_profiles",
    )
    max_malformed_ratio: float = Field(
        default=SourceObjectRow.max_malformed_ratio,
        ge=0.0,
        le=1.0,
        description="Share of unparseable rows tolerated",
    )
    relationship: str | None = None
    columns: list[ColumnSpec] = Field(min_length=1)

    def kind_defaults(self, kind: str) -> tuple[str, SourceLoad]:
        """(format, load type) with the defaults of a system of `kind` filled in."""
        found = SOURCE_KINDS.get(kind, SOURCE_KINDS[DEFAULT_KIND])
        return self.format or found.formats[0], self.load_type or found.default_load

    def written_kind_fields(self) -> dict[str, object]:
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


if TYPE_CHECKING:
    SourceObject = SourceObjectBase
else:  # the common fields and every kind's options (which apply: `kind_options`)
    SourceObject = create_model("SourceObject", __base__=SourceObjectBase, **KIND_FIELDS)
