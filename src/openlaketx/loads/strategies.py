"""Load strategies that Spark runs: MERGE of a staged batch on business keys (merge, scd2).

Appends and full loads are published by delta-rs from the staged files (`publish.py`). A merge
upserts on the keys and rewrites only rows whose row hash changed (`hash_strategy` chooses the
hashed columns); scd2 closes the current version of a changed key (`valid_to`, `is_current`)
and inserts the new one. A full snapshot may delete the keys it lacks: softly (a timestamp in
`_laketx_deleted_at`; scd2 closes the version) or for good. Each MERGE is one tagged,
idempotent Delta commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lakeguard.records.schema.delta_json import parse_schema
from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import (
    DELETED_AT,
    SCD2_COLUMNS,
    DeleteMissing,
    is_data_column,
    is_staged_only,
)
from openlaketx.loads import catchup
from openlaketx.loads.commit import (
    CommitTag,
    TaggedCommit,
    committed,
    conflict,
    session_tagging,
)
from openlaketx.loads.merge_plan import (
    ACTION,
    APPLY,
    CLOSE,
    CLOSE_AT,
    CLOSE_DELETED,
    DELETE,
    ROW_HASH,
    MergePlan,
)
from openlaketx.loads.publish import ensure_columns, fields_of

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

VALID_FROM, VALID_TO, IS_CURRENT = SCD2_COLUMNS


def rows_written(commit: TaggedCommit) -> int:
    """Rows a commit inserted, updated or deleted: its tag, or Delta's operation metrics."""
    if commit.rows is not None:
        return commit.rows
    m = commit.metrics
    if "numTargetRowsInserted" in m:
        return sum(
            int(m.get(k, 0))
            for k in ("numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted")
        )
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


def row_hash_columns(columns: list[str], keys: list[str], strategy: Any) -> list[str]:
    """The columns whose values make the row hash (pure): data columns that are not keys."""
    own = [c for c in columns if c not in keys and is_data_column(c)]
    if isinstance(strategy, dict) and "include" in strategy:
        return [c for c in own if c in strategy["include"]]
    if isinstance(strategy, dict) and "exclude" in strategy:
        return [c for c in own if c not in strategy["exclude"]]
    return own


def with_row_hash(frame: DataFrame, keys: list[str], strategy: Any = "all") -> DataFrame:
    """Add a hash of the hashed columns, so unchanged rows are not rewritten by a merge."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    return frame.withColumn(ROW_HASH, F.expr(row_hash_sql(frame.columns, keys, strategy)))


def row_hash_sql(columns: list[str], keys: list[str], strategy: Any = "all") -> str:
    """The row hash as one SQL expression (pure): one round trip to the JVM, where a Column
    per hashed column took one each, a fixed cost of every merge step."""
    values = [quote(c) for c in row_hash_columns(columns, keys, strategy)]
    return f"xxhash64({', '.join(values)})" if values else "CAST(0 AS BIGINT)"


def with_scd2_columns(frame: DataFrame, effective: Column) -> DataFrame:
    """Rows as new current versions: valid from `effective`, open-ended, current."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    return (
        frame.withColumn(VALID_FROM, effective.cast("timestamp"))
        .withColumn(VALID_TO, F.lit(None).cast("timestamp"))
        .withColumn(IS_CURRENT, F.lit(True))
    )


