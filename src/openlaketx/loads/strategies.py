"""Load strategies that Spark runs: MERGE of a staged batch on business keys (merge, scd2).

Appends and full loads are published by delta-rs from the staged files (`publish.py`). A merge
upserts on the keys and rewrites only rows whose row hash changed (`hash_strategy` chooses the
hashed columns); scd2 closes the current version of a changed key (`valid_to`, `is_current`)
and inserts the new one. A full snapshot may delete the keys it lacks: softly (a timestamp in
`_laketx_deleted_at`; scd2 closes the version) or for good. `changes` counts what a MERGE would
do before it runs, so a batch that changes nothing publishes nothing. Each MERGE is one tagged,
idempotent Delta commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lakeguard.store.ddl import quote
from lakeguard.vocabulary import (
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

    values = [F.col(quote(c)) for c in row_hash_columns(frame.columns, keys, strategy)]
    return frame.withColumn(ROW_HASH, F.xxhash64(*values) if values else F.lit(0).cast("long"))


def with_scd2_columns(frame: DataFrame, effective: Column) -> DataFrame:
    """Rows as new current versions: valid from `effective`, open-ended, current."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    return (
        frame.withColumn(VALID_FROM, effective.cast("timestamp"))
        .withColumn(VALID_TO, F.lit(None).cast("timestamp"))
        .withColumn(IS_CURRENT, F.lit(True))
    )


# A batch of at most this many rows is broadcast to the novelty check (its keys, row hashes and
# `sequence_by`: a few MB on the driver), so the table's side is scanned and probed, not
# shuffled and sorted: a small delivery into a big table pays a scan, not a sort of the table.
BROADCAST_ROWS = 200_000


def changes(
    spark: SparkSession,
    staged: DataFrame,
    path: str,
    plan: MergePlan,
    *,
    batch_rows: int | None = None,
) -> dict[str, int]:
    """What a MERGE of `staged` into the table at `path` would insert, update and delete.

    Reads only the keys, the row hashes (and `sequence_by`) of both sides. `batch_rows`, the
    rows of `staged` when the caller knows them (the staged files' footers), lets a small
    batch that spans one version be checked by a broadcast join (`BROADCAST_ROWS`).
    """
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    spans = catchup.spans_versions(staged)
    if spans and plan.scd2:
        return _history_changes(spark, staged, path, plan)
    extra = [plan.sequence_by] if plan.sequence_by else []
    changed, extra_s = plan.changed(), extra
    whole = spark.read.format("delta").load(path)
    if spans:  # the fold decided what changes
        staged = catchup.latest(staged, _current_keys(whole, plan), plan)
        changed, extra_s = f"s.{APPLY}", [APPLY]
    table = plan.current(whole)
    s = staged.select(*[F.col(quote(c)) for c in [*plan.keys, ROW_HASH, *extra_s]]).alias("s")
    small = batch_rows is not None and batch_rows <= BROADCAST_ROWS
    if small and not spans and plan.delete_missing == DeleteMissing.NONE:
        return _changes_broadcast(table, s, plan, changed, extra, batch_rows or 0)
    if DELETED_AT not in table.columns and plan.delete_missing == DeleteMissing.SOFT:
        table = table.withColumn(DELETED_AT, F.lit(None).cast("timestamp"))
    kept = [*plan.keys, ROW_HASH, *extra]
    if plan.delete_missing == DeleteMissing.SOFT:
        kept.append(DELETED_AT)
    t = table.select(*[F.col(quote(c)) for c in kept]).alias("t")
    # the table's keys missing from the batch count only when missing keys are deleted: else
    # a left join (no row per untouched table key, and no full outer join's extra work)
    how = "left_outer" if plan.delete_missing == DeleteMissing.NONE else "full_outer"
    joined = s.join(t, F.expr(plan.on()), how)
    first = quote(plan.keys[0])
    counts = joined.agg(
        F.sum(F.when(F.expr(f"t.{first} IS NULL"), 1).otherwise(0)).alias("inserted"),
        F.sum(
            F.when(
                F.expr(f"s.{first} IS NOT NULL AND t.{first} IS NOT NULL AND ({changed})"),
                1,
            ).otherwise(0)
        ).alias("updated"),
        F.sum(F.when(F.expr(f"s.{first} IS NULL"), 1).otherwise(0)).alias("missing"),
    ).first()
    assert counts is not None
    deleted = int(counts["missing"] or 0) if plan.delete_missing != DeleteMissing.NONE else 0
    return {
        "inserted": int(counts["inserted"] or 0),
        "updated": int(counts["updated"] or 0),
        "deleted": deleted,
    }


