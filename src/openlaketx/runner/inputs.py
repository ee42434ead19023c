"""The input batch of a dataset step: what is new in the sources for bronze, the parents' new
approved rows for silver and gold.

Both are lazy DataFrames plus a fingerprint that identifies the batch and what the batch takes
from its sources (recorded with it, so the next batch starts where this one ended).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import reduce
from typing import TYPE_CHECKING

from lakeguard.reads.reader import StoreReader
from lakeguard.reads.registry import Registry
from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.records.reach import Reach
from lakeguard.records.sources.progress import Rejection, SourceProgress
from lakeguard.records.sources.records import SourceObjectDef
from lakeguard.records.sqlsafety import vetted_sql
from lakeguard.words.errors import LakeTxError, SourceError, first_line
from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import (
    PARENT_VERSION,
    Layer,
    LoadType,
    RuleType,
    Severity,
    is_bookkeeping,
)
from openlaketx.connect import connect_gap
from openlaketx.loads.staging import landing_folder
from openlaketx.loads.version_read import read_version
from openlaketx.runner.batch import VERSION_COL, InputBatch, without_lineage
from openlaketx.runner.models import model_input
from openlaketx.sources.base import ReadContext
from openlaketx.sources.kinds import engine as source_engine
from openlaketx.sources.layouts import CORRUPT_COLUMN
from openlaketx.sources.reads import SourceRead, require_enabled
from openlaketx.tables import dataset_location

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


def read_source(
    spark: SparkSession,
    registry: Registry,
    obj: SourceObjectDef,
    progress: SourceProgress,
    landing: str,
    run_id: str,
    reach: Reach,
) -> SourceRead:
    """What is new in one source object, read by the engine of its system's kind."""
    system = registry.system(obj.source_system_id)
    require_enabled(system)
    context = ReadContext(run_id=run_id, landing=f"{landing}/{obj.source_object_id}", reach=reach)
    try:
        found = source_engine(system.kind).read(spark, system, obj, progress, context)
    except Exception as exc:
        part = f"reading source object {obj.source_object_id} ({system.kind} source)"
        where = f"source_objects[{obj.source_object_id}]"
        if (refusal := connect_gap(exc, part, where=where)) is not None:
            raise refusal from exc
        raise
    return replace(found, kind=system.kind, system_id=system.source_system_id)


def bronze_input(
    spark: SparkSession,
    registry: Registry,
    dataset: DatasetDef,
    progress: SourceProgress,
    *,
    warehouse: str,
    run_id: str,
    reach: Reach,
) -> InputBatch:
    """Union of what is new in the dataset's source objects, read with their approved schemas."""
    objects = registry.source_objects(dataset.dataset_id)
    if not objects:
        return InputBatch(None, "none", "source", note="no active source object lands here")
    landing = landing_folder(dataset_location(warehouse, dataset.table_name), run_id)
    reads = [read_source(spark, registry, obj, progress, landing, run_id, reach) for obj in objects]
    rejected = [(r.source_object_id, found) for r in reads for found in r.rejected]
    live = [r for r in reads if r.frame is not None]
    if not live:
        notes = "; ".join(r.note for r in reads if r.note)
        return InputBatch(
            None, "none", "source", note=notes or "nothing new in the sources", rejected=rejected
        )
    corrupt = any(r.has_corrupt_column for r in live)
    budget = max(obj.max_malformed_ratio for obj in objects)
    frame = live[0].frame
    assert frame is not None
    for other in live[1:]:
        assert other.frame is not None
        frame = frame.unionByName(other.frame, allowMissingColumns=True)
    rules = []
    if corrupt:
        rules.append(
            CompiledRule(
                rule_id="_malformed_rows",
                rule_type=RuleType.PARSE,
                severity=Severity.FAIL,
                threshold=budget,
                columns=(),
                violation_sql=f"({quote(CORRUPT_COLUMN)} IS NOT NULL)",
                sample_sql=f"substring({quote(CORRUPT_COLUMN)}, 1, 200)",
                asks="every row parses",
            )
        )
    return InputBatch(
        frame,
        "+".join(sorted(r.fingerprint for r in live)),
        "source",
        builtin_rules=rules,
        has_corrupt_column=corrupt,
        checks=[c for r in live for c in r.checks],
        sources=live,
        rejected=rejected,
    )


