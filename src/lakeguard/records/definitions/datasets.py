"""The rows of what datasets exist and where they land: the registry and the targets."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.rows.schema import STAMPED, Comment, DefinitionTable


@dataclass(frozen=True, kw_only=True)
class DatasetRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="dataset_registry",
        comment=(
            "What datasets exist. If a dataset is not registered, it does not exist (seed 002; "
            "seed 000 MD_DATASETS)."
        ),
        keys=("tenant_id", "dataset_id"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    dataset_id: Annotated[str, Comment("Immutable unique identifier")]
    dataset_name: str
    domain: str | None = None
    layer: Annotated[str, Comment("bronze / silver / gold")]
    owner: str | None = None
    description: str | None = None
    table_name: Annotated[str, Comment("Qualified table name, e.g. silver.cell_towers")]
    target_id: str | None = None
    parents: Annotated[list[str], Comment("Upstream dataset ids")] = field(default_factory=list)
    business_keys: list[str] = field(default_factory=list)
    sequence_by: Annotated[
        str | None, Comment("Column ordering duplicates of one key; the latest wins")
    ] = None
    load_type: Annotated[str | None, Comment("append, merge, full")] = None
    transform: Annotated[
        str | None, Comment("Optional SQL select expression list applied to the input")
    ] = None
    lifecycle_status: str | None = None
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None
    tags: Annotated[
        list[str] | None, Comment("Free words notification routes select datasets by")
    ] = None


@dataclass(frozen=True, kw_only=True)
class TargetRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="targets",
        comment="Storage zones that datasets land in (seed 000 MD_TGT_CTRL + MD_TGT_DET).",
        keys=("tenant_id", "target_id"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    target_id: str
    layer: str
    location: Annotated[
        str | None, Comment("Root location; default <LAKETX_HOME>/warehouse/<layer>")
    ] = None
    format: str
    partitioning: list[str] = field(default_factory=list)
    clustering: list[str] = field(default_factory=list)
    table_properties: Annotated[str | None, Comment("JSON object of Delta table properties")] = None
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None
