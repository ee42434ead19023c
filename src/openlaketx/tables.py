"""Where dataset and quarantine tables live, and their registration by name in Spark.

There is no shared metastore (see spark.py); every session registers the tables it can see by
location, so any process can query `lakeguard.run_history`, `bronze.x` or `quarantine.x` by
name. Registration is for reading: the metadata tables are written by delta-rs only. The
metadata views (`lakeguard.md_jobs`, ..., lakeguard/store/views/) are created in the session
the same way, with the tables they read.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from lakeguard.store import MetadataStore
from lakeguard.store.registration import is_registered, register_table
from lakeguard.store.viewdefs import create_view_sql, needed, view_names
from lakeguard.words.quoting import quote, sql_string
from openlaketx import storage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

QUARANTINE_DB = "quarantine"


def dataset_location(warehouse: str, table_name: str) -> str:
    db, table = table_name.split(".", 1)
    return f"{warehouse.rstrip('/')}/{db}/{table}"


def quarantine_name(dataset_id: str) -> str:
    return f"{QUARANTINE_DB}.{dataset_id}"


def _database(spark: SparkSession, db: str, location: str) -> None:
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(db)} LOCATION {sql_string(location)}")


def register(spark: SparkSession, warehouse: str, table_name: str) -> bool:
    """Register the Delta table behind `table_name` if it exists; True when it does."""
    location = dataset_location(warehouse, table_name)
    if not storage.is_delta_table(location):
        return False
    db, table = table_name.split(".", 1)
    if is_registered(spark, db, table, location):
        return True
    _database(spark, db, warehouse.rstrip("/") + "/" + db)
    register_table(spark, db, table, location)
    return True


def register_metadata(
    spark: SparkSession, store: MetadataStore, names: set[str] | None = None
) -> list[str]:
    """Make the metadata tables and views (or those of `names`, with every table a named view
    reads) queryable by name in this session, for reading. Returns the names of `names` it
    made queryable."""
    _database(spark, store.namespace, store.root)
    wanted = set(store.tables()) | set(view_names()) if names is None else names
    plan = needed(wanted)
    # Each registration reads a Delta log; several at once keep a cold start short.
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(
            pool.map(
                lambda t: register_table(spark, store.namespace, t, store.location(t)), plan.tables
            )
        )
    for view in plan.views:  # a view after what it reads
        spark.sql(create_view_sql(view, store.namespace))
    return sorted(wanted & ({*plan.tables} | {v.name for v in plan.views}))
