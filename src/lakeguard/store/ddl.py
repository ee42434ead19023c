"""Pure helpers around metadata table schemas: registration DDL and the additive-evolution
plan (SQL quoting is `lakeguard.words.quoting`).

Nothing here touches Spark or delta-rs: it takes definitions and plain schema descriptions and
returns SQL text or a list of changes, so it is tested without a session.
"""

from __future__ import annotations

from dataclasses import dataclass

from lakeguard.records.table_defs import ColumnDef, TableDef
from lakeguard.store.arrow import delta_type, type_text
from lakeguard.words.errors import MetadataStoreError
from lakeguard.words.quoting import sql_string


def register_table_sql(qualified_name: str, location: str) -> str:
    """Register an existing Delta table by name; its schema comes from the Delta log."""
    return (
        f"CREATE TABLE IF NOT EXISTS {qualified_name} USING DELTA LOCATION {sql_string(location)}"
    )


@dataclass(frozen=True)
class ExistingColumn:
    """A column as a stored table has it; `type` is spelt like the definitions' Delta types."""

    name: str
    type: str
    nullable: bool


def definition_type(col: ColumnDef) -> str:
    return type_text(delta_type(col.type))


def plan_additive_evolution(table: TableDef, existing: list[ExistingColumn]) -> list[ColumnDef]:
    """Columns to add so that an existing table matches its definition.

    Only additive change is automatic; a removed, retyped or newly generated column needs a
    versioned migration, so it is refused here rather than applied destructively.
    """
    have = {c.name: c for c in existing}
    problems: list[str] = []
    for name, col in have.items():
        if name not in {c.name for c in table.columns}:
            problems.append(f"column {name!r} exists in the table but not in the definition")
            continue
        wanted = definition_type(table.column(name))
        if col.type != wanted:
            problems.append(
                f"column {name!r} is {col.type} in the table, {wanted} in the definition"
            )
    added = [c for c in table.columns if c.name not in have]
    for new in added:
        if new.generated:
            problems.append(f"generated column {new.name!r} cannot be added to an existing table")
        elif not new.nullable:
            problems.append(
                f"new column {new.name!r} must be nullable to be added to existing rows"
            )
    if problems:
        raise MetadataStoreError(
            f"table {table.name} needs a non-additive change: " + "; ".join(problems),
            where=f"metadata table {table.name}",
            fix="write a versioned migration; automatic evolution only adds nullable columns",
        )
    return added
