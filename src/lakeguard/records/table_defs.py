"""Declarative definitions of the metadata tables (pure: no Spark).

Every table is declared by its row class, read by `rows/schema.py`, and listed here once: a
definition table in `DEFINITION_ROW_TYPES` (and, if a document makes it, in `DefinitionSet`),
a runtime table in `RUNTIME_ROW_TYPES`. The row classes sit with their concept (`runs/`,
`decisions/`, `checks/`, `definitions/`, `sources/`, `alerts/`, `upkeep.py`). Both kinds
become the same validated `TableDef`, which `lakeguard.store.arrow` turns into Delta and Arrow
schemas.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cache
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lakeguard.records.alerts.event_rows import DeliveryRow, IncidentEventRow
from lakeguard.records.checks.result_rows import (
    DqResultRow,
    ProfileRow,
    RuleResultRow,
    SchemaChangeRow,
    SchemaSnapshotRow,
    TrustScoreRow,
)
from lakeguard.records.decisions.rows import DataVersionRow, DecisionRow
from lakeguard.records.definitions.keys import ApiKeyRow
from lakeguard.records.definitions.sets import DOCUMENT_TABLES
from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.rows.runtime import RuntimeRow
from lakeguard.records.rows.schema import definition_document, source_file, table_document
from lakeguard.records.runs.coordination import LeaseEventRow, RunRequestRow
from lakeguard.records.runs.rows import PipelineRunRow, RunEventRow, RunHistoryRow, StepLogRow
from lakeguard.records.sources.progress_rows import RejectedFileRow, SourceProgressRow
from lakeguard.records.upkeep import MetadataSyncRow, StoreMigrationRow
from lakeguard.words.errors import MetadataStoreError

# every definition table: a document's tables, then the API keys (a new one is added here)
DEFINITION_ROW_TYPES: tuple[type[DefinitionRow], ...] = (*DOCUMENT_TABLES.values(), ApiKeyRow)

# every runtime table (a new one is added here)
RUNTIME_ROW_TYPES: tuple[type[RuntimeRow], ...] = (
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
    RejectedFileRow,
    TrustScoreRow,
    DataVersionRow,
    DecisionRow,
    LeaseEventRow,
    IncidentEventRow,
    DeliveryRow,
)


class TableKind(StrEnum):
    DEFINITION = "definition"
    APPEND_ONLY = "append_only"


ColumnType = Literal[
    "string", "boolean", "int", "long", "double", "date", "timestamp", "array<string>"
]
COLUMN_TYPES: tuple[str, ...] = get_args(ColumnType)


class ColumnDef(BaseModel):
    """One column of a metadata table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    type: ColumnType
    nullable: bool = True
    comment: str | None = None
    generated: str | None = None


class TableDef(BaseModel):
    """A metadata table: its columns, layout and whether its rows may ever change."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: TableKind
    comment: str
    columns: tuple[ColumnDef, ...]
    keys: tuple[str, ...] = ()
    partitioned_by: tuple[str, ...] = ()
    cluster_by: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> TableDef:
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate column names in {self.name}")
        for group in ("keys", "partitioned_by", "cluster_by"):
            for col in getattr(self, group):
                if col not in names:
                    raise ValueError(f"{group} names unknown column {col!r}")
        if self.kind is TableKind.DEFINITION:
            if not self.keys:
                raise ValueError("a definition table needs keys (the upsert identity)")
            for required in ("active", "created_at", "updated_at"):
                if required not in names:
                    raise ValueError(f"a definition table needs column {required!r}")
        if self.kind is TableKind.APPEND_ONLY and self.keys:
            raise ValueError("an append-only table has no upsert keys")
        return self

    @property
    def append_only(self) -> bool:
        return self.kind is TableKind.APPEND_ONLY

    @property
    def writable_columns(self) -> list[ColumnDef]:
        """Columns a writer provides (generated columns are computed by Delta)."""
        return [c for c in self.columns if c.generated is None]

    def column(self, name: str) -> ColumnDef:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


@cache
def load_table_defs() -> dict[str, TableDef]:
    """All metadata tables, by name: the definition row classes', then the runtime ones'."""
    declared = [
        *((t, definition_document(t)) for t in DEFINITION_ROW_TYPES),
        *((t, table_document(t)) for t in RUNTIME_ROW_TYPES),
    ]
    defs: dict[str, TableDef] = {}
    for row_type, document in declared:
        where = f"{source_file(row_type)}: {row_type.__name__}"
        table = _valid(document, where)
        if table.name in defs:
            raise MetadataStoreError(
                f"table {table.name} is declared twice", where=where, fix="keep one declaration"
            )
        defs[table.name] = table
    return dict(sorted(defs.items()))


def _valid(document: object, where: str) -> TableDef:
    try:
        return TableDef.model_validate(document)
    except Exception as exc:  # a broken shipped declaration is a packaging bug; say which one
        raise MetadataStoreError(
            f"invalid table definition {where}: {exc}",
            where=where,
            fix="correct the shipped declaration",
        ) from exc


def table_def(name: str) -> TableDef:
    """The definition of one metadata table, or a clear error."""
    defs = load_table_defs()
    if name not in defs:
        raise MetadataStoreError(
            f"unknown metadata table {name!r}",
            fix=f"use one of: {', '.join(sorted(defs))}",
        )
    return defs[name]
