"""What every definition row class is: a frozen row of a definition table, built from a
document (`rules/catalog/to_rows.py`) or read back from a stored row, its NULLs read as defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Self

from lakeguard.records.rows.schema import DefinitionTable, field_columns
from lakeguard.records.sameness import BOOKKEEPING
from lakeguard.words.hashing import fingerprint
from lakeguard.words.shapes import StoredRow


@dataclass(frozen=True, kw_only=True)
class DefinitionRow:
    """A row of a definition table.

    A field is what the row means: a column stored NULL reads as its field's default (the
    column's one default, which the document's model and every reader take from here). What
    the table holds is kept apart (`as_row`): a row read and written back, compared or hashed
    says NULL where the table says NULL, as a direct SQL edit or a column added later left it.
    """

    TABLE: ClassVar[DefinitionTable]
    if TYPE_CHECKING:  # the stamps every class declares, each where its table has them
        tenant_id: str | None
        definition_hash: str | None
        active: bool
        created_at: datetime | None
        updated_at: datetime | None
    # the defaulted columns stored NULL (set by `from_row` only; not a field, not compared)
    _stored_null: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        """A stored row (as `MetadataStore.rows` reads it) as this class: NULL in a
        defaulted column is its default; a column the row lacks is as if NULL."""
        values: dict[str, Any] = {}
        nulls = []
        for column in field_columns(cls):
            value = row.get(column.name)
            if value is None and column.defaulted:
                nulls.append(column.name)  # the field's own default stands
                continue
            values[column.name] = list(value) if isinstance(value, list | tuple) else value
        made = cls(**values)
        if nulls:
            object.__setattr__(made, "_stored_null", frozenset(nulls))
        return made

    def as_row(self) -> StoredRow:
        """The row as the table holds it (or will): values by column name, NULL where it was
        read NULL; a stamp not yet given is left out for the store to give."""
        out: StoredRow = {}
        for column in field_columns(type(self)):
            value = None if column.name in self._stored_null else getattr(self, column.name)
            if value is None and column.stamped:
                continue
            out[column.name] = list(value) if isinstance(value, list) else value
        return out

    def said(self) -> StoredRow:
        """What the row says, its bookkeeping aside (what `definition_hash` fingerprints)."""
        return {k: v for k, v in self.as_row().items() if k not in BOOKKEEPING}

    def hashed(self) -> Self:
        """The row with its `definition_hash`: the fingerprint of what it says."""
        return self.replaced(definition_hash=fingerprint(self.said()))

    def replaced(self, **changes: Any) -> Self:
        """`dataclasses.replace`, keeping the NULLs it was read with in the other columns."""
        made = replace(self, **changes)
        kept = self._stored_null - set(changes)
        if kept:
            object.__setattr__(made, "_stored_null", kept)
        return made

    def key(self) -> tuple[Any, ...]:
        """The row's upsert identity, its tenant aside."""
        return tuple(getattr(self, k) for k in self.TABLE.keys if k != "tenant_id")

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        """The table's column names, in order."""
        return tuple(f.name for f in fields(cls))
