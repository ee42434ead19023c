"""A small batch merged by delta-rs, without a Spark MERGE: the novelty check and the MERGE.

A Spark MERGE of a few rows costs seconds on a warm session: a Delta snapshot to reconstruct,
a source to materialize, files to scan, each a Spark job. For a small batch into a table that
is not large, delta-rs (DataFusion, in this process) does the same MERGE in milliseconds, with
the same conditions: `MergePlan.on()` and `changed()` are written once, in Spark's SQL, and
rendered for DataFusion by sqlglot. The commit carries the same tag and application
transaction as any other promotion commit.

It applies to a merge or scd2 batch, whatever becomes of missing keys (a soft delete stamps
DataFusion's `now()`, one instant per commit as Spark's `current_timestamp()` is). A catch-up
that spans parent versions is folded by Spark first and the fold merged by delta-rs
(`small_catch_up.py`). Everything larger stays with Spark's MERGE (`strategies.py`), which a
replay's rebuild also runs, so each version merged here is checked against Spark's MERGE of
the same batch. `LAKETX_SMALL_MERGE_ROWS` sets the batch size up to which delta-rs merges
(0: Spark merges every batch).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, QueryBuilder, Transaction, write_deltalake
from deltalake.exceptions import CommitFailedError

from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import (
    DELETED_AT,
    PARENT_VERSION,
    SCD2_COLUMNS,
    DeleteMissing,
    is_staged_only,
)
from openlaketx import storage
from openlaketx.config import small_merge_rows
from openlaketx.loads.commit import CommitTag, TaggedCommit, committed, conflict
from openlaketx.loads.datafusion_sql import datafusion
from openlaketx.loads.merge_plan import (
    ROW_HASH,
    MergePlan,
)
from openlaketx.loads.publish import ensure_columns, fields_of
from openlaketx.loads.staging import StagedBatch

VALID_FROM, VALID_TO, IS_CURRENT = SCD2_COLUMNS
_ROW = "__laketx_row"  # a batch row's index, to pick the scd2 rows to insert

# Batches and tables small enough that one process merges them faster than a Spark job starts.
SMALL_BATCH_ROWS = 100_000
SMALL_TABLE_ROWS = 1_000_000


def _table_rows(path: str) -> int | None:
    """Rows in the table from its add actions' statistics (None: a file has none)."""
    actions = pa.table(storage.delta_table(path).get_add_actions(flatten=True))
    if actions.num_rows == 0:
        return 0
    counts = actions.column("num_records")
    return None if counts.null_count else int(pa.compute.sum(counts).as_py() or 0)


def batch_limit() -> int:
    """The most batch rows delta-rs merges: `LAKETX_SMALL_MERGE_ROWS`, else
    `SMALL_BATCH_ROWS`."""
    rows = small_merge_rows()
    return SMALL_BATCH_ROWS if rows is None else rows


def fits(staged: StagedBatch, path: str) -> bool:
    """Whether the batch and the table are small enough for delta-rs (see the module's
    docstring), whatever the batch spans."""
    limit = batch_limit()
    if limit <= 0 or staged.good_rows > limit:
        return False
    rows = _table_rows(path) if storage.is_delta_table(path) else 0
    return rows is not None and rows <= SMALL_TABLE_ROWS


def spans_versions(plan: MergePlan, staged: StagedBatch) -> bool:
    """Whether the batch is a catch-up of several parent versions (`catchup.py`)."""
    return bool(plan.versions) or any(f["name"] == PARENT_VERSION for f in staged.schema["fields"])


def applies(plan: MergePlan, staged: StagedBatch, path: str) -> bool:
    """Whether this batch, which spans one version, is merged and counted by delta-rs."""
    return not spans_versions(plan, staged) and fits(staged, path)


def written_columns(staged: StagedBatch, drop: frozenset[str]) -> list[str]:
    return [f["name"] for f in fields_of(staged.schema, drop)]


def _source(staged: StagedBatch, columns: Sequence[str], schema: pa.Schema) -> pa.Table:
    """The batch's good rows, its `columns` cast to the table's types (Spark writes
    timestamps as INT96, which pyarrow reads in nanoseconds)."""
    parts = [storage.read_parquet(f.path, list(columns)) for f in staged.good]
    table = pa.concat_tables(parts) if parts else pa.table({c: [] for c in columns})
    want = pa.schema([schema.field(c) for c in columns])
    return table.select(list(columns)).cast(want)


