"""A metadata table read off its row class, the table's one declaration (pure).

Each field of a row class (over `runtime.py` or `definition.py`) is a column of its table, in field
order. The field's type says the column's type: `str` or a vocabulary (a `StrEnum`) a string, `int`
a long (`Int32` an int), `float` a double, `bool` a boolean, `datetime` a timestamp, `date` a date,
`list[str]` an array<string>; `X | None` makes it nullable, any other field is NOT NULL; and a
`Comment` in its `Annotated` type is the column's comment. What no field can say is the class's
`TABLE`, a `RuntimeTable`: the table's name and comment, its date column (a generated column, the
last one: the UTC date of one of its timestamps; no longer a partition) and the columns `optimize`
Z-orders by.

A definition row class (over `definition.py`) says one thing more: a field with a default (and a
type without None) is a nullable column whose NULL reads as that default, the one default of
that column (a direct SQL edit may write NULL to it); a `Stamped` field is NOT NULL although a
row not yet written has no value in it (the store stamps it: tenant, `active`, times). Its
`TABLE` is a `DefinitionTable`: name, comment and the upsert keys. `table_defs.py` validates
what this module derives into the same `TableDef` for both kinds of table.
"""

from __future__ import annotations

import types
from dataclasses import MISSING, dataclass, fields, is_dataclass, replace
from datetime import date, datetime
from enum import StrEnum
from functools import cache
from typing import (
    Annotated,
    Any,
    NotRequired,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from lakeguard.words.errors import MetadataStoreError


@dataclass(frozen=True)
class Comment:
    """A column's comment, in its field's type: `run_id: Annotated[str, Comment("...")]`."""

    text: str


@dataclass(frozen=True)
class DeltaType:
    """A column's type where its field's Python type alone would say another."""

    name: str


@dataclass(frozen=True)
class Stamped:
    """A definition column the store writes on upsert (tenant, `active`, created and updated
    times): NOT NULL in the table, unset in a row a document makes."""


STAMPED = Stamped()

Int32 = Annotated[int, DeltaType("int")]  # an `int` field stored as a 32-bit `int`, not `long`

_TYPES: dict[Any, str] = {
    str: "string",
    int: "long",
    float: "double",
    bool: "boolean",
    datetime: "timestamp",
    date: "date",
}


@dataclass(frozen=True, kw_only=True)
class RuntimeTable:
    """What a runtime table is besides its columns (a row class's `TABLE`)."""

    name: str
    comment: str
    day: str  # the generated date column: CAST(`date_of` AS DATE) (no longer a partition)
    date_of: str  # a timestamp field of the row
    cluster_by: tuple[str, ...]  # what `optimize` Z-orders by


@dataclass(frozen=True, kw_only=True)
class DefinitionTable:
    """What a definition table is besides its columns (a definition row class's `TABLE`)."""

    name: str
    comment: str
    keys: tuple[str, ...]  # the upsert identity, `tenant_id` first


@dataclass(frozen=True)
class FieldColumn:
    """One field of a row class, as its column."""

    name: str
    column_type: str  # a definition type (`definitions.ColumnType`)
    nullable: bool  # its type admits None
    comment: str | None = None
    vocabulary: type[StrEnum] | None = None  # what a stored word is read back as
    defaulted: bool = False  # it has a default value that is not None
    stamped: bool = False  # written by the store (`Stamped`)

    @property
    def definition_nullable(self) -> bool:
        """Nullable in a definition table: None is its value, or NULL reads as its default."""
        return (self.nullable or self.defaulted) and not self.stamped


def field_columns(row_type: type) -> tuple[FieldColumn, ...]:
    """The columns of a row class's fields, in field order."""
    return _field_columns(row_type)


@cache  # read once per class: `from_row` asks for every row it reads
def _field_columns(row_type: type) -> tuple[FieldColumn, ...]:
    if not is_dataclass(row_type):
        raise _refused(row_type, row_type.__name__, "is not a dataclass")
    hints = get_type_hints(row_type, include_extras=True)
    found = []
    for f in fields(row_type):
        column = _column(row_type, f.name, hints[f.name])
        default = f.default if f.default is not MISSING else None
        defaulted = default is not None or f.default_factory is not MISSING
        found.append(replace(column, defaulted=defaulted))
    return tuple(found)


class ColumnDocument(TypedDict):
    """A column as a table definition file declares it (`table_defs.ColumnDef`)."""

    name: str
    type: str
    nullable: bool
    comment: NotRequired[str | None]
    generated: NotRequired[str]


class TableDocument(TypedDict):
    """A table as a table definition file declares it (`table_defs.TableDef` checks it)."""

    name: str
    kind: str
    comment: str
    columns: list[ColumnDocument]
    keys: NotRequired[list[str]]
    partitioned_by: NotRequired[list[str]]
    cluster_by: NotRequired[list[str]]


def table_document(row_type: type) -> TableDocument:
    """The table of a row class, in the shape of a table definition file (a plain mapping:
    `TableDef.model_validate` takes it, and checks it, as it takes a file's)."""
    table: RuntimeTable = row_type.TABLE  # type: ignore[attr-defined]
    columns: list[ColumnDocument] = [
        {"name": c.name, "type": c.column_type, "nullable": c.nullable, "comment": c.comment}
        for c in field_columns(row_type)
    ]
    stamp = next((c for c in columns if c["name"] == table.date_of), None)
    if stamp is None or stamp["type"] != "timestamp" or stamp["nullable"]:
        raise _refused(
            row_type, f"{row_type.__name__}.TABLE", "date_of names no NOT NULL datetime field"
        )
    columns.append(
        {
            "name": table.day,
            "type": "date",
            "nullable": False,
            "generated": f"CAST({table.date_of} AS DATE)",
        }
    )
    return {
        "name": table.name,
        "kind": "append_only",
        "comment": table.comment,
        "partitioned_by": [],  # one file per day of history made every read grow: m0003
        "cluster_by": list(table.cluster_by),
        "columns": columns,
    }


def definition_document(row_type: type) -> TableDocument:
    """The table of a definition row class, in the shape of a table definition file."""
    table: DefinitionTable = row_type.TABLE  # type: ignore[attr-defined]
    columns: list[ColumnDocument] = [
        {
            "name": c.name,
            "type": c.column_type,
            "nullable": c.definition_nullable,
            "comment": c.comment,
        }
        for c in field_columns(row_type)
    ]
    return {
        "name": table.name,
        "kind": "definition",
        "comment": table.comment,
        "keys": list(table.keys),
        "columns": columns,
    }


def _column(row_type: type, name: str, hint: Any) -> FieldColumn:
    extras: list[Any] = []
    hint = _unwrap(hint, extras)
    nullable = get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint)
    if nullable:
        rest = [a for a in get_args(hint) if a is not type(None)]
        if len(rest) != 1:
            raise _refused(
                row_type, f"{row_type.__name__}.{name}", f"has more than one type: {hint}"
            )
        hint = _unwrap(rest[0], extras)
    comment = next((e.text for e in extras if isinstance(e, Comment)), None)
    declared = next((e.name for e in extras if isinstance(e, DeltaType)), None)
    vocabulary = hint if isinstance(hint, type) and issubclass(hint, StrEnum) else None
    if vocabulary is not None:
        found = "string"
    elif get_origin(hint) is list and get_args(hint) == (str,):
        found = "array<string>"
    else:
        found = _TYPES.get(hint, "")
    if not found:
        raise _refused(row_type, f"{row_type.__name__}.{name}", f"has a type no column has: {hint}")
    stamped = any(isinstance(e, Stamped) for e in extras)
    return FieldColumn(name, declared or found, nullable, comment, vocabulary, stamped=stamped)


def _unwrap(hint: Any, extras: list[Any]) -> Any:
    """The type inside `Annotated[...]`, its annotations added to `extras`."""
    if get_origin(hint) is Annotated:
        inner, *more = get_args(hint)
        extras.extend(more)
        return inner
    return hint


def source_file(row_type: type) -> str:
    """Where a row class is declared, as a path under src/ (what an error points at)."""
    return row_type.__module__.replace(".", "/") + ".py"


def _refused(row_type: type, where: str, what: str) -> MetadataStoreError:
    return MetadataStoreError(
        f"row class {where} {what}",
        where=f"{source_file(row_type)}: {where}",
        fix="declare each column as a field of a type in lakeguard/records/rows/schema.py's table",
    )
