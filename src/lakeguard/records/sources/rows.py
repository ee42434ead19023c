"""The rows of where data comes from: source systems, their objects and their columns."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.rows.schema import STAMPED, Comment, DefinitionTable, Int32


@dataclass(frozen=True, kw_only=True)
class SourceSystemRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="source_systems",
        comment=(
            "Upstream systems that data is ingested from (seed 001; seed 000 MD_SRC_CTRL + "
            "MD_SRC_DET)."
        ),
        keys=("tenant_id", "source_system_id"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    source_system_id: Annotated[str, Comment("Stable identifier of the system")]
    name: str | None = None
    kind: Annotated[str, Comment("file, jdbc, delta, ...")]
    description: str | None = None
    enabled: bool
    connection_options: Annotated[
        str | None, Comment("JSON object of non-secret connection options")
    ] = None
    credential_ref: Annotated[
        str | None, Comment("Name of an env var or secret holding the credential, never the secret")
    ] = None
    definition_hash: Annotated[
        str | None, Comment("Fingerprint of the declared definition (change detection)")
    ] = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None


@dataclass(frozen=True, kw_only=True)
class SourceObjectRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="source_objects",
        comment="Per table/file ingestion configuration (seed 001; seed 000 MD_SRC_TGT_CTRL).",
        keys=("tenant_id", "source_object_id"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    source_object_id: str
    source_system_id: str
    locator: Annotated[str, Comment("Path, glob or table name inside the source system")]
    format: Annotated[str, Comment("csv, json, parquet, delta, jdbc")]
    read_options: Annotated[str | None, Comment("JSON object of reader options")] = None
    dataset_id: Annotated[str, Comment("The dataset this object lands in")]
    load_type: Annotated[
        str,
        Comment(
            "How the source is read: append (new files), full (a snapshot), incremental (above a "
            "watermark or source version)"
        ),
    ]
    watermark_column: str | None = None
    business_keys: list[str] = field(default_factory=list)
    hash_strategy: str | None = None
    schema_compat_profile: str = "additive"
    dq_fail_behavior: Annotated[
        str, Comment("quarantine | drop | abort: what a breached FAIL rule does")
    ] = "quarantine"
    max_malformed_ratio: Annotated[
        float, Comment("Share of unparseable rows tolerated before the batch is blocked")
    ] = 0.0
    relationship: Annotated[
        str | None,
        Comment("Human description of the flow, e.g. 'OpenCellID raw feed lands in Raw Zone'"),
    ] = None
    ingest_options: Annotated[
        str | None,
        Comment(
            "JSON object: how new input is found (changed files, archive, content hash, lookback,"
            " JDBC partitioning, change data feed)"
        ),
    ] = None
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None


@dataclass(frozen=True, kw_only=True)
class SourceColumnRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="source_object_columns",
        comment="Approved schema and column-level DQ configuration per source object (seed 001).",
        keys=("tenant_id", "source_object_id", "column_name"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    source_object_id: str
    column_name: str
    data_type: Annotated[str, Comment("Spark SQL type name")]
    nullable: bool
    ordinal: Int32
    dq_rule_set: Annotated[str | None, Comment("JSON array of the column's rule ids")] = None
    dq_severity: str | None = None
    is_pii: bool = False
    pii_tags: list[str] = field(default_factory=list)
    description: str | None = None
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None
