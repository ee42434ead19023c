"""JDBC sources (PostgreSQL first): a table read whole, or above its last watermark.

The read is Spark's JDBC data source, optionally split on a numeric column into parallel
partitions; the watermark predicate is a filter on the raw column, which Spark pushes down to
the database in its dialect. The password comes from the system's `credential_ref` and is never
stored, logged or echoed in an error: errors name the reference instead and say whether a retry
can help (the database unreachable) or not (credentials refused, table missing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.records.reach import Reach
from lakeguard.records.schema.types import is_watermark_type
from lakeguard.records.sources.kinds import options_as
from lakeguard.records.sources.kinds.jdbc import SUBPROTOCOLS, JdbcObjectOptions, JdbcOptions
from lakeguard.records.sources.progress import SourceProgress, WatermarkMark
from lakeguard.records.sources.records import SourceObjectDef, SourceSystemDef
from lakeguard.words.errors import LakeTxError, SourceError, SourceUnavailable, root_cause
from lakeguard.words.hashing import digest
from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import SourceKindName, SourceLoad
from openlaketx.sources.base import ReadContext, SourceEngine
from openlaketx.sources.credentials import resolve, scrub
from openlaketx.sources.guard import pinned_jdbc_url
from openlaketx.sources.reads import SourceRead, fields_by_name, select_declared
from openlaketx.sources.watermarks import lower_bound

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_UNREACHABLE = (
    "connection refused",
    "connection attempt failed",
    "could not connect",
    "timed out",
    "timeout",
    "no route to host",
    "unknownhost",
    "too many connections",
)
_REFUSED = ("password authentication failed", "authentication failed", "pg_hba.conf")


def classify_failure(
    exc: Exception, *, system: SourceSystemDef, obj: SourceObjectDef, secret: str | None
) -> LakeTxError:
    """A JDBC failure as a SourceError: transient when the database is out of reach."""
    text = scrub(root_cause(exc), secret)
    lowered = text.lower()
    where = f"source_systems[{system.source_system_id}]"
    ref = system.credential_ref or "(none)"
    if any(s in lowered for s in _REFUSED):
        return SourceError(
            f"the database refused the credentials of credential_ref {ref} "
            f"(user {options_as(system.options, JdbcOptions).user or '?'})",
            where=where,
            fix=f"check the user in the system's options and the secret that {ref} holds",
            details={"credential_ref": ref},
        )
    if any(s in lowered for s in _UNREACHABLE):
        return SourceUnavailable(
            f"cannot reach the database of {system.source_system_id}: {text}",
            where=where,
            fix="check that the database is up and reachable from this host; the run can be "
            "retried",
            details={"credential_ref": ref},
        )
    if "does not exist" in lowered or "not found" in lowered:
        return SourceError(
            f"table {obj.locator} of {system.source_system_id} cannot be read: {text}",
            where=f"source_objects[{obj.source_object_id}].locator",
            fix="check the table name (schema.table) and the user's grants",
        )
    return SourceError(
        f"cannot read {obj.locator} from {system.source_system_id}: {text}",
        where=f"source_objects[{obj.source_object_id}]",
        fix="check the system's connection options and the table",
    )


def _reader_options(system: SourceSystemDef, obj: SourceObjectDef, url: str) -> dict[str, str]:
    connection = options_as(system.options, JdbcOptions)
    options = {k: v for k, v in connection.properties().items() if k != "url"}
    protocol = url.removeprefix("jdbc:").split(":", 1)[0].lower()
    options.setdefault("driver", SUBPROTOCOLS.get(protocol, (0, ""))[1])
    options = {k: v for k, v in options.items() if v}
    ingest = options_as(obj.options, JdbcObjectOptions)
    if ingest.fetch_size:
        options["fetchsize"] = str(ingest.fetch_size)
    if ingest.partition_column:
        options.update(
            partitionColumn=ingest.partition_column,
            lowerBound=str(ingest.lower_bound if ingest.lower_bound is not None else 0),
            upperBound=str(ingest.upper_bound if ingest.upper_bound is not None else 0),
            numPartitions=str(ingest.num_partitions or 1),
        )
    return {**options, **obj.read_options, "url": url, "dbtable": obj.locator}


def _load(
    spark: SparkSession,
    system: SourceSystemDef,
    obj: SourceObjectDef,
    secret: str | None,
    reach: Reach,
) -> DataFrame:
    where = f"source_systems[{system.source_system_id}].options.url"
    url = pinned_jdbc_url(reach, options_as(system.options, JdbcOptions).url, where)
    reader = spark.read.format("jdbc").options(**_reader_options(system, obj, url))
    if secret is not None:
        reader = reader.option("password", secret)
    try:
        return reader.load()  # connects once, for the table's schema
    except Exception as exc:
        raise classify_failure(exc, system=system, obj=obj, secret=secret) from None


def read_jdbc(
    spark: SparkSession,
    system: SourceSystemDef,
    obj: SourceObjectDef,
    watermark: str | None,
    reach: Reach,
) -> SourceRead:
    """The table (or its rows above `watermark`), with the approved columns and types."""
    from pyspark.sql import functions as F  # start-up time: pyspark only where Spark runs

    secret = resolve(
        system.credential_ref,
        where=f"source_systems[{system.source_system_id}].credential_ref",
        reach=reach,
    )
    raw = _load(spark, system, obj, secret, reach)
    present = fields_by_name(raw)
    incremental = obj.load_type == SourceLoad.INCREMENTAL
    wm = obj.watermark_column if incremental else None
    lower: str | None = None
    if wm is not None:
        if wm.lower() not in present:
            raise SourceError(
                f"watermark column {wm} is not a column of {obj.locator}",
                where=f"source_objects[{obj.source_object_id}].watermark_column",
                fix="choose a column the table has",
            )
        source_type = present[wm.lower()].dataType.simpleString()
        if not is_watermark_type(source_type):
            raise SourceError(
                f"watermark column {wm} is {source_type} in {obj.locator}; a watermark must be "
                "numeric, a date or a timestamp",
                where=f"source_objects[{obj.source_object_id}].watermark_column",
                fix="choose a column that grows with every new or changed row",
            )
        if watermark is not None:
            lower = lower_bound(watermark, source_type, obj.lookback)
            name = present[wm.lower()].name
            raw = raw.where(F.col(quote(name)) > F.lit(lower).cast(source_type))
    frame, live, drift = select_declared(raw, obj)
    detail = {"table": obj.locator, "above": lower}
    reread = None
    if wm is not None and watermark is not None and obj.lookback is not None:
        assert lower is not None
        reread = (wm, lower, present[wm.lower()].dataType.simpleString())
    return SourceRead(
        source_object_id=obj.source_object_id,
        frame=frame,
        fingerprint=digest(f"{obj.source_object_id}|{detail}"),
        watermark_column=wm,
        snapshot=not incremental,
        secret=secret,
        reread_from=reread,
        drift=drift,
        live=live,
    )


class JdbcSource(SourceEngine):
    """A database over JDBC, read by Spark: only a read can tell what is new."""

    kind = SourceKindName.JDBC

    def read(
        self,
        spark: SparkSession,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        context: ReadContext,
    ) -> SourceRead:
        last = progress.last(obj.source_object_id, WatermarkMark)
        return read_jdbc(spark, system, obj, last.watermark if last else None, context.reach)

    def classify(
        self, message: str, system: SourceSystemDef, obj: SourceObjectDef
    ) -> SourceError | None:
        lowered = message.lower()
        if any(s in lowered for s in _REFUSED):
            refused = classify_failure(Exception(message), system=system, obj=obj, secret=None)
            assert isinstance(refused, SourceError)
            return refused
        # the database went away mid-read (a network, a restart): worth a retry
        return SourceUnavailable(
            f"reading the source failed: {message}",
            where=f"source_systems[{system.source_system_id}]",
            fix="check that the database is up and reachable; the run can be retried",
        )