def merge(
    spark: SparkSession,
    staged: str,
    path: str,
    tag: CommitTag,
    plan: MergePlan,
    *,
    drop: frozenset[str] = frozenset(),
    may_add: bool = False,
) -> TaggedCommit:
    """Publish the staged batch into the table by `plan` in one tagged MERGE commit.

    The batch holds at most one row per key (the runner de-duplicates by `sequence_by`, or the
    gate blocked duplicates). With `sequence_by`, a late row older than the stored one never
    overwrites it.
    """
    # start-up time: delta-spark (and pyspark) load on first use, never in metadata-only commands
    from delta.tables import DeltaTable

    source = spark.read.parquet(staged)
    ensure_columns(path, fields_of(parse_schema(source.schema.jsonValue()), drop), may_add=may_add)
    written = [c for c in source.columns if c not in drop and not is_staged_only(c)]
    target = DeltaTable.forPath(spark, path).alias("t")
    if catchup.spans_versions(source) and plan.scd2:
        merged = _scd2_history(target, catch_up_source(spark, source, path, plan), plan, written)
    elif catchup.spans_versions(source):
        folded = catch_up_source(spark, source, path, plan)
        merged = _scd1(target, folded, plan, written, changed=f"s.{APPLY}")
    elif plan.scd2:
        merged = _scd2(spark, target, source.select(*written), path, plan)
    else:
        merged = _scd1(target, source, plan, written)
    if plan.delete_missing == DeleteMissing.HARD and not (
        catchup.spans_versions(source) and plan.scd2
    ):
        merged = merged.whenNotMatchedBySourceDelete()
    try:
        with session_tagging(spark, tag):
            merged.execute()
    except Exception as exc:
        if _is_conflict(exc):
            raise conflict(tag, path) from exc
        raise
    return committed(path, tag)


def _scd1(
    target: Any, source: DataFrame, plan: MergePlan, written: list[str], changed: str | None = None
) -> Any:
    """Upsert: changed rows are overwritten, new keys inserted, missing keys marked.

    `changed`: the condition under which a source row replaces its key's (default: the
    plan's); a catch-up's fold decides it for each key.
    """
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    updates: dict[str, str | Column] = {quote(c): f"s.{quote(c)}" for c in written}
    if plan.delete_missing == DeleteMissing.SOFT:
        updates[quote(DELETED_AT)] = F.lit(None).cast("timestamp")
    merged = (
        target.merge(source.alias("s"), plan.on())
        .whenMatchedUpdate(condition=changed or plan.changed(), set=updates)
        .whenNotMatchedInsert(
            condition=changed if changed else None,
            values={quote(c): F.col(f"s.{quote(c)}") for c in written},
        )
    )
    if plan.delete_missing == DeleteMissing.SOFT:
        merged = merged.whenNotMatchedBySourceUpdate(
            condition=f"t.{quote(DELETED_AT)} IS NULL",
            set={quote(DELETED_AT): F.current_timestamp()},
        )
    return merged


def _scd2(spark: SparkSession, target: Any, source: DataFrame, path: str, plan: MergePlan) -> Any:
    """History: a changed key's current version is closed and its new version inserted.

    The MERGE source holds every batch row keyed by its business keys (to close changed
    versions and to find missing keys) and, with null keys that match nothing, the rows to
    insert: new keys, changed keys, keys that come back after a delete.
    """
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    marks = plan.marks
    history = plan.history
    extra = [plan.sequence_by] if plan.sequence_by else []
    current = plan.current(spark.read.format("delta").load(path)).select(
        *[F.col(quote(c)) for c in [*plan.keys, ROW_HASH, *extra]]
    )
    joined = source.alias("s").join(current.alias("t"), F.expr(history.on()), "left")
    first = quote(plan.keys[0])
    inserts = joined.where(F.expr(f"t.{first} IS NULL OR ({history.changed()})")).select("s.*")
    keyed = source.select(
        "*", *[F.col(quote(k)).alias(m) for k, m in zip(plan.keys, marks, strict=True)]
    )
    fresh = inserts.select(
        "*",
        *[
            F.lit(None).cast(source.schema[k].dataType).alias(m)
            for k, m in zip(plan.keys, marks, strict=True)
        ],
    )
    merged = (
        target.merge(keyed.unionByName(fresh).alias("s"), plan.on(marks))
        .whenMatchedUpdate(
            condition=f"t.{IS_CURRENT} AND ({history.changed()})",
            set={IS_CURRENT: F.lit(False), VALID_TO: F.col(f"s.{VALID_FROM}")},
        )
        .whenNotMatchedInsert(
            condition=f"s.{marks[0]} IS NULL",
            values={quote(c): F.col(f"s.{quote(c)}") for c in source.columns},
        )
    )
    if plan.delete_missing == DeleteMissing.SOFT:
        now = F.current_timestamp()
        merged = merged.whenNotMatchedBySourceUpdate(
            condition=f"t.{IS_CURRENT}",
            set={IS_CURRENT: F.lit(False), VALID_TO: now, quote(DELETED_AT): now},
        )
    return merged


