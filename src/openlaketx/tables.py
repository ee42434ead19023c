"""Where dataset and quarantine tables live, and their registration by name.

There is no shared metastore (see spark.py); every session registers the tables it can see by
location, so any process can query `bronze.x` or `quarantine.x` by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def register(spark: SparkSession, warehouse: str, table_name: str) -> bool:
    """Register the Delta table behind `table_name` if it exists; True when it does."""
    from delta.tables import DeltaTable

    location = dataset_location(warehouse, table_name)
    if not DeltaTable.isDeltaTable(spark, location):
        return False
    db, table = table_name.split(".", 1)
    spark.sql(
        f"CREATE DATABASE IF NOT EXISTS {quote(db)} "
        f"LOCATION {sql_string(warehouse.rstrip('/') + '/' + db)}"
    )
    register_table(spark, db, table, location)
    return True
