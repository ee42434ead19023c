"""A SQL model's output schema from one version to the next: what Spark infers about a
query's nullability is not a schema change (pure, then Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.records.schema.drift import ChangeKind, derived_changes, diff
from lakeguard.records.schema.fingerprint import SchemaColumn
from tests.openlaketx.runner.test_sql_models import deliver, document
from tests.support.project import write

# as recorded with a version: the table's columns, which Delta holds nullable
STORED = [
    SchemaColumn("radio", "string", True),
    SchemaColumn("cells", "bigint", True),
    SchemaColumn("cell_sum", "bigint", True),
]
# as Spark reports the query: count(*) never null, sum() may be
QUERY = [
    SchemaColumn("radio", "string", True),
    SchemaColumn("cells", "bigint", False),
    SchemaColumn("cell_sum", "bigint", True),
]


def test_an_aggregate_is_not_a_nullability_change_of_a_derived_dataset() -> None:
    assert [c.kind for c in diff(STORED, QUERY)] == [ChangeKind.NULLABILITY_TIGHTENED]
    assert derived_changes(STORED, QUERY) == []
    assert derived_changes(QUERY, STORED) == []  # a version recorded the query's own way
    # a real change of the table's columns is still found
    retyped = [*QUERY[:2], SchemaColumn("cell_sum", "double", True)]
    added = [*QUERY, SchemaColumn("top", "double", True)]
    assert [c.kind for c in derived_changes(STORED, retyped)] == [ChangeKind.TYPE_WIDENED]
    assert [c.kind for c in derived_changes(STORED, added)] == [ChangeKind.COLUMN_ADDED]
    moved = [QUERY[1], QUERY[0], QUERY[2]]
    assert [c.kind for c in derived_changes(STORED, moved)] == [ChangeKind.ORDER_CHANGED]


@pytest.mark.spark
def test_a_gold_aggregate_refreshed_twice_logs_no_schema_change(
    shared_lakehouse: Any, tmp_path: Path
) -> None:
    lh, s = shared_lakehouse, "_agg"
    model = (
        "SELECT radio, count(*) AS cells, sum(cell) AS cell_sum, max(lat) AS top "
        "FROM silver_cells{s} GROUP BY radio"
    )
    lh.apply(write(tmp_path / "agg.yaml", document(s, model)))
    deliver(tmp_path, "cells", "c1.csv", "radio,cell,lat,updated\nGSM,1,10,1\nLTE,2,20,1\n")
    deliver(tmp_path, "radios", "r1.csv", "radio,generation\nGSM,2G\n")
    assert lh.run(f"radios_job{s}").status == "COMPLETED"
    deliver(tmp_path, "cells", "c2.csv", "radio,cell,lat,updated\nLTE,3,40,2\n")
    second = lh.run(f"radios_job{s}")
    assert second.status == "COMPLETED", second.error

    gold = f"gold_radios{s}"
    reader = StoreReader(lh.store)
    assert [v.version for v in reader.versions.versions(gold)] == [1, 2]
    assert lh.store.rows("schema_change_log", filters=[("dataset_id", "=", gold)]) == []
    step = next(st for st in second.steps if st.dataset_id == gold)
    decision = lh.store.rows("promotion_status", filters=[("run_id", "=", step.run_id)])
    assert decision and "nullability" not in str(decision[0])
    assert reader.status.trust([gold])[gold].stability == 1.0
