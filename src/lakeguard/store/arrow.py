"""Table definitions and rows as Arrow and Delta schemas (pure: no Spark, no I/O).

The store writes rows as Arrow tables through delta-rs and reads them back as plain dicts.
Timestamps in metadata are naive UTC in Python and Delta `timestamp` (UTC instants) on disk.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from pydantic import JsonValue

from lakeguard.records.schema.delta_json import DeltaField, DeltaSchema
from lakeguard.records.table_defs import ColumnDef, TableDef
from lakeguard.store.rows import normalize_rows
from lakeguard.words.shapes import StoredRow

_ARROW: dict[str, pa.DataType] = {
    "string": pa.string(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "double": pa.float64(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "array<string>": pa.list_(pa.string()),
}

# Delta's (= Spark's JSON) spelling of each definition type.
_DELTA: dict[str, JsonValue] = {
    "string": "string",
    "boolean": "boolean",
    "int": "integer",
    "long": "long",
    "double": "double",
    "date": "date",
    "timestamp": "timestamp",
    "array<string>": {"type": "array", "elementType": "string", "containsNull": True},
}


def delta_type(type_name: str) -> JsonValue:
    return _DELTA[type_name]


def type_text(delta: Any) -> str:
    """A comparable one-line spelling of a Delta schema type (`array<string>`, `long`, ...)."""
    if isinstance(delta, str):
        return delta
    if isinstance(delta, dict) and delta.get("type") == "array":
        return f"array<{type_text(delta.get('elementType'))}>"
    return json.dumps(delta, sort_keys=True)


def delta_field(col: ColumnDef) -> DeltaField:
    metadata: dict[str, JsonValue] = {}
    if col.comment:
        metadata["comment"] = col.comment
    if col.generated:
        metadata["delta.generationExpression"] = col.generated
    return {
        "name": col.name,
        "type": delta_type(col.type),
        "nullable": col.nullable,
        "metadata": metadata,
    }


def delta_schema_json(table: TableDef) -> str:
    """The Delta schema string of a metadata table, generated columns included."""
    schema: DeltaSchema = {"type": "struct", "fields": [delta_field(c) for c in table.columns]}
    return json.dumps(schema)


def arrow_schema(table: TableDef) -> pa.Schema:
    """Arrow schema of the columns a writer provides (generated ones are computed on write)."""
    return pa.schema([pa.field(c.name, _ARROW[c.type], c.nullable) for c in table.writable_columns])


def to_arrow(table: TableDef, rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Validated rows as an Arrow table (refused with row and column named if malformed)."""
    values = normalize_rows(table, rows)
    schema = arrow_schema(table)
    columns = [list(col) for col in zip(*values, strict=True)] if values else []
    if not columns:
        return schema.empty_table()
    arrays = []
    for field, column in zip(schema, columns, strict=True):
        if pa.types.is_timestamp(field.type):
            column = [_as_utc(v) for v in column]
        arrays.append(pa.array(column, type=field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def whole_table(
    table: TableDef, data: pa.Table, generated: Mapping[str, Sequence[Any]]
) -> pa.Table:
    """`data` (a table's writable columns) with its generated columns' `generated` values,
    every field carrying its Delta metadata (comment, generation expression): the table's
    whole schema, for a commit that replaces the schema along with the rows."""
    fields, arrays = [], []
    for col in table.columns:
        metadata = {k: str(v) for k, v in delta_field(col)["metadata"].items()}
        field = pa.field(col.name, _ARROW[col.type], col.nullable, metadata=metadata or None)
        fields.append(field)
        if col.generated:
            arrays.append(pa.array(list(generated[col.name]), type=field.type))
        else:
            arrays.append(data.column(col.name).cast(field.type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _as_utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _naive(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


def to_rows(table: pa.Table) -> list[StoredRow]:
    """Arrow rows as dicts, timestamps as naive UTC like every timestamp in metadata."""
    stamps = [f.name for f in table.schema if pa.types.is_timestamp(f.type)]
    rows = table.to_pylist()
    if stamps:
        for row in rows:
            for name in stamps:
                row[name] = _naive(row[name])
    return rows