def target_schema(table: DeltaTable) -> pa.Schema:
    return pa.schema(table.schema().to_arrow())


def live_rows(plan: MergePlan, schema: pa.Schema, columns: Sequence[str]) -> str:
    """The table's live rows (current versions, not soft-deleted) as a subquery of Spark SQL
    over the registered table `target`: `columns` of them, a soft-delete stamp the table does
    not have yet as null."""
    names = set(schema.names)
    cols = [
        quote(c) if c in names else f"CAST(NULL AS TIMESTAMP) AS {quote(c)}"
        for c in dict.fromkeys(columns)
    ]
    where = [quote(IS_CURRENT)] if plan.scd2 else []
    if DELETED_AT in names:
        where.append(f"{quote(DELETED_AT)} IS NULL")
    condition = f" WHERE {' AND '.join(where)}" if where else ""
    return f"(SELECT {', '.join(cols)} FROM target{condition})"


def joined(source: pa.Table, table: DeltaTable, sql: str) -> list[dict[str, object]]:
    """`sql` (Spark's dialect) over the batch's columns `source` as `s` and the table as
    `target`, run by DataFusion (it joins registered Delta tables: the batch becomes a
    scratch one)."""
    scratch = tempfile.mkdtemp(prefix="laketx-novelty-")
    try:
        write_deltalake(scratch, source)
        query = QueryBuilder().register("s", DeltaTable(scratch))
        query = query.register("target", table)
        rows: list[dict[str, object]] = pa.table(
            query.execute(datafusion(sql)).read_all()
        ).to_pylist()
        return rows
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def changes(staged: StagedBatch, path: str, plan: MergePlan) -> dict[str, int]:
    """What the MERGE would insert, update and delete: keys, row hashes (and `sequence_by`)
    of the batch joined by DataFusion with the table's live rows, with the plan's own
    conditions."""
    extra = [plan.sequence_by] if plan.sequence_by else []
    kept = [*plan.keys, ROW_HASH, *extra]
    table = storage.delta_table(path)  # one open for the schema and the join
    source = _source(staged, kept, target_schema(table))
    return counted(source, table, plan, plan.changed())


def counted(source: pa.Table, table: DeltaTable, plan: MergePlan, changed: str) -> dict[str, int]:
    """`MergePlan.counts` of `source` (the batch's keys and what `changed`, Spark's SQL over
    `s` and `t`, reads) joined by DataFusion with the table's live rows."""
    extra = [plan.sequence_by] if plan.sequence_by else []
    kept = [*plan.keys, ROW_HASH, *extra]
    live = [*kept, DELETED_AT] if plan.delete_missing == DeleteMissing.SOFT else kept
    first = quote(plan.keys[0])
    schema = target_schema(table)
    (found,) = joined(
        source,
        table,
        f"SELECT "
        f"sum(CASE WHEN t.{first} IS NULL THEN 1 ELSE 0 END) AS inserted, "
        f"sum(CASE WHEN s.{first} IS NOT NULL AND t.{first} IS NOT NULL "
        f"AND ({changed}) THEN 1 ELSE 0 END) AS updated, "
        f"sum(CASE WHEN s.{first} IS NULL THEN 1 ELSE 0 END) AS missing "
        f"FROM s FULL OUTER JOIN {live_rows(plan, schema, live)} AS t ON {plan.on()}",
    )
    return plan.counts(found)


def commit_properties(tag: CommitTag) -> CommitProperties:
    return CommitProperties(
        custom_metadata={"userMetadata": tag.user_metadata()},
        app_transactions=[Transaction(tag.app_id, tag.data_version)],
    )


def execute(merger: Any, tag: CommitTag, path: str) -> TaggedCommit:
    try:
        merger.execute()
    except CommitFailedError as exc:
        raise conflict(tag, path) from exc
    return committed(path, tag)


