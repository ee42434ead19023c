"""Pure translation of table definitions into Delta DDL, and the additive-evolution plan.

Nothing here touches Spark: it takes definitions and plain schema descriptions and returns SQL
text or a list of changes, so it is tested without a session.
"""

from __future__ import annotations

from dataclasses import dataclass

from lakeguard.errors import MetadataStoreError
from lakeguard.store.definitions import ColumnDef, TableDef

# Spark's own spelling of the definition types, as `DataType.simpleString()` prints them.
_SPARK_TYPE = {"long": "bigint"}


def spark_type(type_name: str) -> str:
    return _SPARK_TYPE.get(type_name, type_name)


def quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


def sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def column_sql(col: ColumnDef) -> str:
    parts = [quote(col.name), spark_type(col.type).upper()]
    if not col.nullable:
        parts.append("NOT NULL")
    if col.generated:
        parts.append(f"GENERATED ALWAYS AS ({col.generated})")
    if col.comment:
        parts.append(f"COMMENT {sql_string(col.comment)}")
    return " ".join(parts)


def create_table_sql(table: TableDef, qualified_name: str, location: str) -> str:
    """`CREATE TABLE IF NOT EXISTS` for a new metadata table at `location`."""
    cols = ",\n  ".join(column_sql(c) for c in table.columns)
    sql = f"CREATE TABLE IF NOT EXISTS {qualified_name} (\n  {cols}\n) USING DELTA"
    if table.partitioned_by:
        sql += f"\nPARTITIONED BY ({', '.join(quote(c) for c in table.partitioned_by)})"
    sql += f"\nLOCATION {sql_string(location)}"
    sql += f"\nCOMMENT {sql_string(table.comment)}"
    props = {
        "laketx.kind": table.kind.value,
        "delta.appendOnly": str(table.append_only).lower(),
        # Every run appends a few one-row files; compaction keeps reads of the store fast.
        "delta.autoOptimize.autoCompact": "true",
    }
    rendered = ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in props.items())
    return sql + f"\nTBLPROPERTIES ({rendered})"


def register_table_sql(qualified_name: str, location: str) -> str:
    """Register an existing Delta table by name; its schema comes from the Delta log."""
    return (
        f"CREATE TABLE IF NOT EXISTS {qualified_name} USING DELTA LOCATION {sql_string(location)}"
    )


@dataclass(frozen=True)
class ExistingColumn:
    name: str
    type: str
    nullable: bool


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
        wanted = spark_type(table.column(name).type)
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


def add_columns_sql(qualified_name: str, columns: list[ColumnDef]) -> str:
    cols = ", ".join(column_sql(c) for c in columns)
    return f"ALTER TABLE {qualified_name} ADD COLUMNS ({cols})"
