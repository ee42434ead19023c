"""A data table's rows as they were at one of its versions, read from the Parquet files the
Delta log lists for that version.

Spark's Delta reader rebuilds a table's snapshot state for every version it is asked for: four
Spark jobs on a warm session, most of a small derived step's time. delta-rs knows the files of
a version from the log alone, and their statistics say which of them hold the lineage versions
a step wants. So a read of a few plain files goes straight to Parquet with the version's own
schema; a table whose files only Delta's reader reads right (deletion vectors, column mapping,
type widening, partition values kept in paths) or a read of many files takes Delta's reader.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote

import pyarrow as pa

from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.schema.delta_json import DeltaSchema
from openlaketx import storage
from openlaketx.loads.content import VERSION_COLUMN

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Spark lists more paths than this with a Spark job of its own (parallel partition discovery),
# which costs what the Delta reader's snapshot jobs cost.
MAX_FILES = 32
# Reader features under which a file's Parquet alone does not hold the table's rows.
_DELTA_ONLY = frozenset(
    {"deletionVectors", "columnMapping", "typeWidening", "typeWidening-preview"}
)


@dataclass(frozen=True)
class PlainFiles:
    """The files of one table version that hold the wanted rows, and that version's schema."""

    uris: list[str]
    schema: DeltaSchema  # the version's schema


def plain_files(
    location: str, version: int, lineage: tuple[int, int] | None = None
) -> PlainFiles | None:
    """The files of `location` at `version` whose rows may carry a lineage version within
    `lineage` (all of them without it), or None when they cannot be read as plain Parquet."""
    table = storage.delta_table(location, version)
    protocol = table.protocol()
    if _DELTA_ONLY & set(protocol.reader_features or ()):
        return None
    metadata = table.metadata()
    if metadata.partition_columns:
        return None
    if metadata.configuration.get("delta.columnMapping.mode", "none") != "none":
        return None
    actions = pa.table(table.get_add_actions(flatten=True))
    paths = actions.column("path").to_pylist()
    if lineage is not None:
        paths = _within(actions, paths, lineage)
    if len(paths) > MAX_FILES:
        return None
    return PlainFiles(
        uris=[storage.join(location, unquote(p)) for p in paths],
        schema=json.loads(table.schema().to_json()),
    )


def _within(actions: pa.Table, paths: list[str], lineage: tuple[int, int]) -> list[str]:
    """The paths whose lineage-version statistics overlap `lineage` (or that have none)."""
    low_column, high_column = f"min.{VERSION_COLUMN}", f"max.{VERSION_COLUMN}"
    if low_column not in actions.column_names or high_column not in actions.column_names:
        return paths
    lows = actions.column(low_column).to_pylist()
    highs = actions.column(high_column).to_pylist()
    first, last = lineage
    return [
        path
        for path, low, high in zip(paths, lows, highs, strict=True)
        if low is None or high is None or (low <= last and high >= first)
    ]


def read_version(
    spark: SparkSession, location: str, version: int, lineage: tuple[int, int] | None = None
) -> DataFrame:
    """The rows of the Delta table at `location` as of `version`. With `lineage`, files that
    hold no row of those lineage versions may be left out (the caller still filters rows)."""
    files = plain_files(location, version, lineage)
    if files is None:
        return spark.read.format("delta").option("versionAsOf", version).load(location)
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(dict(files.schema))
    if not files.uris:
        return spark.createDataFrame([], schema)
    return spark.read.schema(schema).parquet(*files.uris)


@dataclass(frozen=True)
class RowsPage:
    """One page of an approved version's rows."""

    version: ApprovedVersion
    columns: list[str]
    rows: list[dict[str, object]]


def page_order(frame: DataFrame, keys: tuple[str, ...]) -> list[str]:
    """The columns a page of `frame` is ordered by, so that pages neither repeat nor skip a
    row: the dataset's business keys first, then every other column Spark can order (all but
    maps and variants); only rows equal in all of them tie, and they are alike."""
    from pyspark.sql.types import MapType, VariantType  # Spark's types: on first use

    orderable = [
        f.name for f in frame.schema.fields if not isinstance(f.dataType, MapType | VariantType)
    ]
    return [k for k in keys if k in orderable] + [c for c in orderable if c not in keys]