def current_keys(table: DataFrame, plan: MergePlan) -> DataFrame:
    """The keys, row hashes (and `sequence_by`) of the table's current rows."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    extra = [plan.sequence_by] if plan.sequence_by else []
    return plan.current(table).select(*[F.col(quote(c)) for c in [*plan.keys, ROW_HASH, *extra]])


def history_parts(
    spark: SparkSession, source: DataFrame, path: str, plan: MergePlan
) -> tuple[DataFrame, DataFrame]:
    """A catch-up's scd2 history rows and its actions on the table's keys (catchup.py)."""
    table = spark.read.format("delta").load(path)
    return catchup.history(source, current_keys(table, plan), plan, table.columns)


def catch_up_source(
    spark: SparkSession, source: DataFrame, path: str, plan: MergePlan
) -> DataFrame:
    """A catch-up's MERGE source, its fold done (catchup.py), for Spark's MERGE here or for
    delta-rs's (`small_catch_up.merge`), with the same clauses. merge: each key's last
    row, with `APPLY`. scd2: under null marks (`MergePlan.marks`), the history rows to insert;
    under each key's marks, its `ACTION` and `CLOSE_AT` on the table's rows of the key. One
    query, so that every clock stamp it holds is one instant."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    if not plan.scd2:
        table = spark.read.format("delta").load(path)
        return catchup.latest(source, current_keys(table, plan), plan)
    rows, actions = history_parts(spark, source, path, plan)
    marks = plan.marks
    keyed = actions.select(
        F.col(ACTION),
        F.col(CLOSE_AT),
        *[F.col(quote(k)).alias(m) for k, m in zip(plan.keys, marks, strict=True)],
    )
    fresh = rows.select(
        *[F.col(quote(c)) for c in rows.columns],
        *[
            F.lit(None).cast(rows.schema[k].dataType).alias(m)
            for k, m in zip(plan.keys, marks, strict=True)
        ],
    )
    return fresh.unionByName(keyed, allowMissingColumns=True)


def _scd2_history(target: Any, source: DataFrame, plan: MergePlan, written: list[str]) -> Any:
    """The MERGE of a catch-up's scd2 history (`catch_up_source`): one source row per key
    acting on the table's rows (close the current one, or delete them all), and, with null
    keys that match nothing, the history rows to insert."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    marks = plan.marks
    action = f"s.{quote(ACTION)}"
    close_at = F.col(f"s.{quote(CLOSE_AT)}")
    merged = (
        target.merge(source.alias("s"), plan.on(marks))
        .whenMatchedDelete(condition=f"{action} = '{DELETE}'")
        .whenMatchedUpdate(
            condition=f"{action} = '{CLOSE}' AND t.{IS_CURRENT}",
            set={IS_CURRENT: F.lit(False), VALID_TO: close_at},
        )
    )
    if plan.delete_missing == DeleteMissing.SOFT:
        merged = merged.whenMatchedUpdate(
            condition=f"{action} = '{CLOSE_DELETED}' AND t.{IS_CURRENT}",
            set={IS_CURRENT: F.lit(False), VALID_TO: close_at, quote(DELETED_AT): close_at},
        )
    return merged.whenNotMatchedInsert(
        condition=f"s.{marks[0]} IS NULL",
        values={quote(c): F.col(f"s.{quote(c)}") for c in written},
    )
