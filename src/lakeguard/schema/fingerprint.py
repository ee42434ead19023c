"""Schema capture and fingerprint (pure: a schema is a list of plain column descriptions)."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from lakeguard.store.rows import to_json

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


def schema_json(columns: list[SchemaColumn]) -> str:
    return to_json([asdict(c) for c in columns])


def schema_hash(columns: list[SchemaColumn]) -> str:
    """Fingerprint of names and types, case-insensitive, order-sensitive.

    Nullability is left out: Spark reports most read columns as nullable whatever the data,
    so including it would make the same data look like drift.
    """
    canonical = [(c.name.lower(), c.type.lower()) for c in columns]
    return hashlib.sha256(to_json(canonical).encode()).hexdigest()[:32]
