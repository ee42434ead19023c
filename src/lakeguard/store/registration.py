"""Registration of Delta tables by name in the session catalog, pointing at their location.

The session catalog is in-memory (no shared metastore), so each session registers the tables it
uses. A name already registered elsewhere (another lakehouse opened earlier in the same
process) is re-pointed: dropping an external table's entry leaves its data untouched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.store.ddl import quote, register_table_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _normal(location: str) -> str:
    return location.removeprefix("file:").rstrip("/")


def registered_location(spark: SparkSession, db: str, table: str) -> str | None:
    """Where `db.table` points in this session's catalog, or None if it is not registered."""
    if not spark.catalog.tableExists(f"{db}.{table}"):
        return None
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {quote(db)}.{quote(table)}").collect()
    return next((_normal(r["data_type"]) for r in rows if r["col_name"] == "Location"), None)


def forget_if_elsewhere(spark: SparkSession, db: str, table: str, location: str) -> bool:
    """Drop `db.table`'s catalog entry if it names another location; True if it names this one."""
    current = registered_location(spark, db, table)
    if current == _normal(location):
        return True
    if current is not None:
        spark.sql(f"DROP TABLE {quote(db)}.{quote(table)}")  # external: only the entry goes
    return False


def register_table(spark: SparkSession, db: str, table: str, location: str) -> None:
    """Make `db.table` name the existing Delta table at `location` in this session."""
    if not forget_if_elsewhere(spark, db, table, location):
        spark.sql(register_table_sql(f"{quote(db)}.{quote(table)}", location))
