"""Plain-data checks and normalisation of rows before they are written to a metadata table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any, cast

from lakeguard.records.table_defs import TableDef
from lakeguard.words.errors import MetadataStoreError

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "int": (int,),
    "long": (int,),
    "double": (float, int),
    "date": (date,),
    "timestamp": (datetime,),
    "array<string>": (list, tuple),
}


def normalize_rows(table: TableDef, rows: Iterable[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """Validate rows against the definition and order their values like its writable columns.

    Unknown keys, missing required values and wrongly typed values are refused with the row
    index and column named, so a bug in a writer never lands half a row in the store.
    """
    cols = table.writable_columns
    names = {c.name for c in cols}
    out: list[tuple[Any, ...]] = []
    for index, row in enumerate(rows):
        unknown = set(row) - names
        if unknown:
            raise MetadataStoreError(
                f"row {index} for {table.name} has unknown columns {sorted(unknown)}",
                where=f"metadata table {table.name}",
                fix="write only the columns of the table definition",
            )
        values: list[Any] = []
        for col in cols:
            value: Any = row.get(col.name)
            if value is None:
                if not col.nullable:
                    raise MetadataStoreError(
                        f"row {index} for {table.name} misses required column {col.name!r}",
                        where=f"metadata table {table.name}",
                        fix=f"provide a value for {col.name}",
                    )
            else:
                allowed = _PY_TYPES[col.type]
                bad_bool = isinstance(value, bool) and col.type in ("int", "long", "double")
                if not isinstance(value, allowed) or bad_bool:
                    raise MetadataStoreError(
                        f"row {index} for {table.name}: {col.name} must be {col.type}, "
                        f"got {type(value).__name__}",
                        where=f"metadata table {table.name}",
                    )
                if col.type == "string":
                    value = str(value)  # a StrEnum member is stored as its plain text
                elif col.type == "array<string>":
                    value = [str(v) for v in cast("list[Any]", value)]
                elif col.type == "double":
                    value = float(cast("float", value))
            values.append(value)
        out.append(tuple(values))
    return out
