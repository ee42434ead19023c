"""The metadata store on real Spark + Delta: creation, evolution, append-only runtime tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeguard.errors import AppendOnlyViolation, MetadataStoreError
from lakeguard.store import MetadataStore, load_table_defs
from lakeguard.store.definitions import TableKind

pytestmark = pytest.mark.spark


def test_every_table_is_created_and_queryable_by_name(lakehouse: Any) -> None:
    names = {t.name for t in lakehouse.spark.catalog.listTables("lakeguard")}
    assert names == set(load_table_defs())
    assert lakehouse.sql("SELECT * FROM lakeguard.run_history").count() == 0


def test_ensure_is_idempotent_and_keeps_rows(lakehouse: Any) -> None:
    store: MetadataStore = lakehouse.store
    store.append("run_events", [event()])
    assert store.ensure() == []
    assert store.read("run_events").count() == 1


def test_additive_evolution_applies_on_start_without_losing_rows(
    spark: Any, tmp_path: Path
) -> None:
    root = tmp_path / "meta"
    old = root / "run_history"
    spark.sql(
        f"CREATE TABLE delta.`{old}` (run_id STRING NOT NULL, pipeline_logging_id STRING NOT NULL, "
        "tenant_id STRING NOT NULL, dataset_id STRING NOT NULL, layer STRING NOT NULL, "
        "status STRING NOT NULL, start_time TIMESTAMP NOT NULL, end_time TIMESTAMP NOT NULL, "
        "triggered_by STRING NOT NULL, "
        "run_date DATE NOT NULL GENERATED ALWAYS AS (CAST(start_time AS DATE))) "
        "USING DELTA PARTITIONED BY (run_date)"
    )
    spark.sql(
        f"INSERT INTO delta.`{old}` (run_id, pipeline_logging_id, tenant_id, dataset_id, "
        "layer, status, start_time, end_time, triggered_by) VALUES ('r1', 'p', 't', 'd', "
        "'bronze', 'SUCCESS', current_timestamp(), current_timestamp(), 'x')"
    )
    store = MetadataStore(spark, "lg_evolve", str(root), "t")
    changes = store.ensure()
    assert any(
        c.startswith("added") and "run_history" in c and "rows_written" in c for c in changes
    )
    cols = set(store.read("run_history").columns)
    assert {"rows_read", "rows_written", "data_version", "error_message"} <= cols
    assert [r["run_id"] for r in store.read("run_history").collect()] == ["r1"]


def event(status: str = "RUNNING") -> dict[str, Any]:
    from lakeguard.store.store import utcnow

    return {
        "event_id": "e",
        "run_id": "r",
        "pipeline_logging_id": "r",
        "pipeline_id": "p",
        "tenant_id": "default",
        "status": status,
        "event_time": utcnow(),
    }


def test_runtime_tables_offer_no_update_or_delete(lakehouse: Any) -> None:
    """Invariant 3 (and 4): the store API refuses, and Delta itself refuses raw SQL too."""
    store: MetadataStore = lakehouse.store
    store.append("run_events", [event()])
    runtime = [n for n, t in load_table_defs().items() if t.kind is TableKind.APPEND_ONLY]
    for table in runtime:
        with pytest.raises(AppendOnlyViolation):
            store.update(table)
        with pytest.raises(AppendOnlyViolation):
            store.delete(table)
        with pytest.raises(AppendOnlyViolation):
            store.upsert(table, [])
    for sql in (
        "DELETE FROM lakeguard.run_events",
        "UPDATE lakeguard.run_events SET status = 'COMPLETED'",
        "DELETE FROM lakeguard.data_versions",
    ):
        with pytest.raises(Exception, match=r"APPEND_ONLY|append"):
            lakehouse.sql(sql)
    assert store.read("run_events").count() == 1


def test_decisions_and_versions_are_written_by_the_gate_only(lakehouse: Any) -> None:
    with pytest.raises(MetadataStoreError, match="gate only"):
        lakehouse.store.append("data_versions", [{}])
    with pytest.raises(MetadataStoreError, match="gate only"):
        lakehouse.store.append_many({"promotion_status": [{}]})


def test_bad_rows_are_refused_before_anything_is_written(lakehouse: Any) -> None:
    store: MetadataStore = lakehouse.store
    with pytest.raises(MetadataStoreError, match="misses required column 'status'"):
        store.append("run_events", [{**event(), "status": None}])
    with pytest.raises(MetadataStoreError, match="unknown columns"):
        store.append("run_events", [{**event(), "colour": "blue"}])
    assert store.read("run_events").count() == 0


def test_optimize_clusters_runtime_tables_without_changing_rows(lakehouse: Any) -> None:
    store: MetadataStore = lakehouse.store
    for i in range(3):
        store.append("run_events", [{**event(), "event_id": f"e{i}"}])
    assert store.optimize(["run_events"]) == ["run_events"]
    assert sorted(r["event_id"] for r in store.read("run_events").collect()) == ["e0", "e1", "e2"]
    last = lakehouse.sql("DESCRIBE HISTORY lakeguard.run_events LIMIT 1").collect()[0]
    assert last["operation"] == "OPTIMIZE"
    assert "tenant_id" in last["operationParameters"]["zOrderBy"]
