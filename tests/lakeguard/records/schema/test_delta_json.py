"""A Delta schema that arrives as plain JSON is checked where it arrives (no Spark)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from lakeguard.records.schema.delta_json import parse_schema
from lakeguard.records.schema.fingerprint import from_fields

NESTED = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": False, "metadata": {}},
        {
            "name": "tags",
            "type": {"type": "array", "elementType": "string", "containsNull": True},
            "nullable": True,
            "metadata": {"comment": "free text"},
        },
    ],
}


def test_a_schema_with_nested_types_reads_back_as_it_was_written() -> None:
    schema = parse_schema(NESTED)
    assert schema == NESTED
    assert [(c.name, c.type, c.nullable) for c in from_fields(schema["fields"])] == [
        ("id", "bigint", False),
        ("tags", "array<string>", True),
    ]


@pytest.mark.parametrize(
    "broken",
    [
        {"type": "struct"},  # no fields
        {"type": "struct", "fields": [{"name": "id", "nullable": True}]},  # a field with no type
        {"type": "struct", "fields": [{"name": 3, "type": "long", "nullable": True}]},
    ],
)
def test_what_is_not_a_schema_is_refused(broken: object) -> None:
    with pytest.raises(ValidationError):
        parse_schema(broken)
