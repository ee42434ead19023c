"""A small batch merged by delta-rs (`small_merge`) leaves the table exactly as Spark's MERGE
(`strategies.merge`) leaves a copy of it, for upserts and scd2 history, with and without
`sequence_by`, whatever becomes of missing keys (kept, soft-deleted, deleted); its counts of
what would change equal Spark's (`merge_changes`). Stamps of the clock (a soft delete's, an
scd2 version closed for a missing key) are compared as present or absent: each engine takes its
own instant. A catch-up that spans parent versions, folded by Spark, is counted and merged by
delta-rs (`small_catch_up`) as Spark counts and merges the same fold."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from lakeguard.words.vocabulary import DELETED_AT, PARENT_VERSION, DeleteMissing, LoadType
from openlaketx.loads import merge_changes, small_catch_up, small_merge, staging, strategies
from openlaketx.loads.commit import CommitTag
from openlaketx.loads.merge_plan import IS_CURRENT, ROW_HASH, MergePlan

DAY = datetime(2026, 1, 1)
LATER = datetime(2026, 1, 2)
CLOCK = datetime(2026, 6, 1)  # a stamp after this is the clock's (a batch's times are in January)
COLUMNS = f"id BIGINT, name STRING, seq BIGINT, {ROW_HASH} BIGINT"
SCD2 = f"{COLUMNS}, valid_from TIMESTAMP, valid_to TIMESTAMP, {IS_CURRENT} BOOLEAN"
# id, name, seq, row hash: 1 unchanged, 2 changed, 3 older in the batch (sequence_by), 4 not in
# the batch; soft-deleted before: 5 (back in the batch) and 6 (still missing)
TABLE = [(1, "a", 10, 100), (2, "b", 10, 200), (3, "c", 10, 300), (4, "d", 10, 400)]
BATCH = [
    (1, "a", 11, 100),
    (2, "B", 11, 201),
    (3, "C", 9, 301),
    (5, "e", 11, 500),
    (7, "g", 11, 700),
]


def _table(spark: Any, path: str, plan: MergePlan) -> None:
    soft = plan.delete_missing == DeleteMissing.SOFT
    gone = [(5, "e", 8, 500), (6, "f", 8, 600)]
    if plan.scd2:
        rows = [(*r, DAY, None, True) for r in TABLE]
        rows.append((2, "b0", 5, 199, DAY, DAY, False))  # a closed version of key 2
        if soft:
            rows += [(*r, DAY, DAY, False) for r in gone]
        schema = SCD2
    else:
        rows = [*TABLE, *gone] if soft else list(TABLE)
        schema = COLUMNS
    if soft:
        rows = [(*r, DAY if r[0] in (5, 6) else None) for r in rows]
        schema += f", {DELETED_AT} TIMESTAMP"
    spark.createDataFrame(rows, schema).write.format("delta").save(path)


def _staged(
    spark: Any, folder: str, plan: MergePlan, rows: list[tuple[Any, ...]] = BATCH
) -> staging.StagedBatch:
    # start-up time: pyspark loads on first use
    from pyspark.sql import functions as F

    if plan.versions:  # a catch-up: each version's rows, valid from the version's own day
        frame = spark.createDataFrame(rows, f"{COLUMNS}, {PARENT_VERSION} BIGINT")
        effective = F.expr(f"timestamp'2026-01-01' + make_interval(0, 0, 0, {PARENT_VERSION})")
    else:
        frame, effective = spark.createDataFrame(rows, COLUMNS), F.lit(LATER)
    if plan.scd2:
        frame = strategies.with_scd2_columns(frame, effective)
    if plan.delete_missing == DeleteMissing.SOFT:
        frame = frame.withColumn(DELETED_AT, F.lit(None).cast("timestamp"))
    return staging.stage(frame, folder)


def _ids(plans: list[MergePlan]) -> list[str]:
    return [f"{p.load_type}-{p.sequence_by}-{p.delete_missing}" for p in plans]


def _rows(spark: Any, path: str) -> list[tuple[Any, ...]]:
    """The table's rows, each clock stamp (a DELETED_AT, a valid_to after the batch's time)
    as whether it is there."""
    stamped = ("valid_to", DELETED_AT)
    found = []
    for row in spark.read.format("delta").load(path).collect():
        values = row.asDict()
        for name in stamped:
            if name in values and values[name] is not None and values[name] > CLOCK:
                values[name] = "stamped now"
        found.append(tuple(sorted(values.items(), key=lambda kv: kv[0])))
    return sorted(found, key=repr)


# what delta-rs took over from Spark: soft deletes, and scd2 history (upserts that keep or
# delete missing keys were merged by delta-rs before; the suite's runs cover them)
PLANS = [
    MergePlan(load_type=load, keys=["id"], sequence_by=seq, delete_missing=missing)
    for load, seq, missing in [
        (LoadType.MERGE, None, DeleteMissing.SOFT),
        (LoadType.MERGE, "seq", DeleteMissing.SOFT),
        (LoadType.SCD2, None, DeleteMissing.NONE),
        (LoadType.SCD2, "seq", DeleteMissing.NONE),
        (LoadType.SCD2, "seq", DeleteMissing.SOFT),
        (LoadType.SCD2, None, DeleteMissing.HARD),
    ]
]


@pytest.mark.parametrize("plan", PLANS, ids=_ids(PLANS))
def test_delta_rs_merges_a_small_batch_as_spark_does(
    spark: Any, tmp_path: Path, plan: MergePlan
) -> None:
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    _table(spark, ours, plan)
    shutil.copytree(ours, theirs)
    staged = _staged(spark, str(tmp_path / "batch"), plan)
    assert small_merge.applies(plan, staged, ours)

    counted = small_merge.changes(staged, ours, plan)
    rows = staging.staged_rows(spark, staged)
    assert counted == merge_changes.changes(spark, rows, theirs, plan)
    assert counted["inserted"] >= 2 and counted["updated"] >= 1  # keys 7, 5; key 2
    assert (counted["deleted"] > 0) == (plan.delete_missing != DeleteMissing.NONE)  # key 4

    tag = CommitTag("default", "silver_t", "run1", 2, "batch")
    small_merge.merge(staged, ours, tag, plan, drop=frozenset(), may_add=False)
    strategies.merge(spark, staged.folder, theirs, tag, plan)
    assert _rows(spark, ours) == _rows(spark, theirs)


# parent versions 3, 4 and 5 of a catch-up: key 1 unchanged then older (sequence_by), 2 changed
# twice, 3 missing from version 4 and back in 5, 4 missing from every version, 5 back, 7 new
# then changed
CATCH_UP = [
    (1, "a", 11, 100, 3),
    (2, "B", 11, 201, 3),
    (3, "c", 11, 300, 3),
    (5, "e", 11, 500, 3),
    (7, "g", 11, 700, 3),
    (1, "a", 12, 100, 4),
    (2, "B2", 12, 202, 4),
    (5, "e", 12, 500, 4),
    (7, "g", 12, 700, 4),
    (1, "A", 9, 101, 5),
    (2, "B2", 13, 202, 5),
    (3, "C", 13, 301, 5),
    (5, "e", 13, 500, 5),
    (7, "G", 13, 701, 5),
]
CATCH_UP_PLANS = [
    MergePlan(
        load_type=load, keys=["id"], sequence_by=seq, delete_missing=missing, versions=(3, 4, 5)
    )
    for load, seq, missing in [
        (LoadType.MERGE, "seq", DeleteMissing.NONE),
        (LoadType.MERGE, None, DeleteMissing.SOFT),
        (LoadType.MERGE, "seq", DeleteMissing.HARD),
        (LoadType.SCD2, "seq", DeleteMissing.NONE),
        (LoadType.SCD2, None, DeleteMissing.SOFT),
        (LoadType.SCD2, "seq", DeleteMissing.HARD),
    ]
]


def _own_rows_count_nothing(spark: Any, folder: Path, path: str, plan: MergePlan) -> None:
    """A catch-up whose every version repeats the table's rows counts nothing, on both
    engines."""
    same = [(*row, version) for version in plan.versions for row in TABLE]
    staged = _staged(spark, str(folder), plan, same)
    rows = staging.staged_rows(spark, staged)
    fold = small_catch_up.collect(strategies.catch_up_source(spark, rows, path, plan))
    nothing = {"inserted": 0, "updated": 0, "deleted": 0}
    assert small_catch_up.changes(fold, path, plan) == nothing
    assert merge_changes.changes(spark, rows, path, plan) == nothing


@pytest.mark.parametrize("plan", CATCH_UP_PLANS, ids=_ids(CATCH_UP_PLANS))
def test_delta_rs_counts_and_merges_a_small_catch_up_as_spark_does_the_same_fold(
    spark: Any, tmp_path: Path, plan: MergePlan
) -> None:
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    _table(spark, ours, plan)
    shutil.copytree(ours, theirs)
    _own_rows_count_nothing(spark, tmp_path / "same", ours, plan)  # one table for both checks
    staged = _staged(spark, str(tmp_path / "batch"), plan, CATCH_UP)
    assert small_merge.fits(staged, ours) and not small_merge.applies(plan, staged, ours)

    rows = staging.staged_rows(spark, staged)
    fold = small_catch_up.collect(strategies.catch_up_source(spark, rows, ours, plan))
    counted = small_catch_up.changes(fold, ours, plan)
    assert counted == merge_changes.changes(spark, rows, theirs, plan)
    assert counted["inserted"] >= 2  # key 7, key 2's second change
    # key 4, missing: deleted, or softly by scd2, its current version closed (an update)
    soft_scd2 = plan.scd2 and plan.delete_missing == DeleteMissing.SOFT
    deletes = plan.delete_missing != DeleteMissing.NONE and not soft_scd2
    assert (counted["deleted"] > 0) == deletes

    tag = CommitTag("default", "silver_t", "run1", 2, "batch")
    commit = small_catch_up.merge(
        staged, ours, tag, plan, lambda: fold, drop=frozenset(), may_add=False
    )
    strategies.merge(spark, staged.folder, theirs, tag, plan)
    assert _rows(spark, ours) == _rows(spark, theirs)
    assert strategies.rows_written(commit) > 0 and commit.commit_version == 1  # one commit


def test_the_batch_limit_comes_from_the_environment_and_a_bad_one_stops_the_open(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from lakeguard.words.errors import ConfigError
    from openlaketx.cli import app
    from openlaketx.config import SMALL_MERGE_ROWS_VARIABLE, LakehouseConfig

    monkeypatch.delenv(SMALL_MERGE_ROWS_VARIABLE, raising=False)
    assert small_merge.batch_limit() == small_merge.SMALL_BATCH_ROWS
    monkeypatch.setenv(SMALL_MERGE_ROWS_VARIABLE, "0")
    assert small_merge.batch_limit() == 0
    monkeypatch.setenv(SMALL_MERGE_ROWS_VARIABLE, "many")
    with pytest.raises(ConfigError, match="LAKETX_SMALL_MERGE_ROWS='many'"):
        small_merge.batch_limit()
    # refused when the settings are read, before any run (not at the first merge step)
    with pytest.raises(ConfigError, match="LAKETX_SMALL_MERGE_ROWS='many'"):
        LakehouseConfig.from_env(home=tmp_path / "home")
    refused = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "status"])
    assert refused.exit_code == ConfigError.exit_code
    assert "LAKETX_SMALL_MERGE_ROWS='many' is not a number of rows" in refused.output
    assert not (tmp_path / "home").exists()  # nothing was created