def _changes_broadcast(
    table: DataFrame,
    s: DataFrame,
    plan: MergePlan,
    changed: str,
    extra: list[str],
    batch_rows: int,
) -> dict[str, int]:
    """`changes` for a small batch whose missing keys are not deleted: an inner join that
    broadcasts the batch (an outer join cannot broadcast the side it keeps), the inserted
    rows being the batch's rows that found no table row. Counts as the outer join does: a
    match on a null first key counts as inserted, as the outer join's null test sees it."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    t = table.select(*[F.col(quote(c)) for c in [*plan.keys, ROW_HASH, *extra]]).alias("t")
    first = quote(plan.keys[0])
    counts = (
        t.join(F.broadcast(s), F.expr(plan.on()), "inner")
        .agg(
            F.count(F.lit(1)).alias("matched"),
            F.sum(F.when(F.expr(f"t.{first} IS NULL"), 1).otherwise(0)).alias("null_key"),
            F.sum(F.when(F.expr(f"t.{first} IS NOT NULL AND ({changed})"), 1).otherwise(0)).alias(
                "updated"
            ),
        )
        .first()
    )
    assert counts is not None
    matched, null_key = int(counts["matched"] or 0), int(counts["null_key"] or 0)
    return {
        "inserted": batch_rows - matched + null_key,
        "updated": int(counts["updated"] or 0),
        "deleted": 0,
    }


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
    ensure_columns(path, fields_of(source.schema.jsonValue(), drop), may_add=may_add)
    written = [c for c in source.columns if c not in drop and not is_staged_only(c)]
    target = DeltaTable.forPath(spark, path).alias("t")
    if catchup.spans_versions(source) and plan.scd2:
        merged = _scd2_history(spark, target, source, path, plan, written)
    elif catchup.spans_versions(source):
        table = spark.read.format("delta").load(path)
        folded = catchup.latest(source, _current_keys(table, plan), plan)
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

    marks = [f"__laketx_key_{i}" for i in range(len(plan.keys))]
    history = MergePlan(load_type=plan.load_type, keys=plan.keys, sequence_by=plan.sequence_by)
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


def _current_keys(table: DataFrame, plan: MergePlan) -> DataFrame:
    """The keys, row hashes (and `sequence_by`) of the table's current rows."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    extra = [plan.sequence_by] if plan.sequence_by else []
    return plan.current(table).select(*[F.col(quote(c)) for c in [*plan.keys, ROW_HASH, *extra]])


def _history_parts(
    spark: SparkSession, source: DataFrame, path: str, plan: MergePlan
) -> tuple[DataFrame, DataFrame]:
    """A catch-up's scd2 history rows and its actions on the table's keys (catchup.py)."""
    table = spark.read.format("delta").load(path)
    return catchup.history(source, _current_keys(table, plan), plan, table.columns)


def _history_changes(
    spark: SparkSession, staged: DataFrame, path: str, plan: MergePlan
) -> dict[str, int]:
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    rows, actions = _history_parts(spark, staged, path, plan)
    counts = actions.groupBy(ACTION).count().collect()
    by_action = {r[ACTION]: int(r["count"]) for r in counts}
    return {
        "inserted": rows.select(F.lit(1)).count(),
        "updated": by_action.get(CLOSE, 0) + by_action.get(CLOSE_DELETED, 0),
        "deleted": by_action.get(DELETE, 0),
    }


def _scd2_history(
    spark: SparkSession,
    target: Any,
    source: DataFrame,
    path: str,
    plan: MergePlan,
    written: list[str],
) -> Any:
    """The MERGE of a catch-up's scd2 history: one source row per key acting on the table's
    rows (close the current one, or delete them all), and, with null keys that match
    nothing, the history rows to insert."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    rows, actions = _history_parts(spark, source, path, plan)
    marks = [f"__laketx_key_{i}" for i in range(len(plan.keys))]
    keyed = actions.select(
        F.col(ACTION),
        F.col(CLOSE_AT),
        *[F.col(quote(k)).alias(m) for k, m in zip(plan.keys, marks, strict=True)],
    )
    fresh = rows.select(
        *[F.col(quote(c)) for c in written],
        *[
            F.lit(None).cast(rows.schema[k].dataType).alias(m)
            for k, m in zip(plan.keys, marks, strict=True)
        ],
    )
    action = f"s.{quote(ACTION)}"
    close_at = F.col(f"s.{quote(CLOSE_AT)}")
    merged = (
        target.merge(fresh.unionByName(keyed, allowMissingColumns=True).alias("s"), plan.on(marks))
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
