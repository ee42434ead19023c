"""JSON files as real feeds write them: numbers sent as strings typed by the declared schema,
a value that does not parse naming its field, nested columns, and fields the document does
not declare seen as drift from the first lines of each file (gzip included), without Spark."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from openlaketx.sources.json_records import sampled_fields
from tests.support.project import assert_sound, write

DOC = """
source_systems:
  - {{id: drop{s}, options: {{root: feed}}}}
source_objects:
  - id: readings{s}
    system: drop{s}
    locator: "incoming/*.json*"
    format: json
    max_malformed_ratio: 0.5
    dataset: bronze_readings{s}
    columns:
      - {{name: id, type: bigint}}
      - {{name: year, type: int}}
      - {{name: ok, type: boolean}}
      - {{name: where, type: "struct<lat:double,lon:double>"}}
datasets:
  - {{id: bronze_readings{s}, layer: bronze}}
"""


def lines(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def test_sampled_fields_read_the_first_lines_only(tmp_path: Path) -> None:
    plain = write(tmp_path / "a.json", lines({"id": 1, "b": 2}, {"c": 3}) + "not json\n")
    packed = tmp_path / "b.json.gz"
    packed.write_bytes(gzip.compress(lines({"id": 1, "z": {"q": 1}}).encode()))
    assert sampled_fields([str(plain), f"file:{packed}"], {}) == ["id", "b", "c", "z"]
    assert sampled_fields([str(plain)], {"multiLine": "true"}) == []  # only a parse could tell


@pytest.mark.spark
def test_a_json_file_is_typed_named_and_its_new_fields_are_drift(
    shared_lakehouse: Any, tmp_path: Path
) -> None:
    lh, s = shared_lakehouse, "_jsonfiles"
    doc = write(tmp_path / "d.yaml", DOC.format(s=s))
    incoming = tmp_path / "feed" / "incoming"
    write(
        incoming / "a.json",
        lines(
            {"id": "1", "year": "2013", "ok": "true", "where": {"lat": 1.5, "lon": 2.5}},
            {"id": 2, "year": 2014, "ok": False, "where": None, "note": "new"},
            {"id": 3, "year": "MMXV", "ok": True},
        ),
    )
    (incoming / "b.json.gz").write_bytes(gzip.compress(lines({"id": 4, "source": "x"}).encode()))
    lh.apply(doc)
    result = lh.run(f"bronze_readings{s}")
    assert result.status == "COMPLETED", result.error
    frame = lh.read(f"bronze_readings{s}")
    types = dict(frame.dtypes)
    assert types["year"] == "int" and types["ok"] == "boolean"
    assert types["where"] == "struct<lat:double,lon:double>"
    assert types["note"] == "string" and types["source"] == "string"  # drift, allowed
    got = sorted((r["id"], r["year"], r["ok"], r["note"], r["source"]) for r in frame.collect())
    assert got == [
        (1, 2013, True, None, None),
        (2, 2014, False, "new", None),
        (4, None, None, None, "x"),
    ]
    bad = lh.sql(f"SELECT _corrupt_record FROM quarantine.bronze_readings{s}").first()
    assert bad is not None and bad[0].startswith("year: expected int, got string 'MMXV' | ")
    logged = lh.store.rows(
        "schema_change_log", filters=[("dataset_id", "=", f"bronze_readings{s}")]
    )
    assert sorted((r["column_name"], r["change_kind"]) for r in logged) == [
        ("note", "column_added"),
        ("source", "column_added"),
    ]
    assert_sound(lh, f"bronze_readings{s}")
