"""Where dataset and quarantine tables live, and their registration by name in Spark.

There is no shared metastore (see spark.py); every session registers the tables it can see by
location, so any process can query `lakeguard.run_history`, `bronze.x` or `quarantine.x` by
name. Registration is for reading: the metadata tables are written by delta-rs only.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from lakeguard.store import MetadataStore
from lakeguard.store.ddl import quote, sql_string
from lakeguard.store.registration import register_table

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
    from deltalake import DeltaTable

    location = dataset_location(warehouse, table_name)
    if not DeltaTable.is_deltatable(location):
        return False
    db, table = table_name.split(".", 1)
    _database(spark, db, warehouse.rstrip("/") + "/" + db)
    register_table(spark, db, table, location)
    return True


def register_metadata(
    spark: SparkSession, store: MetadataStore, tables: set[str] | None = None
) -> None:
    """Make the metadata tables (or those of `tables` that exist) queryable by name in this
    session, for reading."""
    _database(spark, store.namespace, store.root)
    wanted = [t for t in store.tables() if tables is None or t in tables]
    # Each registration reads a Delta log; several at once keep a cold start short.
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(
            pool.map(lambda t: register_table(spark, store.namespace, t, store.location(t)), wanted)
        )
