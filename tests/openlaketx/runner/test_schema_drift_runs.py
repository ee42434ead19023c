"""Each drift kind through each shipped profile, on real runs: the decision, the
schema_change_log rows, and the table's schema after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from lakeguard.records.sources.rows import SourceColumnRow
from openlaketx.tables import dataset_location
from tests.support.project import assert_sound, write

pytestmark = pytest.mark.spark

BASE_HEADER = "id,name,amount"
CSV_DRIFT = {
    "column_added": ("id,name,amount,city", "1,Ada,10,Oslo"),
    "column_dropped": ("id,name", "1,Ada"),
    "column_renamed": ("id,full_name,amount", "1,Ada,10"),
    "order_changed": ("name,id,amount", "Ada,1,10"),
}
# profile -> kind -> (expected decision, whether the batch is promoted)
EXPECTED = {
    "strict": dict.fromkeys(
        [
            "column_added",
            "column_dropped",
            "column_renamed",
            "order_changed",
            "type_narrowed",
            "type_changed",
            "type_widened",
        ],
        "BLOCK",
    ),
    "additive": {
        "column_added": "ALLOW",
        "column_dropped": "BLOCK",
        "column_renamed": "BLOCK",
        "order_changed": "ALLOW",
        "type_narrowed": "BLOCK",
        "type_changed": "BLOCK",
        "type_widened": "ALLOW",
    },
    "permissive": {
        "column_added": "ALLOW",
        "column_dropped": "ALERT",
        "column_renamed": "ALERT",
        "order_changed": "ALLOW",
        "type_narrowed": "BLOCK",
        "type_changed": "BLOCK",
        "type_widened": "ALLOW",
    },
}


def document(s: str, fmt: str, profile: str) -> str:
    options = '{header: "true"}' if fmt == "csv" else "{}"
    return f"""
source_systems:
  - {{id: drops{s}, options: {{root: drops}}}}
source_objects:
  - id: obj{s}
    system: drops{s}
    locator: "in/*.{fmt}"
    format: {fmt}
    options: {options}
    dataset: bronze_drift{s}
    schema_profile: {profile}
    columns: [{{name: id, type: bigint}}, {{name: name}}, {{name: amount, type: int}}]
datasets:
  - {{id: bronze_drift{s}, layer: bronze}}
"""


def parquet(path: Path, amount: pa.DataType, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {"id": pa.array([1], pa.int64()), "name": ["Ada"], "amount": pa.array([value], amount)}
    )
    pq.write_table(table, path)


def log(lh: Any, run_id: str) -> list[tuple[str, str]]:
    rows = lh.store.rows("schema_change_log", filters=[("run_id", "=", run_id)])
    return sorted((r["change_kind"], r["decision"]) for r in rows)


def table_columns(lh: Any, s: str) -> list[str] | None:
    path = dataset_location(lh.warehouse, f"bronze.bronze_drift{s}")
    if not DeltaTable.is_deltatable(path):
        return None
    fields = json.loads(DeltaTable(path).schema().to_json())["fields"]
    return [f["name"] for f in fields if not f["name"].startswith("_")]


@pytest.mark.parametrize("profile", ["strict", "additive", "permissive"])
@pytest.mark.parametrize("kind", [*CSV_DRIFT, "type_narrowed", "type_changed", "type_widened"])
def test_drift_kind_under_profile(
    shared_lakehouse: Any, tmp_path: Path, profile: str, kind: str
) -> None:
    lh = shared_lakehouse
    s = f"_{profile[:3]}_{kind.replace('_', '')[:10]}"
    fmt = "csv" if kind in CSV_DRIFT else "parquet"
    lh.apply(write(tmp_path / "drift.yaml", document(s, fmt, profile)))
    folder = tmp_path / "drops" / "in"
    if kind != "type_widened":  # a first delivery as approved, to drift from
        if fmt == "csv":
            write(folder / "a.csv", f"{BASE_HEADER}\n1,Ada,10\n")
        else:
            parquet(folder / "a.parquet", pa.int32(), 10)
        first = lh.run(f"bronze_drift{s}")
        assert first.status == "COMPLETED", first.error
    before = table_columns(lh, s)
    if fmt == "csv":
        header, row = CSV_DRIFT[kind]
        write(folder / "b.csv", f"{header}\n{row}\n")
    else:
        amount = {
            "type_narrowed": (pa.int16(), 7),
            "type_changed": (pa.string(), "7"),
            "type_widened": (pa.int64(), 7),
        }[kind]
        parquet(folder / "b.parquet", *amount)
    drifted = lh.run(f"bronze_drift{s}")
    expected = EXPECTED[profile][kind]
    step = drifted.steps[0]
    assert (step.status == "BLOCKED") == (expected == "BLOCK"), step.reason
    assert log(lh, step.run_id) == [(kind, expected)]
    explained = lh.explain(f"bronze_drift{s}", step.run_id)
    assert [(c.change_kind, c.decision) for c in explained.schema_changes] == [(kind, expected)]
    assert bool(explained.advice) == (expected == "BLOCK")
    columns = table_columns(lh, s)
    if expected == "BLOCK":
        assert columns == before  # schema and table untouched (or still absent)
    elif kind == "column_added":
        assert columns == ["id", "name", "amount", "city"]
    elif kind == "column_renamed":
        assert columns == ["id", "name", "amount", "full_name"]
    elif kind == "type_widened":
        types = {
            f["name"]: f["type"]
            for f in json.loads(
                DeltaTable(dataset_location(lh.warehouse, f"bronze.bronze_drift{s}"))
                .schema()
                .to_json()
            )["fields"]
        }
        assert types["amount"] == "long"
    else:
        assert columns == before
    if expected != "BLOCK":  # the approved schema evolved with the promotion
        declared = lh.store.definitions(SourceColumnRow, [("source_object_id", "=", f"obj{s}")])
        names = {c.column_name for c in declared}
        if kind == "column_added":
            assert "city" in names
        if kind == "column_dropped":
            assert "amount" not in names
        if kind == "type_widened":
            assert {c.column_name: c.data_type for c in declared}["amount"] == "bigint"
    assert_sound(lh, f"bronze_drift{s}")


def test_an_unknown_profile_is_refused_at_validate(tmp_path: Path) -> None:
    from lakeguard.rules.catalog.loader import load_file
    from lakeguard.words.errors import ValidationError

    with pytest.raises(ValidationError) as info:
        load_file(write(tmp_path / "bad.yaml", document("_x", "csv", "lenient")))
    assert "source_objects[0].schema_profile (line" in str(info.value)
    assert "unknown schema profile 'lenient'" in str(info.value)