def merge(
    staged: StagedBatch,
    path: str,
    tag: CommitTag,
    plan: MergePlan,
    *,
    drop: frozenset[str],
    may_add: bool,
) -> TaggedCommit:
    """The batch merged into the table by `plan` in one tagged, idempotent delta-rs commit,
    with the clauses of Spark's MERGE (`strategies._scd1`, `strategies._scd2`)."""
    table = storage.delta_table(path)  # one open: new columns, the schema, the MERGE
    ensure_columns(path, fields_of(staged.schema, drop), may_add=may_add, table=table)
    written = [c for c in written_columns(staged, drop) if not is_staged_only(c)]
    schema = target_schema(table)
    source = _source(staged, written, schema)
    values = {c: f's."{c}"' for c in written}  # names are plain identifiers (ColumnName)
    props = commit_properties(tag)
    soft = plan.delete_missing == DeleteMissing.SOFT
    if plan.scd2:
        marks = plan.marks
        history = plan.history
        merger = (
            table.merge(
                _scd2_source(source, table, plan, schema, marks),
                predicate=datafusion(plan.on(marks)),
                source_alias="s",
                target_alias="t",
                commit_properties=props,
            )
            .when_matched_update(
                {IS_CURRENT: "false", VALID_TO: f's."{VALID_FROM}"'},
                predicate=datafusion(f"t.{quote(IS_CURRENT)} AND ({history.changed()})"),
            )
            .when_not_matched_insert(values, predicate=f"s.{marks[0]} IS NULL")
        )
        if soft:
            merger = merger.when_not_matched_by_source_update(
                {IS_CURRENT: "false", VALID_TO: "now()", DELETED_AT: "now()"},
                predicate=f't."{IS_CURRENT}"',
            )
    else:
        merger = upsert(source, table, plan, values, props, changed=datafusion(plan.changed()))
    if plan.delete_missing == DeleteMissing.HARD:
        merger = merger.when_not_matched_by_source_delete()
    return execute(merger, tag, path)


def upsert(
    source: pa.Table,
    table: DeltaTable,
    plan: MergePlan,
    values: dict[str, str],
    props: CommitProperties,
    *,
    changed: str,
    insert: str | None = None,
) -> Any:
    """merge: a row replaces its key's where `changed`, a new key is inserted (where
    `insert`), a missing key is marked deleted (once; one that comes back is not)."""
    merger = (
        table.merge(
            source,
            predicate=datafusion(plan.on()),
            source_alias="s",
            target_alias="t",
            commit_properties=props,
        )
        .when_matched_update(values, predicate=changed)
        .when_not_matched_insert(values, predicate=insert)
    )
    if plan.delete_missing == DeleteMissing.SOFT:
        merger = merger.when_not_matched_by_source_update(
            {DELETED_AT: "now()"}, predicate=f't."{DELETED_AT}" IS NULL'
        )
    return merger


def _index(value: object) -> int:
    """A batch row's index as the join answers it (an int64 column)."""
    if not isinstance(value, int):
        raise TypeError(f"a row index is an int, not {value!r}")
    return value


def _scd2_source(
    source: pa.Table, table: DeltaTable, plan: MergePlan, schema: pa.Schema, marks: list[str]
) -> pa.Table:
    """The scd2 MERGE's source, as Spark's (`strategies._scd2`): every batch row keyed by its
    business keys in `marks` (to close changed versions and to find missing keys) and, with
    null marks that match nothing, the rows to insert: new keys, changed keys, keys that come
    back after a delete (the table's live rows decide, joined by DataFusion)."""
    history = plan.history
    extra = [plan.sequence_by] if plan.sequence_by else []
    kept = [*plan.keys, ROW_HASH, *extra]
    indexed = source.select(kept).append_column(_ROW, pa.array(range(source.num_rows), pa.int64()))
    first = quote(plan.keys[0])
    picked = joined(
        indexed,
        table,
        f"SELECT s.{_ROW} FROM s LEFT JOIN {live_rows(plan, schema, kept)} AS t ON {history.on()} "
        f"WHERE t.{first} IS NULL OR ({history.changed()})",
    )
    inserts = source.take(pa.array(sorted(_index(r[_ROW]) for r in picked), pa.int64()))
    keyed, fresh = source, inserts
    for key, mark in zip(plan.keys, marks, strict=True):
        keyed = keyed.append_column(mark, source.column(key))
        fresh = fresh.append_column(mark, pa.nulls(inserts.num_rows, source.schema.field(key).type))
    return pa.concat_tables([keyed, fresh])
