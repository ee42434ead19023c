"""A small catch-up (a batch that spans parent versions, `catchup.py`) folded by Spark once and
then counted and merged by delta-rs, without a Spark MERGE.

The fold is one Spark query (`strategies.catch_up_source`: every clock stamp in it is one
instant), collected to the driver as Arrow. The novelty check counts what it would change from
those rows (`changes`), and the write merges the same rows into the table (`merge`) with the
clauses of Spark's MERGE of the same source (`strategies._scd1` on `APPLY`,
`strategies._scd2_history`), in one tagged, idempotent commit. Folded once per step: the check
and the write each folding the versions again was most of a small catch-up's time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from lakeguard.words.vocabulary import DELETED_AT, SCD2_COLUMNS, DeleteMissing, is_staged_only
from openlaketx import storage
from openlaketx.loads import staging, strategies
from openlaketx.loads.commit import CommitTag, TaggedCommit
from openlaketx.loads.datafusion_sql import datafusion
from openlaketx.loads.merge_plan import (
    ACTION,
    APPLY,
    CLOSE,
    CLOSE_AT,
    CLOSE_DELETED,
    DELETE,
    MergePlan,
)
from openlaketx.loads.publish import ensure_columns, fields_of
from openlaketx.loads.small_merge import (
    commit_properties,
    counted,
    execute,
    target_schema,
    upsert,
    written_columns,
)
from openlaketx.loads.staging import StagedBatch

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

VALID_TO, IS_CURRENT = SCD2_COLUMNS[1:]


class Folded(Protocol):
    """A catch-up's fold as Spark holds it (a DataFrame, local or through Connect)."""

    def toArrow(self) -> pa.Table: ...


def fold(spark: SparkSession, staged: StagedBatch, path: str, plan: MergePlan) -> pa.Table:
    """The catch-up's fold of the staged batch's good rows against the table at `path`
    (`strategies.catch_up_source`), collected."""
    rows = staging.staged_rows(spark, staged)
    return collect(strategies.catch_up_source(spark, rows, path, plan))


def collect(folded: Folded) -> pa.Table:
    """The fold's rows, in fresh buffers: through Spark Connect, Arrow Java sends an empty
    string array (a `_laketx_failed_rules` list with no rule in it) without offsets, which
    pyarrow accepts and delta-rs's MERGE reads past the end of (a panic, "Join Error")."""
    table = folded.toArrow()
    return table.take(pa.array(range(table.num_rows), pa.int64()))


def changes(rows: pa.Table, path: str, plan: MergePlan) -> dict[str, int]:
    """What the MERGE of the fold's `rows` would insert, update and delete, as Spark counts it
    (`merge_changes.changes`). scd2: the history rows to insert, and the keys the fold closes or
    deletes. merge: the rows that `APPLY`, and the table's live keys the fold lacks (joined by
    DataFusion)."""
    if plan.scd2:
        actions = rows.column(ACTION)
        by_action = {
            r["values"]: r["counts"] for r in pc.value_counts(actions.drop_null()).to_pylist()
        }
        return {
            "inserted": actions.null_count,
            "updated": by_action.get(CLOSE, 0) + by_action.get(CLOSE_DELETED, 0),
            "deleted": by_action.get(DELETE, 0),
        }
    table = storage.delta_table(path)
    keys = _as_table_types(rows.select([*plan.keys, APPLY]), target_schema(table), plan)
    return counted(keys, table, plan, f"s.{APPLY}")


def merge(
    staged: StagedBatch,
    path: str,
    tag: CommitTag,
    plan: MergePlan,
    rows: Callable[[], pa.Table],
    *,
    drop: frozenset[str],
    may_add: bool,
) -> TaggedCommit:
    """The catch-up's fold (its `collect`ed `rows`, asked for once the table has the batch's
    columns) merged into the table in one tagged, idempotent delta-rs commit, with the clauses
    of Spark's MERGE of the same source."""
    table = storage.delta_table(path)  # one open: new columns, the schema, the MERGE
    ensure_columns(path, fields_of(staged.schema, drop), may_add=may_add, table=table)
    written = [c for c in written_columns(staged, drop) if not is_staged_only(c)]
    source = _as_table_types(rows(), target_schema(table), plan)
    values = {c: f's."{c}"' for c in written}
    props = commit_properties(tag)
    if not plan.scd2:
        apply = f's."{APPLY}"'
        merger = upsert(source, table, plan, values, props, changed=apply, insert=apply)
        if plan.delete_missing == DeleteMissing.HARD:
            merger = merger.when_not_matched_by_source_delete()
        return execute(merger, tag, path)
    marks = plan.marks
    action, current = f's."{ACTION}"', f't."{IS_CURRENT}"'
    closed = {IS_CURRENT: "false", VALID_TO: f's."{CLOSE_AT}"'}
    merger = (
        table.merge(
            source,
            predicate=datafusion(plan.on(marks)),
            source_alias="s",
            target_alias="t",
            commit_properties=props,
        )
        .when_matched_delete(predicate=f"{action} = '{DELETE}'")
        .when_matched_update(closed, predicate=f"{action} = '{CLOSE}' AND {current}")
    )
    if plan.delete_missing == DeleteMissing.SOFT:
        merger = merger.when_matched_update(
            {**closed, DELETED_AT: f's."{CLOSE_AT}"'},
            predicate=f"{action} = '{CLOSE_DELETED}' AND {current}",
        )
    merger = merger.when_not_matched_insert(values, predicate=f's."{marks[0]}" IS NULL')
    return execute(merger, tag, path)


def _as_table_types(source: pa.Table, schema: pa.Schema, plan: MergePlan) -> pa.Table:
    """A fold collected from Spark, its columns cast to the table's types (a key's mark to
    the key's, the close stamp to `valid_to`'s); the fold's own columns as they are."""
    like = {m: k for m, k in zip(plan.marks, plan.keys, strict=True)} | {CLOSE_AT: VALID_TO}
    fields = []
    for field in source.schema:
        name = like.get(field.name, field.name)
        kind = schema.field(name).type if name in schema.names else field.type
        fields.append(pa.field(field.name, kind))
    return source.cast(pa.schema(fields))
