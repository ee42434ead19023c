"""File sources (csv, json, parquet): read with the approved schema, keep malformed rows visible.

Rows that do not parse are not dropped silently: the reader keeps them in a `_corrupt_record`
column so the gate can count them against the source's malformed-row budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeguard.errors import SourceError, first_line
from lakeguard.hashing import digest
from lakeguard.store.ddl import quote
from lakeguard.store.records import SourceColumnDef, SourceObjectDef, SourceSystemDef

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

CORRUPT_COLUMN = "_corrupt_record"


@dataclass(frozen=True)
class SourceBatch:
    frame: DataFrame
    files: list[str]
    fingerprint: str
    has_corrupt_column: bool


def source_path(system: SourceSystemDef, obj: SourceObjectDef) -> str:
    root = system.options.get("root")
    if root is None:
        return obj.locator
    return f"{root.rstrip('/')}/{obj.locator.lstrip('/')}"


def declared_schema_ddl(columns: tuple[SourceColumnDef, ...], with_corrupt: bool) -> str:
    ordered = sorted(columns, key=lambda c: c.ordinal)
    parts = [f"{quote(c.column_name)} {c.data_type.upper()}" for c in ordered]
    if with_corrupt:
        parts.append(f"{quote(CORRUPT_COLUMN)} STRING")
    return ", ".join(parts)


def read_files(spark: SparkSession, system: SourceSystemDef, obj: SourceObjectDef) -> SourceBatch:
    """Read a file source object with its approved schema; SourceError if nothing is there."""
    if not system.enabled:
        raise SourceError(
            f"source system {system.source_system_id} is disabled",
            where=f"source_systems[{system.source_system_id}]",
            fix="enable the system in its metadata before running",
        )
    fmt = obj.format
    path = source_path(system, obj)
    text_format = fmt in ("csv", "json")
    reader = spark.read.format(fmt).options(**obj.read_options)
    if text_format:
        reader = reader.option("mode", "PERMISSIVE").option(
            "columnNameOfCorruptRecord", CORRUPT_COLUMN
        )
    reader = reader.schema(declared_schema_ddl(obj.columns, with_corrupt=text_format))
    where = f"source_objects[{obj.source_object_id}]"
    try:
        frame = reader.load(path)
        files = sorted(frame.inputFiles())
    except Exception as exc:
        message = first_line(exc)
        if "PATH_NOT_FOUND" in message or "does not exist" in message:
            raise SourceError(
                f"no files at {path}",
                where=where,
                fix="check the system root and the locator, or wait for the delivery",
            ) from exc
        raise SourceError(
            f"cannot read {path}: {message}",
            where=where,
            fix="check the files and the read options",
        ) from exc
    if not files:
        raise SourceError(
            f"no files match {path}",
            where=where,
            fix="check the system root and the locator, or wait for the delivery",
        )
    return SourceBatch(frame, files, digest("\n".join(files)), text_format)