def derived_input(
    spark: SparkSession,
    registry: Registry,
    dataset: DatasetDef,
    parent_versions: Sequence[ApprovedVersion],
    own_latest: ApprovedVersion | None,
    warehouse: str,
) -> InputBatch:
    """Rows of the parent's approved versions this dataset has not consumed yet (invariant 8).

    `parent_versions` are the parent's approved versions, oldest first, up to the newest this
    batch may take. A batch of several versions is what one-by-one runs would have seen,
    version after version (see loads/catchup.py): every row of each version for append, the
    latest version's for a full load, and for merge and scd2 each version's rows (the last of
    a key within a version, by `sequence_by`) tagged with their parent version.
    """
    parent_id = dataset.parents[0]
    parent = registry.dataset(parent_id)
    consumed = own_latest.upstream_refs.get(parent_id, 0) if own_latest else 0
    new = [v for v in parent_versions if v.version > consumed]
    if not new:
        return InputBatch(
            None, "none", parent.layer, note=f"no new approved version of {parent_id}"
        )
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    load_type = LoadType(dataset.load_type)
    if load_type == LoadType.FULL:
        new = new[-1:]  # a full load is its latest version; earlier ones it replaced anyway
    frame = parent_rows(spark, parent, new, warehouse)
    transform = dataset.transform
    where = f"dataset_registry[{dataset.dataset_id}].transform"
    if transform.filter:
        frame = frame.where(F.expr(vetted_sql(transform.filter, where=f"{where}.filter")))
    if transform.columns:
        frame = frame.select(
            *[
                F.expr(vetted_sql(expr, where=f"{where}.columns.{name}")).alias(name)
                for name, expr in transform.columns.items()
            ],
            F.col(PARENT_VERSION),
        )
    keys = list(dataset.business_keys)
    rules: list[CompiledRule] = []
    if keys and dataset.sequence_by:
        # one SQL expression is one round trip; the Window and Column calls took ~30
        partition = ", ".join(quote(k) for k in [*keys, PARENT_VERSION])
        rank = (
            f"row_number() OVER (PARTITION BY {partition} "
            f"ORDER BY {quote(dataset.sequence_by)} DESC NULLS LAST)"
        )
        frame = frame.withColumn("__rank", F.expr(rank)).where("__rank = 1").drop("__rank")
    elif keys:
        rules.append(
            CompiledRule(
                rule_id="_business_keys_unique",
                rule_type=RuleType.UNIQUE,
                severity=Severity.FAIL,
                threshold=0.0,
                columns=tuple(keys),
                violation_sql=None,
                sample_sql="concat_ws('|', "
                + ", ".join(f"coalesce(CAST({quote(k)} AS STRING), 'NULL')" for k in keys)
                + ")",
                unique_keys=tuple(keys),
                asks=f"({', '.join(keys)}) unique",
            )
        )
    if len(new) == 1:
        frame = frame.drop(PARENT_VERSION)  # one version: an ordinary batch
    last = new[-1].version
    fingerprint = json.dumps({parent_id: [consumed, last]}, sort_keys=True)
    return InputBatch(
        frame,
        fingerprint,
        parent.layer,
        upstream_refs={parent_id: last},
        builtin_rules=rules,
        parent_versions=tuple(v.version for v in new) if len(new) > 1 else (),
        unique_on=tuple(keys) if keys and dataset.sequence_by else (),
    )


def parent_rows(
    spark: SparkSession, parent: DatasetDef, versions: Sequence[ApprovedVersion], warehouse: str
) -> DataFrame:
    """The rows each of `versions` wrote, as they were when it was approved, without the
    parent's lineage columns and with the version in `_laketx_parent_version`.

    An append parent's rows never change once written, so one read of its latest snapshot
    holds every version's rows as they were; any other parent (merge, scd2, full) may have
    rewritten or removed them since, so each version is read at its own snapshot.
    """
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    path = dataset_location(warehouse, parent.table_name)

    def snapshot(at: ApprovedVersion, first: int, last: int) -> DataFrame:
        rows = read_version(spark, path, int(at.snapshot_ref), lineage=(first, last))
        # one SQL condition is one round trip; `Column.between` took one per operand
        return rows.where(f"{quote(VERSION_COL)} BETWEEN {int(first)} AND {int(last)}")

    version = F.col(VERSION_COL)
    if LoadType(parent.load_type) == LoadType.APPEND or len(versions) == 1:
        frames = [snapshot(versions[-1], versions[0].version, versions[-1].version)]
    else:
        frames = [snapshot(v, v.version, v.version) for v in versions]
    frames = [f.withColumn(PARENT_VERSION, version) for f in frames]
    return without_lineage(reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames))


