"""The input of a SQL-model dataset: its query over each parent's latest approved snapshot.

Each parent is pinned at the snapshot of its latest *approved* version (never a newer commit)
and shown to the query as a temporary view; the query reaches Spark only as the re-rendering
of its vetted sqlglot tree, with each dataset id replaced by its view. A full refresh recomputes
the whole model; with `refresh_keys`, only the keys the parents' new rows touch are recomputed
(and merged into the table). The version records each parent's version it read.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from lakeguard.reads.registry import Registry
from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.records.sqlsafety import render_query, vet_query
from lakeguard.words.errors import SourceError
from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import Layer
from openlaketx.loads.version_read import read_version
from openlaketx.runner.batch import VERSION_COL, InputBatch, without_lineage
from openlaketx.tables import dataset_location

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def model_input(
    spark: SparkSession,
    registry: Registry,
    dataset: DatasetDef,
    parents_latest: dict[str, ApprovedVersion | None],
    own_latest: ApprovedVersion | None,
    warehouse: str,
    run_id: str,
) -> InputBatch:
    """The model's rows over its parents' approved snapshots (None when nothing is new)."""
    sql = dataset.transform.sql
    assert sql is not None
    parents = list(dataset.parents)
    layers = [Layer(registry.dataset(p).layer) for p in parents]
    from_layer = max(layers, key=lambda layer: layer.rank).value
    consumed = own_latest.upstream_refs if own_latest else {}
    waiting = [p for p in parents if parents_latest.get(p) is None]
    if waiting:
        return InputBatch(
            None, "none", from_layer, note=f"no approved version of {', '.join(waiting)} yet"
        )
    latest = {p: v for p, v in parents_latest.items() if v is not None}
    if all(latest[p].version <= consumed.get(p, 0) for p in parents):
        return InputBatch(None, "none", from_layer, note="no new approved version of the parents")
    where = f"dataset_registry[{dataset.dataset_id}].transform.sql"
    query = vet_query(sql, where=where, datasets=parents)
    snapshots = {p: _snapshot(spark, registry, p, latest[p], warehouse) for p in parents}
    keys = list(dataset.transform.refresh_keys or ())
    if keys and own_latest is not None:
        touched = _touched_keys(snapshots, consumed, keys, dataset.dataset_id)
        snapshots = {p: f.join(touched, on=keys, how="left_semi") for p, f in snapshots.items()}
    views = {}
    for parent, frame in snapshots.items():
        views[parent] = f"laketx_{run_id}_{parent}"
        without_lineage(frame).createOrReplaceTempView(views[parent])
    result = spark.sql(render_query(query, views))
    fingerprint = json.dumps(
        {p: [consumed.get(p, 0), latest[p].version] for p in parents}, sort_keys=True
    )
    return InputBatch(
        result,
        fingerprint,
        from_layer,
        upstream_refs={p: latest[p].version for p in parents},
        views=list(views.values()),
    )


def _snapshot(
    spark: SparkSession, registry: Registry, parent: str, approved: ApprovedVersion, warehouse: str
) -> DataFrame:
    location = dataset_location(warehouse, registry.dataset(parent).table_name)
    return read_version(spark, location, int(approved.snapshot_ref))


def _touched_keys(
    snapshots: dict[str, DataFrame], consumed: dict[str, int], keys: list[str], dataset_id: str
) -> DataFrame:
    """Distinct refresh keys of the parents' rows newer than the versions last consumed."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    touched = None
    for parent, frame in snapshots.items():
        missing = [k for k in keys if k not in frame.columns]
        if missing:
            raise SourceError(
                f"parent {parent} has no refresh key column(s) {', '.join(missing)}",
                where=f"datasets[{dataset_id}].refresh_keys",
                fix="refresh by keys every parent has, or refresh fully",
            )
        new = frame.where(F.col(VERSION_COL) > consumed.get(parent, 0)).select(
            *[F.col(quote(k)) for k in keys]
        )
        touched = new if touched is None else touched.unionByName(new)
    assert touched is not None
    return touched.distinct()
