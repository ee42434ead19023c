"""The input batch of a dataset step: source files for bronze, the parent's new rows above it.

Both are lazy DataFrames plus a fingerprint that identifies the batch, so a retry of the same
batch can be recognised after a crash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lakeguard.quality.rules import CompiledRule
from lakeguard.sqlsafety import vetted_sql
from lakeguard.store.ddl import quote
from lakeguard.store.records import ApprovedVersion, DatasetDef
from lakeguard.store.registry import Registry
from lakeguard.vocabulary import RuleType, Severity
from openlaketx.sources.files import CORRUPT_COLUMN, read_files
from openlaketx.tables import dataset_location

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

VERSION_COL = "_laketx_version"
RUN_COL = "_laketx_run_id"
LOADED_COL = "_laketx_loaded_at"


@dataclass
class InputBatch:
    frame: DataFrame | None  # None: nothing new to promote
    fingerprint: str
    from_layer: str
    upstream_refs: dict[str, int] = field(default_factory=dict)
    builtin_rules: list[CompiledRule] = field(default_factory=list)
    note: str | None = None
    has_corrupt_column: bool = False


def bronze_input(spark: SparkSession, registry: Registry, dataset: DatasetDef) -> InputBatch:
    """Union of the dataset's source objects, read with their approved schemas."""
    objects = registry.source_objects(dataset.dataset_id)
    if not objects:
        return InputBatch(None, "none", "source", note="no active source object lands here")
    frames, prints, corrupt = [], [], False
    budget = 0.0
    for obj in objects:
        batch = read_files(spark, registry.system(obj.source_system_id), obj)
        frames.append(batch.frame)
        prints.append(batch.fingerprint)
        corrupt = corrupt or batch.has_corrupt_column
        budget = max(budget, obj.max_malformed_ratio)
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other, allowMissingColumns=True)
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
            )
        )
    return InputBatch(
        frame, "+".join(sorted(prints)), "source", builtin_rules=rules, has_corrupt_column=corrupt
    )


def derived_input(
    spark: SparkSession,
    registry: Registry,
    dataset: DatasetDef,
    parent_latest: ApprovedVersion | None,
    own_latest: ApprovedVersion | None,
    warehouse: str,
) -> InputBatch:
    """Rows of the parent's approved versions this dataset has not consumed yet (invariant 8)."""
    parent_id = dataset.parents[0]
    parent = registry.dataset(parent_id)
    consumed = own_latest.upstream_refs.get(parent_id, 0) if own_latest else 0
    if parent_latest is None or parent_latest.version <= consumed:
        return InputBatch(
            None, "none", parent.layer, note=f"no new approved version of {parent_id}"
        )
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    frame = (
        spark.read.format("delta")
        .option("versionAsOf", int(parent_latest.snapshot_ref))
        .load(dataset_location(warehouse, parent.table_name))
        .where(F.col(VERSION_COL) > consumed)
        .where(F.col(VERSION_COL) <= parent_latest.version)
    )
    frame = frame.drop(*[c for c in frame.columns if c.startswith("_laketx_")])
    transform = dataset.transform
    where = f"dataset_registry[{dataset.dataset_id}].transform"
    if transform.filter:
        frame = frame.where(F.expr(vetted_sql(transform.filter, where=f"{where}.filter")))
    if transform.columns:
        frame = frame.select(
            *[
                F.expr(vetted_sql(expr, where=f"{where}.columns.{name}")).alias(name)
                for name, expr in transform.columns.items()
            ]
        )
    keys = list(dataset.business_keys)
    rules: list[CompiledRule] = []
    if keys and dataset.sequence_by:
        window = Window.partitionBy(*[F.col(quote(k)) for k in keys]).orderBy(
            F.col(quote(dataset.sequence_by)).desc_nulls_last()
        )
        frame = (
            frame.withColumn("__rank", F.row_number().over(window))
            .where("__rank = 1")
            .drop("__rank")
        )
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
            )
        )
    fingerprint = json.dumps({parent_id: [consumed, parent_latest.version]}, sort_keys=True)
    return InputBatch(
        frame,
        fingerprint,
        parent.layer,
        upstream_refs={parent_id: parent_latest.version},
        builtin_rules=rules,
    )
