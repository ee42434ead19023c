"""What every runtime row class is: a frozen row of an append-only table, written as it
is and read back from a stored row (its vocabulary words checked)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Self

from lakeguard.records.rows.schema import RuntimeTable, field_columns
from lakeguard.words.shapes import StoredRow
from lakeguard.words.vocabulary import vocab


def new_id() -> str:
    """A fresh random row id."""
    return uuid.uuid4().hex


@dataclass(frozen=True, kw_only=True)
class RuntimeRow:
    """A row of an append-only runtime table."""

    TABLE: ClassVar[RuntimeTable]

    def as_row(self) -> StoredRow:
        """The row as delta-rs takes it (`arrow.to_arrow`): values by column name."""
        return asdict(self)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        """A stored row (every column, as `MetadataStore.rows` reads it) as this class; a word
        outside its vocabulary is a ValidationError naming the table and column."""
        values = {}
        for column in field_columns(cls):
            value = row.get(column.name)
            if column.vocabulary is not None and value is not None:
                value = vocab(column.vocabulary, value, f"{cls.TABLE.name}.{column.name}")
            values[column.name] = value
        return cls(**values)
