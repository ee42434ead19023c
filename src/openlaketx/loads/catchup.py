"""A batch that spans several parent versions, published as if each had been its own run.

A derived merge or scd2 dataset that catches up on parent versions v1..vN stages every row of
each version (the last row of a key within a version, by `sequence_by`), tagged with the parent
version in `_laketx_parent_version`. Publishing replays, per key, what one run per version
would have done, starting from the table's current row:

- a row changes the key when its row hash differs from the key's current one and, with
  `sequence_by`, it is not older (exactly the MERGE condition of a single run);
- fed full snapshots (`delete_missing`), a key missing from a version is deleted (hard) or
  marked deleted (soft) at that point, and a key that comes back starts afresh;
- merge keeps each key's last change; scd2 keeps every change as a history row, each closed by
  the next (or by the version that missed the key).

The replay is exact, not an approximation by sorting: it folds each key's versions in order
with Spark's `aggregate` over the (small) list of its versions.
"""

from __future__ import annotations

from functools import reduce
from typing import TYPE_CHECKING

from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import (
    DELETED_AT,
    PARENT_VERSION,
    SCD2_COLUMNS,
    DeleteMissing,
    is_staged_only,
)
from openlaketx.loads.content import DIGEST_COLUMN, row_digest
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

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

VALID_FROM, VALID_TO, IS_CURRENT = SCD2_COLUMNS

_SEED = "__laketx_seed"  # the table's current row, as the version before the first
_SEGMENT = "__laketx_segment"  # how many times the key went missing before this version
_GAP_AFTER = "__laketx_gap_after"  # the key is missing from the next version
_CHANGES = "__laketx_changes"  # the parent versions that changed the key, in order
_LAST_SEGMENT = "__laketx_last_segment"
_ANY_GAP = "__laketx_any_gap"


def spans_versions(frame: DataFrame) -> bool:
    """Whether a staged batch is a catch-up of several parent versions."""
    return PARENT_VERSION in frame.columns


def _keys(plan: MergePlan) -> list[Column]:
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    return [F.col(quote(k)) for k in plan.keys]


def _events(source: DataFrame, current: DataFrame, plan: MergePlan) -> DataFrame:
    """The batch rows and each key's current table row (the seed), with where the key went
    missing (`delete_missing`) and which versions changed it."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    keys = _keys(plan)
    first, last = plan.versions[0], plan.versions[-1]
    seq = [plan.sequence_by] if plan.sequence_by else []
    seeds = current.select(
        *keys,
        *[F.col(quote(c)) for c in [ROW_HASH, *seq]],
        F.lit(first - 1).cast("long").alias(PARENT_VERSION),
        F.lit(True).alias(_SEED),
    )
    events = source.withColumn(_SEED, F.lit(False)).unionByName(seeds, allowMissingColumns=True)
    by_key = Window.partitionBy(*keys).orderBy(PARENT_VERSION)
    if plan.delete_missing != DeleteMissing.NONE:
        after = F.lead(PARENT_VERSION).over(by_key)
        pv = F.col(PARENT_VERSION)
        events = events.withColumn(
            _GAP_AFTER, F.when(after.isNull(), pv < last).otherwise(after > pv + 1)
        )
        before = F.lag(_GAP_AFTER, 1, False).over(by_key).cast("int")
        events = events.withColumn(
            _SEGMENT, F.sum(before).over(by_key.rowsBetween(Window.unboundedPreceding, 0))
        )
    else:
        events = events.withColumn(_GAP_AFTER, F.lit(False)).withColumn(_SEGMENT, F.lit(0))
    return _with_changes(events, source, plan)


def _with_changes(events: DataFrame, source: DataFrame, plan: MergePlan) -> DataFrame:
    """Each key's versions folded in order (Spark's `aggregate`): the ones that changed it."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    fields = [f"'pv', {PARENT_VERSION}", f"'seg', {_SEGMENT}", f"'seed', {_SEED}"]
    fields.append(f"'h', {ROW_HASH}")
    state = ["'seg', CAST(-1 AS BIGINT)", "'h', CAST(NULL AS BIGINT)"]
    newer = "TRUE"
    if plan.sequence_by:
        seq_type = source.schema[plan.sequence_by].dataType.simpleString()
        fields.append(f"'s', {quote(plan.sequence_by)}")
        state.append(f"'s', CAST(NULL AS {seq_type})")
        newer = "(st.s IS NULL OR coalesce(e.s >= st.s, FALSE))"  # an older row never wins
    keep = "'seg', e.seg, 'h', e.h" + (", 's', e.s" if plan.sequence_by else "")
    fold = f"""aggregate(
        array_sort(collect_list(named_struct({", ".join(fields)}))),
        named_struct({", ".join(state)}, 'acc', CAST(array() AS ARRAY<BIGINT>)),
        (st, e) -> CASE
            WHEN e.seed THEN named_struct({keep}, 'acc', st.acc)
            WHEN e.seg != st.seg OR (st.h != e.h AND {newer})
                THEN named_struct({keep}, 'acc', concat(st.acc, array(e.pv)))
            ELSE st END,
        st -> st.acc)"""
    marks = [f"__laketx_k{i}" for i in range(len(plan.keys))]
    summary = events.groupBy(
        *[F.col(quote(k)).alias(m) for k, m in zip(plan.keys, marks, strict=True)]
    ).agg(
        F.expr(fold).alias(_CHANGES),
        F.max(_SEGMENT).alias(_LAST_SEGMENT),
        F.max(_GAP_AFTER).alias(_ANY_GAP),
    )
    on = [F.col(quote(k)).eqNullSafe(F.col(m)) for k, m in zip(plan.keys, marks, strict=True)]
    joined = events.join(summary, reduce(lambda a, b: a & b, on), "inner").drop(*marks)
    return joined.withColumn(
        "__laketx_changed",
        ~F.col(_SEED) & F.array_contains(F.col(_CHANGES), F.col(PARENT_VERSION)),
    )