def dataset_input(
    spark: SparkSession,
    reader: StoreReader,
    registry: Registry,
    dataset: DatasetDef,
    *,
    own_latest: ApprovedVersion | None,
    warehouse: str,
    run_id: str,
    reach: Reach,
    parents: Mapping[str, ApprovedVersion | None] | None = None,
    aside: Mapping[str, Sequence[Rejection]] | None = None,
) -> InputBatch:
    """The input of one attempt at `dataset`, by what it is made from: its sources (bronze),
    its SQL model over its parents, or its parent's new versions. `parents` pins each parent
    at a version (a replay); by default each parent's latest approved one. `aside`: files of
    each source object this attempt found unreadable already, left out as rejected ones are."""
    if dataset.layer == Layer.BRONZE:
        progress = reader.versions.source_progress(dataset.dataset_id)
        for source_object_id, found in (aside or {}).items():
            progress = progress.put_aside(source_object_id, found)
        batch = bronze_input(
            spark, registry, dataset, progress, warehouse=warehouse, run_id=run_id, reach=reach
        )
        return without_repeats(spark, batch, own_latest, warehouse, dataset)
    if parents is None:
        parents = {p: reader.versions.approved(p) for p in dataset.parents}
    if dataset.transform.sql is not None:
        return model_input(spark, registry, dataset, dict(parents), own_latest, warehouse, run_id)
    parent = dataset.parents[0]
    upto = parents.get(parent)
    consumed = own_latest.upstream_refs.get(parent, 0) if own_latest else 0
    versions = (
        reader.versions.versions(parent, after=consumed, upto=upto.version)
        if upto is not None
        else []
    )
    return derived_input(spark, registry, dataset, versions, own_latest, warehouse)


def without_repeats(
    spark: SparkSession,
    batch: InputBatch,
    own_latest: ApprovedVersion | None,
    warehouse: str,
    dataset: DatasetDef,
) -> InputBatch:
    """Drop rows a source read again that the dataset already holds (at or above the read's
    lower bound, in its approved snapshot), so each source row lands once: a lookback's
    window, or the granule a coarse watermark parameter starts at. A row is a repeat when
    every data column equals a held row's; an unparseable row never is."""
    windows = [s for s in batch.sources if s.reread_from is not None]
    if batch.frame is None or not windows or own_latest is None:
        return batch
    source = windows[0]  # an incremental source is the only source object of its dataset
    assert source.reread_from is not None
    path = dataset_location(warehouse, dataset.table_name)
    try:
        held = read_version(spark, path, int(own_latest.snapshot_ref))
        frame = _unheld(batch.frame, held, source.reread_from)
    except LakeTxError as exc:
        raise _repeats_error(dataset, source, exc.what) from exc
    except Exception as exc:  # Spark's analysis (a column, a type): said where it belongs
        raise _repeats_error(dataset, source, first_line(exc)) from exc
    return replace(batch, frame=frame)


def _unheld(frame: DataFrame, held: DataFrame, window: tuple[str, str, str]) -> DataFrame:
    """`frame` without the rows `held` has at or above the window's lower bound.

    Compared on the batch's data columns: `_corrupt_record` is staged only (no table has
    it), a column the table lacks (newly declared) is null in every held row, and maps are
    compared as JSON (Spark has no equality on maps)."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F
    from pyspark.sql.types import MapType

    column, lower, kind = window
    table = {c.lower(): c for c in held.columns}
    if column.lower() not in table:
        raise SourceError(
            f"the dataset's table has no column {column}",
            fix="declare the watermark column of the table's rows",
        )
    types = {f.name: f.dataType for f in frame.schema.fields}
    data = [c for c in frame.columns if not is_bookkeeping(c)]

    def comparable(name: str, source: str | None) -> Column:
        value = F.col(quote(source)) if source is not None else F.lit(None).cast(types[name])
        return F.to_json(value) if isinstance(types[name], MapType) else value

    # the held side's columns renamed: both sides descend from no common plan, but one name
    # on both sides of a join condition is ambiguous
    held_rows = held.where(F.col(quote(table[column.lower()])) >= F.lit(lower).cast(kind)).select(
        *[comparable(c, table.get(c.lower())).alias(f"_held_{i}") for i, c in enumerate(data)]
    )
    same = [comparable(c, c).eqNullSafe(F.col(f"_held_{i}")) for i, c in enumerate(data)]
    if CORRUPT_COLUMN in frame.columns:
        same.append(F.col(quote(CORRUPT_COLUMN)).isNull())
    return frame.join(held_rows, on=reduce(lambda a, b: a & b, same), how="left_anti")


def _repeats_error(dataset: DatasetDef, source: SourceRead, why: str) -> SourceError:
    return SourceError(
        f"dataset {dataset.dataset_id}: cannot drop the rows of source object "
        f"{source.source_object_id} that it already holds (read again from "
        f"{source.reread_from[1] if source.reread_from else '?'}): {why}",
        where=f"source_objects[{source.source_object_id}]",
        fix="check that the source object's declared columns match the dataset's table "
        "(laketx explain shows its schema); nothing was promoted",
    )
