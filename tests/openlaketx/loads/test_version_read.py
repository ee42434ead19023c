"""A table version read as plain Parquet equals Delta's own read of it, and only tables whose
files hold their rows alone are read that way (openlaketx/loads/version_read.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from openlaketx.loads import version_read
from openlaketx.loads.version_read import plain_files, read_version


def _version(rows: list[int], version: int, extra: dict[str, list[Any]] | None = None) -> pa.Table:
    columns: dict[str, list[Any]] = {"id": rows, "_laketx_version": [version] * len(rows)}
    return pa.table({**columns, **(extra or {})})


def test_a_lineage_range_keeps_only_the_files_whose_statistics_overlap_it(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    for v in (1, 2, 3):
        write_deltalake(path, _version([v * 10, v * 10 + 1], v), mode="append")
    every = plain_files(path, 2)
    assert every is not None and len(every.uris) == 3  # the table at Delta version 2
    second = plain_files(path, 2, lineage=(2, 2))
    assert second is not None and len(second.uris) == 1
    newest = plain_files(path, 1, lineage=(2, 3))
    assert newest is not None and len(newest.uris) == 1  # lineage 3 came after Delta version 1
    assert plain_files(path, 2, lineage=(9, 9)) == version_read.PlainFiles([], every.schema)
    assert [f["name"] for f in every.schema["fields"]] == ["id", "_laketx_version"]


def test_partitioned_tables_and_reads_of_many_files_are_left_to_delta(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    partitioned = str(tmp_path / "p")
    write_deltalake(partitioned, _version([1], 1, {"day": ["d1"]}), partition_by=["day"])
    assert plain_files(partitioned, 0) is None  # partition values live in the paths
    many = str(tmp_path / "many")
    for v in (1, 2, 3):
        write_deltalake(many, _version([v], v), mode="append")
    monkeypatch.setattr(version_read, "MAX_FILES", 2)
    assert plain_files(many, 2) is None
    assert plain_files(many, 2, lineage=(3, 3)) is not None


@pytest.mark.spark
def test_a_version_read_as_parquet_equals_the_delta_read(spark: Any, tmp_path: Path) -> None:
    """Older files lack a column added since (null there, as Delta reads it); a later version's
    rows are not in an earlier version's read; a table with deletion vectors is read by Delta
    (its deleted row stays deleted)."""
    path = str(tmp_path / "t")
    write_deltalake(path, _version([1, 2], 1), mode="append")
    write_deltalake(path, _version([3], 2, {"city": ["x"]}), mode="append", schema_mode="merge")
    write_deltalake(path, _version([4], 3, {"city": ["y"]}), mode="append")
    for delta_version, lineage in ((1, None), (1, (2, 2)), (2, (1, 3)), (0, (1, 1))):
        ours = read_version(spark, path, delta_version, lineage)
        theirs = spark.read.format("delta").option("versionAsOf", delta_version).load(path)
        if lineage is not None:
            theirs = theirs.where(theirs["_laketx_version"].between(*lineage))
            ours = ours.where(ours["_laketx_version"].between(*lineage))
        assert ours.schema == theirs.schema
        assert sorted(ours.collect()) == sorted(theirs.collect())
    assert plain_files(path, 2) is not None

    deleted = str(tmp_path / "dv")
    spark.range(4).withColumnRenamed("id", "n").write.format("delta").option(
        "delta.enableDeletionVectors", "true"
    ).save(deleted)
    spark.sql(f"DELETE FROM delta.`{deleted}` WHERE n = 2")
    assert plain_files(deleted, 1) is None
    assert sorted(r.n for r in read_version(spark, deleted, 1).collect()) == [0, 1, 3]
