"""Registration of Delta tables by name in the session catalog, pointing at their location.

The session catalog is in-memory (no shared metastore), so each session registers the tables it
uses. A name already registered elsewhere (another lakehouse opened earlier in the same
process) is re-pointed: dropping an external table's entry leaves its data untouched.

The catalog changes only through this module, so what it registered in a session is remembered
(per session object): a step that registers its table again asks the catalog nothing, where
asking it costs a Delta snapshot (`tableExists` and `DESCRIBE` resolve the table).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from lakeguard.store.ddl import register_table_sql
from lakeguard.words.quoting import quote

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


_REGISTERED: WeakKeyDictionary[Any, dict[tuple[str, str], str]] = WeakKeyDictionary()
_LOCK = threading.Lock()


def _normal(location: str) -> str:
    return location.removeprefix("file:").rstrip("/")


def _known(spark: SparkSession) -> dict[tuple[str, str], str]:
    with _LOCK:
        return _REGISTERED.setdefault(spark, {})


def is_registered(spark: SparkSession, db: str, table: str, location: str) -> bool:
    """Whether this module registered `db.table` at `location` in this session (no JVM call)."""
    return _known(spark).get((db, table)) == _normal(location)


# What `registered_location` says of an entry whose table's files are gone (another lakehouse
# opened in this process, then deleted): no location matches it, so it is re-pointed.
GONE = ""


def registered_location(spark: SparkSession, db: str, table: str) -> str | None:
    """Where `db.table` points in this session's catalog, or None if it is not registered."""
    try:
        if not spark.catalog.tableExists(f"{db}.{table}"):
            return None
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {quote(db)}.{quote(table)}").collect()
    except Exception as exc:  # pyspark's own error class: Spark is not imported here
        if "DELTA_PATH_DOES_NOT_EXIST" not in str(exc):
            raise
        return GONE  # resolving the entry reads a Delta log that is no longer there
    return next((_normal(r["data_type"]) for r in rows if r["col_name"] == "Location"), None)


def forget_if_elsewhere(spark: SparkSession, db: str, table: str, location: str) -> bool:
    """Drop `db.table`'s catalog entry if it names another location; True if it names this one."""
    current = registered_location(spark, db, table)
    if current == _normal(location):
        return True
    if current is not None:
        spark.sql(f"DROP TABLE {quote(db)}.{quote(table)}")  # external: only the entry goes
        _known(spark).pop((db, table), None)
    return False


def register_table(spark: SparkSession, db: str, table: str, location: str) -> None:
    """Make `db.table` name the existing Delta table at `location` in this session."""
    if is_registered(spark, db, table, location):
        return
    if not forget_if_elsewhere(spark, db, table, location):
        spark.sql(register_table_sql(f"{quote(db)}.{quote(table)}", location))
    _known(spark)[(db, table)] = _normal(location)
