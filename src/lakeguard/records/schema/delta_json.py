"""A Delta table's schema as the Delta protocol (and Spark's `jsonValue`) writes it in JSON
(pure): what the engine reads from a table or a staged batch and commits back."""

from __future__ import annotations

from typing import NotRequired

from pydantic import JsonValue, TypeAdapter
from typing_extensions import TypedDict  # the one pydantic validates before Python 3.12


class DeltaField(TypedDict):
    """One column: its name, its type (a name such as "long", or a struct, array or map
    object), whether it may be null, and its metadata."""

    name: str
    type: JsonValue
    nullable: bool
    metadata: NotRequired[dict[str, JsonValue]]


class DeltaSchema(TypedDict):
    """A table's schema: a struct of fields."""

    type: str
    fields: list[DeltaField]


_SCHEMA: TypeAdapter[DeltaSchema] = TypeAdapter(DeltaSchema)


def parse_schema(value: object) -> DeltaSchema:
    """A schema that arrived as plain JSON (Spark's `jsonValue`, a Delta log), checked to be
    one (pydantic's ValidationError otherwise)."""
    return _SCHEMA.validate_python(value)
