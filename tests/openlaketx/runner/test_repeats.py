"""Rows a source reads again (a lookback, a coarse watermark parameter) that the dataset already
holds are dropped, whatever shape the source's engine gives its rows: http records carry the
staged-only `_corrupt_record` and may hold maps, JDBC's frame may declare a column the table
does not have yet, a Delta source never reads again. Called directly on a small table: the
end-to-end runs are in tests/openlaketx/sources/test_http_feeds.py and
tests/openlaketx/sources/test_jdbc_source.py."""

from __future__ import annotations

from typing import Any

import pytest

from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.words.errors import SourceError
from lakeguard.words.vocabulary import Layer, SourceKindName
from openlaketx.runner.batch import InputBatch
from openlaketx.runner.inputs import without_repeats
from openlaketx.sources.reads import SourceRead

pytestmark = pytest.mark.spark

HELD = [(1, "a", 10, {"k": 1}), (2, "b", 11, {"k": 2}), (3, "c", 5, {"k": 3})]
SCHEMA = "id BIGINT, name STRING, updated BIGINT, tags MAP<STRING, BIGINT>"


@pytest.fixture(scope="module")
def held(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, DatasetDef, Any]:
    """A dataset's table with three rows (the `_laketx_version` the engine adds included)."""
    warehouse = str(tmp_path_factory.mktemp("repeats"))
    dataset = DatasetDef(
        dataset_id="bronze_held",
        dataset_name="bronze_held",
        layer=Layer.BRONZE,
        table_name="bronze.held",
    )
    (
        spark.createDataFrame(HELD, SCHEMA)
        .selectExpr("*", "CAST(1 AS BIGINT) AS _laketx_version")
        .write.format("delta")
        .save(f"{warehouse}/bronze/held")
    )
    approved = ApprovedVersion(
        dataset_id="bronze_held",
        version=1,
        snapshot_ref="0",
        run_id="r1",
        upstream_refs={},
        row_count=3,
    )
    return warehouse, dataset, approved


def batch(frame: Any, kind: SourceKindName, reread: tuple[str, str, str] | None) -> InputBatch:
    read = SourceRead(
        source_object_id="orders_src",
        frame=frame,
        fingerprint="f",
        kind=kind,
        reread_from=reread,
    )
    return InputBatch(frame, "f", "source", sources=[read])


def ids(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(((r["id"], r["name"]) for r in frame.collect()), key=str)


def test_http_rows_with_their_corrupt_column_and_a_map(spark: Any, held: Any) -> None:
    warehouse, dataset, approved = held
    rows = [
        (1, "a", 10, {"k": 1}, None),  # held: dropped
        (2, "b2", 11, {"k": 2}, None),  # same key, new content: kept
        (4, "d", 12, {"k": 4}, None),  # new: kept
        (None, None, None, None, "{not json"),  # unparseable: never a repeat
    ]
    frame = spark.createDataFrame(rows, SCHEMA + ", _corrupt_record STRING")
    out = without_repeats(
        spark,
        batch(frame, SourceKindName.HTTP, ("updated", "8", "bigint")),
        approved,
        warehouse,
        dataset,
    )
    assert out.frame is not None
    assert ids(out.frame) == [(2, "b2"), (4, "d"), (None, None)]


def test_jdbc_rows_that_declare_a_column_the_table_lacks(spark: Any, held: Any) -> None:
    warehouse, dataset, approved = held
    frame = spark.createDataFrame(
        [(1, "a", 10, None), (2, "b", 11, "x@y")],
        "id BIGINT, name STRING, updated BIGINT, email STRING",
    )
    out = without_repeats(
        spark,
        batch(frame, SourceKindName.JDBC, ("updated", "8", "bigint")),
        approved,
        warehouse,
        dataset,
    )
    assert out.frame is not None
    # the table shows the new column as null: row 1 is held, row 2 has an email it lacks
    assert ids(out.frame) == [(2, "b")]


def test_a_delta_read_is_never_read_again_and_goes_through_untouched(spark: Any, held: Any) -> None:
    warehouse, dataset, approved = held
    frame = spark.createDataFrame(HELD, SCHEMA)
    given = batch(frame, SourceKindName.DELTA, None)
    assert without_repeats(spark, given, approved, warehouse, dataset) is given


def test_a_failure_names_the_dataset_and_the_source_object(spark: Any, held: Any) -> None:
    warehouse, dataset, approved = held
    frame = spark.createDataFrame([(1, "a", 10)], "id BIGINT, name STRING, stamp BIGINT")
    with pytest.raises(SourceError) as info:
        without_repeats(
            spark,
            batch(frame, SourceKindName.JDBC, ("stamp", "8", "bigint")),
            approved,
            warehouse,
            dataset,
        )
    said = str(info.value)
    assert "dataset bronze_held" in said and "source object orders_src" in said
    assert "has no column stamp" in said
    assert info.value.where == "source_objects[orders_src]"
