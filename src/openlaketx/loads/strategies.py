"""Load strategies that Spark runs: a MERGE of a staged batch into its dataset table.

Appends and full loads are published by delta-rs from the staged files (`publish.py`); a merge
needs Spark's MERGE, which reads the staged batch once and commits one tagged, idempotent
Delta commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.store.ddl import quote
from openlaketx.loads.commit import (
    CommitTag,
    TaggedCommit,
    committed,
    conflict,
    session_tagging,
)
from openlaketx.loads.publish import ensure_columns, fields_of

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

ROW_HASH = "_laketx_row_hash"


def rows_written(commit: TaggedCommit) -> int:
    """Rows a commit inserted or updated: recorded in its tag, or Delta's operation metrics."""
    if commit.rows is not None:
        return commit.rows
    m = commit.metrics
    if "numTargetRowsInserted" in m:
        return int(m.get("numTargetRowsInserted", 0)) + int(m.get("numTargetRowsUpdated", 0))
    return int(m.get("numOutputRows", 0))


def _is_conflict(exc: Exception) -> bool:
    # Delta's conflict exceptions do not share a Python base class; match them by name.
    names = (
        "ConcurrentAppendException",
        "ConcurrentDeleteReadException",
        "ConcurrentDeleteDeleteException",
        "MetadataChangedException",
        "ConcurrentTransactionException",
        "ProtocolChangedException",
        "DELTA_CONCURRENT",
    )
    text = f"{type(exc).__name__} {exc}"
    return any(n in text for n in names)


def with_row_hash(frame: DataFrame, keys: list[str]) -> DataFrame:
    """Add a hash of the non-key columns, so unchanged rows are not rewritten by a merge."""
    from pyspark.sql import functions as F

    values = [
        F.col(quote(c)) for c in frame.columns if c not in keys and not c.startswith("_laketx")
    ]
    return frame.withColumn(ROW_HASH, F.xxhash64(*values) if values else F.lit(0).cast("long"))


def merge(
    spark: SparkSession,
    staged: str,
    path: str,
    tag: CommitTag,
    keys: list[str],
    sequence_by: str | None = None,
    *,
    drop: frozenset[str] = frozenset(),
) -> TaggedCommit:
    """Upsert the staged batch on business keys: insert new keys, update changed rows.

    The batch holds at most one row per key (the runner de-duplicates by `sequence_by`, or the
    gate blocked duplicates). With `sequence_by`, a late row older than the stored one never
    overwrites it.
    """
    from delta.tables import DeltaTable

    source = spark.read.parquet(staged)
    source = source.drop(*[c for c in source.columns if c in drop])
    ensure_columns(path, fields_of(source.schema.jsonValue()))
    condition = " AND ".join(f"t.{quote(k)} <=> s.{quote(k)}" for k in keys)
    updates: dict[str, str | Column] = {quote(c): f"s.{quote(c)}" for c in source.columns}
    changed = f"t.{ROW_HASH} IS DISTINCT FROM s.{ROW_HASH}"
    if sequence_by:
        seq = quote(sequence_by)
        changed += f" AND (t.{seq} IS NULL OR s.{seq} >= t.{seq})"
    try:
        with session_tagging(spark, tag):
            (
                DeltaTable.forPath(spark, path)
                .alias("t")
                .merge(source.alias("s"), condition)
                .whenMatchedUpdate(condition=changed, set=updates)
                .whenNotMatchedInsertAll()
                .execute()
            )
    except Exception as exc:
        if _is_conflict(exc):
            raise conflict(tag, path) from exc
        raise
    return committed(path, tag)
