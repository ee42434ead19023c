"""What a MERGE of a staged batch would insert, update and delete, counted in Spark.

The runner no longer counts a big batch before its MERGE (a second table-sized join): the
MERGE's own commit metrics say whether it changed a row (`runner/promotion.py`), and a small
batch is counted by DataFusion (`small_merge.py`). This count is the reference the tests check
delta-rs's counts and the MERGE's metrics against."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import DELETED_AT, DeleteMissing
from openlaketx.loads import catchup, strategies
from openlaketx.loads.merge_plan import (
    ACTION,
    APPLY,
    CLOSE,
    CLOSE_DELETED,
    DELETE,
    ROW_HASH,
    MergePlan,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

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
        staged = catchup.latest(staged, strategies.current_keys(whole, plan), plan)
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
    return plan.counts(counts.asDict())


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


def _history_changes(
    spark: SparkSession, staged: DataFrame, path: str, plan: MergePlan
) -> dict[str, int]:
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    rows, actions = strategies.history_parts(spark, staged, path, plan)
    counts = actions.groupBy(ACTION).count().collect()
    by_action = {r[ACTION]: int(r["count"]) for r in counts}
    return {
        "inserted": rows.select(F.lit(1)).count(),
        "updated": by_action.get(CLOSE, 0) + by_action.get(CLOSE_DELETED, 0),
        "deleted": by_action.get(DELETE, 0),
    }