def latest(source: DataFrame, current: DataFrame, plan: MergePlan) -> DataFrame:
    """merge: per key, the row one-by-one runs would have left, with `APPLY` true where it
    replaces the table's row. Keys that no version changed are left out, except that a
    snapshot dataset keeps (unapplied) every key its latest version holds, so the MERGE does
    not take them for missing."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    events = _events(source, current, plan).where(~F.col(_SEED))
    if plan.delete_missing != DeleteMissing.NONE:
        # only keys the latest version holds stay; a change counts in their final stretch only
        last_seen = F.max(PARENT_VERSION).over(Window.partitionBy(*_keys(plan)))
        events = events.withColumn("__laketx_last_seen", last_seen)
        events = events.where(F.col("__laketx_last_seen") == plan.versions[-1])
        changed = F.col("__laketx_changed") & (F.col(_SEGMENT) == F.col(_LAST_SEGMENT))
    else:
        events = events.where("__laketx_changed")
        changed = F.col("__laketx_changed")
    order = Window.partitionBy(*_keys(plan)).orderBy(changed.desc(), F.col(PARENT_VERSION).desc())
    return (
        events.withColumn(APPLY, changed)
        .withColumn("__rank", F.row_number().over(order))
        .where("__rank = 1")
        .select(*[F.col(quote(c)) for c in source.columns], F.col(APPLY))
    )


def history(
    source: DataFrame, current: DataFrame, plan: MergePlan, table_columns: list[str]
) -> tuple[DataFrame, DataFrame]:
    """scd2: (the history rows to insert, the action on each key's rows in the table).

    `current` is the table's current rows (`plan.current`); `table_columns` are the table's
    columns, for the digest of rows this publication closes.
    """
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    keys = _keys(plan)
    events = _events(source, current, plan)
    segment = Window.partitionBy(*keys, F.col(_SEGMENT))
    events = events.withColumn("__laketx_segment_gap", F.max(_GAP_AFTER).over(segment))
    changes = events.where("__laketx_changed")

    # the table's current row of each key: closed by the key's first change, or by its gap
    in_first = F.col("__laketx_changed") & (F.col(_SEGMENT) == 0)
    summary = events.groupBy(*keys).agg(
        F.max(F.col(_SEED).cast("int")).alias("__has_seed"),
        F.min_by(
            F.when(in_first, F.col(VALID_FROM)), F.when(in_first, F.col(PARENT_VERSION))
        ).alias("__first_change"),
        F.max(F.when(F.col(_SEGMENT) == 0, F.col("__laketx_segment_gap"))).alias("__gap0"),
        F.max(_ANY_GAP).alias(_ANY_GAP),
    )
    hard, soft = (
        plan.delete_missing == DeleteMissing.HARD,
        plan.delete_missing == DeleteMissing.SOFT,
    )
    action = F.when(F.lit(hard) & F.col(_ANY_GAP), F.lit(DELETE))
    action = action.when(F.col("__first_change").isNotNull(), F.lit(CLOSE))
    action = action.when(F.lit(soft) & F.col("__gap0"), F.lit(CLOSE_DELETED))
    close_at = F.coalesce(F.col("__first_change"), F.current_timestamp())
    actions = (
        summary.where("__has_seed = 1")
        .withColumn(ACTION, action)
        .where(F.col(ACTION).isNotNull())
        .select(*keys, F.col(ACTION), close_at.alias(CLOSE_AT))
    )

    # each inserted row is closed by the key's next change, or by the gap after it
    following = F.lead(VALID_FROM).over(segment.orderBy(PARENT_VERSION))
    rows = changes.withColumn("__laketx_next", following)
    closed_by_gap = F.col("__laketx_next").isNull() & F.col("__laketx_segment_gap")
    valid_to = F.when(F.col("__laketx_next").isNotNull(), F.col("__laketx_next")).when(
        closed_by_gap, F.current_timestamp()
    )
    rows = rows.withColumn(VALID_TO, valid_to.cast("timestamp")).withColumn(
        IS_CURRENT, F.col(VALID_TO).isNull()
    )
    if soft:
        rows = rows.withColumn(DELETED_AT, F.when(closed_by_gap, F.col(VALID_TO)))
    if hard:  # a gap deletes every version of the key: only a last, unbroken stretch stays
        rows = rows.where(
            (F.col(_SEGMENT) == F.col(_LAST_SEGMENT)) & ~F.col("__laketx_segment_gap")
        )
    written = [c for c in source.columns if not is_staged_only(c)]
    data = [c for c in written if c != DIGEST_COLUMN]
    absent = [c for c in table_columns if c not in written]
    # the rows this publication closes differ from how they were staged: digest them again
    rows = rows.withColumn(DIGEST_COLUMN, row_digest(data, absent))
    return rows.select(*[F.col(quote(c)) for c in written]), actions
