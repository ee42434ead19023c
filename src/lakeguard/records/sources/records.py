"""Records of the source definitions: source systems, their objects (with their kind's
typed options) and the objects' declared columns."""

from __future__ import annotations

from dataclasses import dataclass, field

from lakeguard.records.rows.parsing import json_or, parsed_options
from lakeguard.records.sources.kinds import DEFAULT_KIND, SOURCE_KINDS, ObjectOptions, SystemOptions
from lakeguard.records.sources.kinds.base import NoObjectOptions
from lakeguard.records.sources.rows import SourceColumnRow, SourceObjectRow, SourceSystemRow
from lakeguard.words.vocabulary import FailBehavior, SourceKindName, SourceLoad, vocab


@dataclass(frozen=True, kw_only=True, slots=True)
class SourceSystemDef:
    source_system_id: str
    kind: SourceKindName
    options: SystemOptions  # the kind's typed model (lakeguard.records.sources.kinds)
    enabled: bool = True
    credential_ref: str | None = None

    @classmethod
    def from_row(cls, row: SourceSystemRow) -> SourceSystemDef:
        where = f"source_systems[{row.source_system_id}]"
        kind = vocab(SourceKindName, row.kind or DEFAULT_KIND, f"{where}.kind")
        return cls(
            source_system_id=row.source_system_id,
            kind=kind,
            enabled=row.enabled,
            options=parsed_options(
                lambda: SOURCE_KINDS[kind].system(json_or(row.connection_options, {})),
                f"{where}.connection_options",
            ),
            credential_ref=row.credential_ref,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class SourceColumnDef:
    source_object_id: str
    column_name: str
    data_type: str
    nullable: bool
    ordinal: int
    is_pii: bool = False

    @classmethod
    def from_row(cls, row: SourceColumnRow) -> SourceColumnDef:
        return cls(
            source_object_id=row.source_object_id,
            column_name=row.column_name,
            data_type=row.data_type,
            nullable=row.nullable,
            ordinal=row.ordinal,
            is_pii=row.is_pii,
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
        row: SourceObjectRow,
        columns: tuple[SourceColumnDef, ...] = (),
        kind: SourceKindName = SourceKindName.FILE,
    ) -> SourceObjectDef:
        """The stored row, its `ingest_options` read as the options of its system's `kind`."""
        where = f"source_objects[{row.source_object_id}]"
        ingest = json_or(row.ingest_options, {})
        return cls(
            source_object_id=row.source_object_id,
            source_system_id=row.source_system_id,
            locator=row.locator,
            format=row.format,
            dataset_id=row.dataset_id,
            read_options={str(k): str(v) for k, v in json_or(row.read_options, {}).items()},
            load_type=vocab(SourceLoad, row.load_type or "append", f"{where}.load_type"),
            watermark_column=row.watermark_column,
            max_malformed_ratio=row.max_malformed_ratio,
            schema_profile=row.schema_compat_profile,
            fail_behavior=vocab(FailBehavior, row.dq_fail_behavior, f"{where}.fail_behavior"),
            lookback=ingest.get("lookback"),
            options=parsed_options(
                lambda: SOURCE_KINDS[kind].object(ingest), f"{where}.ingest_options"
            ),
            columns=tuple(sorted(columns, key=lambda c: c.ordinal)),
        )
