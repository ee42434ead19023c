"""The columns the engine adds to a batch before it is staged: what a published row holds.

Shared by the governed step and by replay, so that a rebuilt version is made exactly like the
original: the merge row hash, scd2 validity, the soft-delete marker, each row's broken rules
(a staged flag column per rule, and the list of their ids) and the lineage columns.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lakeguard.records.definitions.records import DatasetDef
from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.evaluate import FAILED_RULES, failed_rules_sql, rule_flag_sql
from lakeguard.words.quoting import quote, sql_string
from lakeguard.words.vocabulary import DELETED_AT, DeleteMissing, LoadType
from openlaketx.loads import strategies
from openlaketx.loads.content import DIGEST_COLUMN, row_digest
from openlaketx.loads.merge_plan import MergePlan
from openlaketx.runner.batch import LOADED_COL, RUN_COL, VERSION_COL

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


def merge_keys(dataset: DatasetDef) -> list[str]:
    """What a merge matches on: business keys, or a SQL model's refresh keys."""
    return list(dataset.business_keys or dataset.transform.refresh_keys or ())


def merge_plan(dataset: DatasetDef, versions: tuple[int, ...] = ()) -> MergePlan:
    """How a merge or scd2 dataset publishes a batch (one spanning parent `versions`)."""
    return MergePlan(
        load_type=LoadType(dataset.load_type),
        keys=merge_keys(dataset),
        sequence_by=dataset.sequence_by,
        delete_missing=dataset.transform.delete_missing,
        versions=versions,
    )


def publishable(
    frame: DataFrame,
    dataset: DatasetDef,
    *,
    version: int,
    run_id: str,
    rules: list[CompiledRule],
    table_columns: Iterable[str] = (),
) -> DataFrame:
    """`frame` with every column the engine adds before staging it as data version `version`
    (the row digest also covers, as nulls, data columns the table has and the batch lacks)."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    load_type = LoadType(dataset.load_type)
    transform = dataset.transform
    if load_type in (LoadType.MERGE, LoadType.SCD2):
        frame = strategies.with_row_hash(frame, merge_keys(dataset), transform.hash_strategy)
    if load_type == LoadType.SCD2:
        frame = strategies.with_scd2_columns(frame, effective_time(frame, dataset))
    if transform.delete_missing == DeleteMissing.SOFT:
        frame = frame.withColumn(DELETED_AT, F.lit(None).cast("timestamp"))
    present = frame.columns
    absent = [c for c in table_columns if c not in present]
    # Two projections, not one per column: each is a round trip and an analysis in the JVM,
    # a fixed cost of every step. Each rule's flag is a column of its own so that the staged
    # footers count it; the list of broken rules is read from the flags, hence after them.
    # Every added column is one SQL expression, a round trip each; built from Column objects
    # they took one per function and operand (~900 for a few rules on a narrow table).
    flags = {name: F.expr(sql) for name, sql in rule_flag_sql(rules)}
    frame = frame.withColumns({DIGEST_COLUMN: row_digest(present, absent), **flags})
    return frame.withColumns(
        {
            FAILED_RULES: F.expr(failed_rules_sql(rules)),
            VERSION_COL: F.expr(f"CAST({int(version)} AS BIGINT)"),
            RUN_COL: F.expr(sql_string(run_id)),
            LOADED_COL: F.expr("current_timestamp()"),
        }
    )


def effective_time(frame: DataFrame, dataset: DatasetDef) -> Column:
    """When a new scd2 version starts: its `sequence_by` time where that is a date or
    timestamp, else the load time (which a replay cannot reproduce)."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    if starts_by_data(frame, dataset):
        return F.col(quote(dataset.sequence_by or ""))
    return F.current_timestamp()


def starts_by_data(frame: DataFrame, dataset: DatasetDef) -> bool:
    """Whether scd2 versions start at a time the data carries (`sequence_by` is a date or
    timestamp column) rather than at load time."""
    seq = dataset.sequence_by
    return bool(seq) and dict(frame.dtypes).get(seq or "") in ("timestamp", "date", "timestamp_ntz")
