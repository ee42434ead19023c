"""The metadata-as-code document: pydantic models with `extra="forbid"` everywhere.

A document declares source systems, source objects (with their approved columns), datasets,
quality rules and jobs. Field names are the ones a data engineer writes in YAML; `apply.py`
maps them onto the control tables.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from lakeguard.vocabulary import Layer, LoadType, Severity

Identifier = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,62}$")]
ColumnName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]
SparkType = Annotated[
    str,
    Field(
        pattern=r"^(string|boolean|int|bigint|long|double|float|date|timestamp|decimal\(\d{1,2},\d{1,2}\))$"
    ),
]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceSystem(Strict):
    id: Identifier
    kind: Literal["file"] = "file"
    description: str | None = None
    enabled: bool = True
    options: dict[str, str] = Field(default_factory=dict)
    credential_ref: str | None = Field(
        default=None, description="Name of an environment variable holding the credential"
    )


class ColumnSpec(Strict):
    name: ColumnName
    type: SparkType = "string"
    nullable: bool = True
    description: str | None = None
    pii: bool = False


class SourceObject(Strict):
    id: Identifier
    system: Identifier
    locator: str = Field(min_length=1, description="Path or glob, relative to the system's root")
    format: Literal["csv", "json", "parquet"] = "csv"
    options: dict[str, str] = Field(default_factory=dict)
    dataset: Identifier
    load_type: LoadType = LoadType.APPEND
    fail_behavior: Literal["quarantine"] = Field(
        default="quarantine",
        description="A blocked batch is kept in quarantine.<dataset> with its run id",
    )
    schema_profile: str = "additive"
    max_malformed_ratio: float = Field(
        default=0.0, ge=0.0, le=1.0, description="Share of unparseable rows tolerated"
    )
    relationship: str | None = None
    columns: list[ColumnSpec] = Field(min_length=1)

    @field_validator("columns")
    @classmethod
    def _unique_columns(cls, cols: list[ColumnSpec]) -> list[ColumnSpec]:
        seen: set[str] = set()
        for col in cols:
            if col.name.lower() in seen:
                raise ValueError(f"column {col.name!r} is declared twice")
            seen.add(col.name.lower())
        return cols


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
    load_type: LoadType | None = None
    filter: str | None = Field(default=None, description="SQL predicate rows must meet to enter")
    columns: dict[ColumnName, str] | None = Field(
        default=None, description="Output column -> SQL expression over the input"
    )
    profile: bool = True

    @property
    def table_name(self) -> str:
        return self.table or f"{self.layer.value}.{self.id}"

    @property
    def effective_load_type(self) -> LoadType:
        if self.load_type:
            return self.load_type
        return LoadType.MERGE if self.business_keys else LoadType.APPEND


class _RuleBase(Strict):
    id: Identifier
    dataset: Identifier
    severity: Severity = Severity.FAIL
    threshold: float = Field(
        default=0.0, ge=0.0, le=1.0, description="Share of failing rows tolerated before breach"
    )
    description: str | None = None


class NotNullRule(_RuleBase):
    type: Literal["NOT_NULL"]
    columns: list[ColumnName] = Field(min_length=1)


class RangeRule(_RuleBase):
    type: Literal["RANGE"]
    column: ColumnName
    min: float | None = None
    max: float | None = None

    @field_validator("max")
    @classmethod
    def _bounds(cls, value: float | None, info: Any) -> float | None:
        low = info.data.get("min")
        if value is None and low is None:
            raise ValueError("a RANGE rule needs min, max or both")
        if value is not None and low is not None and low > value:
            raise ValueError(f"min {low} is greater than max {value}")
        return value


class UniqueRule(_RuleBase):
    type: Literal["UNIQUE"]
    columns: list[ColumnName] = Field(min_length=1)


class RegexRule(_RuleBase):
    type: Literal["REGEX"]
    column: ColumnName
    pattern: str = Field(min_length=1)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        import re

        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from exc
        return value


class AllowedValuesRule(_RuleBase):
    type: Literal["ALLOWED_VALUES"]
    column: ColumnName
    values: list[str | int | float | bool] = Field(min_length=1)


class ExpressionRule(_RuleBase):
    type: Literal["EXPRESSION"]
    expression: str = Field(min_length=1, description="SQL predicate every row must satisfy")


Rule = Annotated[
    NotNullRule | RangeRule | UniqueRule | RegexRule | AllowedValuesRule | ExpressionRule,
    Field(discriminator="type"),
]


class Task(Strict):
    id: Identifier
    dataset: Identifier
    depends_on: list[Identifier] = Field(default_factory=list)


class Job(Strict):
    id: Identifier
    description: str | None = None
    owner: str | None = None
    schedule: str | None = None
    enabled: bool = True
    max_retries: int = Field(default=0, ge=0, le=10)
    retry_delay_seconds: int = Field(default=30, ge=0)
    parameters: dict[str, str] = Field(default_factory=dict)
    tasks: list[Task] = Field(min_length=1)


class MetadataDocument(Strict):
    """One YAML document of metadata."""

    version: Literal[1] = 1
    source_systems: list[SourceSystem] = Field(default_factory=list)
    source_objects: list[SourceObject] = Field(default_factory=list)
    datasets: list[Dataset] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)
    jobs: list[Job] = Field(default_factory=list)
