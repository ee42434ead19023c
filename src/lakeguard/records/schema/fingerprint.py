"""Schema capture and fingerprint (pure: a schema is a list of plain column descriptions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from lakeguard.records.schema.delta_json import DeltaField
from lakeguard.words.hashing import fingerprint, to_json

if TYPE_CHECKING:
    from pyspark.sql.types import StructType


@dataclass(frozen=True)
class SchemaColumn:
    name: str
    type: str
    nullable: bool


def capture(schema: StructType) -> list[SchemaColumn]:
    """Plain description of a Spark schema, in column order."""
    return [SchemaColumn(f.name, f.dataType.simpleString(), f.nullable) for f in schema.fields]


# Delta's JSON type names that Spark's `simpleString` spells otherwise.
_SIMPLE = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}


def simple_type(delta_type: Any) -> str:
    """Spark's `simpleString` of a Delta schema JSON type (so both capture the same text)."""
    if isinstance(delta_type, str):
        return _SIMPLE.get(delta_type, delta_type)
    kind = delta_type.get("type")
    if kind == "array":
        return f"array<{simple_type(delta_type['elementType'])}>"
    if kind == "map":
        return f"map<{simple_type(delta_type['keyType'])},{simple_type(delta_type['valueType'])}>"
    if kind == "struct":
        inner = ",".join(f"{f['name']}:{simple_type(f['type'])}" for f in delta_type["fields"])
        return f"struct<{inner}>"
    return str(kind)


def from_fields(fields: Sequence[DeltaField]) -> list[SchemaColumn]:
    """Plain description of Delta/Spark schema JSON fields, in column order."""
    return [
        SchemaColumn(f["name"], simple_type(f["type"]), bool(f.get("nullable", True)))
        for f in fields
    ]


def as_table_holds(columns: list[SchemaColumn]) -> list[SchemaColumn]:
    """The columns as a dataset's Delta table holds them: every one nullable.

    The engine writes files that carry no NOT NULL of their own, so a table (and the schema
    recorded with each version) never promises non-null values; a query's inferred
    nullability (`count(*)` is never null, `sum()` may be) is a property of its plan.
    Values that must be present are a NOT_NULL rule.
    """
    return [c if c.nullable else SchemaColumn(c.name, c.type, True) for c in columns]


def schema_json(columns: list[SchemaColumn]) -> str:
    return to_json([asdict(c) for c in columns])


def schema_hash(columns: list[SchemaColumn]) -> str:
    """Fingerprint of names and types, case-insensitive, order-sensitive.

    Nullability is left out: Spark reports most read columns as nullable whatever the data,
    so including it would make the same data look like drift.
    """
    canonical = [(c.name.lower(), c.type.lower()) for c in columns]
    return fingerprint(canonical)
