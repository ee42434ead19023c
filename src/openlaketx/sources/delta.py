"""Delta tables as sources (a path or a registered table name), read incrementally by version.

The first batch is the table's snapshot at its current version. Later batches read what the
versions since the last one read added: the change data feed where the table has it (inserts
and updates' new images), otherwise the files the new versions added, provided they only
added files (a source that rewrote or deleted rows without a change feed cannot be followed
incrementally: the run says so and how to fix it). The version read up to is recorded with the
batch, so a crash can neither skip nor repeat a version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deltalake import DeltaTable

from lakeguard.records.reach import Reach
from lakeguard.records.sources.kinds import options_as
from lakeguard.records.sources.kinds.delta import DeltaObjectOptions, SourceVersion, is_table_name
from lakeguard.records.sources.progress import SourceProgress
from lakeguard.records.sources.records import SourceObjectDef, SourceSystemDef
from lakeguard.words.errors import OutOfReach, SourceError, first_line
from lakeguard.words.vocabulary import SourceKindName, SourceLoad
from openlaketx.sources.base import ReadContext, SourceEngine
from openlaketx.sources.files import source_path
from openlaketx.sources.guard import check_path
from openlaketx.sources.reads import SourceRead, select_declared

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_CHANGE_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")


def location(
    spark: SparkSession, system: SourceSystemDef, obj: SourceObjectDef, reach: Reach
) -> str:
    """Where the source table's files are (a registered name is looked up in the catalog),
    checked against the tenant's reach."""
    where = f"source_objects[{obj.source_object_id}].locator"
    if not is_table_name(obj.locator):
        path = source_path(system, obj.locator)
        check_path(reach, path, where)
        return path
    if reach.confined:
        raise OutOfReach(
            f"{obj.locator!r} is a registered table name, looked up among every tenant's tables",
            where=where,
            fix="name the table by its folder under the system's root",
        )
    try:
        detail = spark.sql(f"DESCRIBE DETAIL {obj.locator}").first()
    except Exception as exc:
        raise SourceError(
            f"table {obj.locator} is not registered in this session: {first_line(exc)}",
            where=f"source_objects[{obj.source_object_id}].locator",
            fix="use the table's path (relative to the system's root) or register the table",
        ) from exc
    assert detail is not None
    found = str(detail["location"])
    check_path(reach, found, where)
    return found


def read_delta(
    spark: SparkSession,
    system: SourceSystemDef,
    obj: SourceObjectDef,
    last_version: int | None,
    reach: Reach,
) -> SourceRead:
    """What the source table's versions after `last_version` added (or all of it, first)."""
    where = f"source_objects[{obj.source_object_id}]"
    path = location(spark, system, obj, reach)
    if not DeltaTable.is_deltatable(path):
        raise SourceError(
            f"{obj.locator} is not a Delta table (looked at {path})",
            where=f"{where}.locator",
            fix="check the path under the system's root, or the table name",
        )
    table = DeltaTable(path)
    current = int(table.version())
    incremental = obj.load_type == SourceLoad.INCREMENTAL
    if incremental and last_version is not None and current <= last_version:
        return SourceRead(
            source_object_id=obj.source_object_id,
            frame=None,
            fingerprint="none",
            note=f"{obj.locator} has no version after {last_version}",
        )
    if not incremental or last_version is None:
        frame = spark.read.format("delta").option("versionAsOf", current).load(path)
    else:
        config = table.metadata().configuration
        feed = options_as(obj.options, DeltaObjectOptions).change_data_feed
        if feed is None:
            feed = str(config.get("delta.enableChangeDataFeed", "false")).lower() == "true"
        frame = (
            _changes(spark, path, last_version, current)
            if feed
            else _appended(spark, path, obj, last_version, current)
        )
    selected, live, drift = select_declared(frame, obj)
    return SourceRead(
        source_object_id=obj.source_object_id,
        frame=selected,
        fingerprint=f"{obj.source_object_id}@{last_version}..{current}",
        progress=[SourceVersion(source_version=current)],
        drift=drift,
        live=live,
        snapshot=not incremental,
    )


def _changes(spark: SparkSession, path: str, last: int, current: int) -> DataFrame:
    """Inserted rows and updated rows' new images of versions (last, current]."""
    from pyspark.sql import functions as F  # start-up time: pyspark only where Spark runs

    changes = (
        spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", last + 1)
        .option("endingVersion", current)
        .load(path)
        .where(F.col("_change_type").isin("insert", "update_postimage"))
    )
    return changes.drop(*_CHANGE_COLUMNS)


def _appended(
    spark: SparkSession, path: str, obj: SourceObjectDef, last: int, current: int
) -> DataFrame:
    """Rows of the files versions (last, current] added; refused if they removed any."""
    from pyspark.sql import functions as F  # start-up time: pyspark only where Spark runs

    then = set(DeltaTable(path, version=last).file_uris())
    now = set(DeltaTable(path, version=current).file_uris())
    if then - now:
        raise SourceError(
            f"Delta table {obj.locator} rewrote or deleted rows between versions {last} and "
            f"{current}; without a change data feed that cannot be read incrementally",
            where=f"source_objects[{obj.source_object_id}]",
            fix="enable delta.enableChangeDataFeed on the source table, or read it with "
            "load_type: full (a snapshot each run)",
        )
    # Data file names carry a unique id, and both engines agree on them (paths they spell
    # differently: with or without a scheme).
    added = sorted({uri.rsplit("/", 1)[-1] for uri in now - then})
    snapshot = spark.read.format("delta").option("versionAsOf", current).load(path)
    return snapshot.where(F.col("_metadata.file_name").isin(added))


class DeltaSource(SourceEngine):
    """Delta tables, followed by version; delta-rs tells a new version without a JVM."""

    kind = SourceKindName.DELTA

    def read(
        self,
        spark: SparkSession,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        context: ReadContext,
    ) -> SourceRead:
        last = progress.last(obj.source_object_id, SourceVersion)
        version = last.source_version if last else None
        return read_delta(spark, system, obj, version, context.reach)

    def nothing_new(
        self,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        reach: Reach,
    ) -> str | None:
        if obj.load_type != SourceLoad.INCREMENTAL or is_table_name(obj.locator):
            return None  # a snapshot, or a name only a Spark session resolves
        where = source_path(system, obj.locator)
        try:
            check_path(reach, where, f"source_objects[{obj.source_object_id}].locator")
        except OutOfReach:
            return None  # the run says why
        if "://" in where or not DeltaTable.is_deltatable(where):
            return None  # a remote table: Spark looks
        last = progress.last(obj.source_object_id, SourceVersion)
        if last is None or int(DeltaTable(where).version()) > last.source_version:
            return None
        return f"{obj.locator} has no version after {last.source_version}"
