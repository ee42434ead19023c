"""What a MERGE would change, counted before it runs (`merge_changes.changes`): a small batch is
checked by a broadcast inner join, and its counts equal the outer join's on every kind of row:
new keys, changed and unchanged rows, a late row (`sequence_by`), a null key, an scd2 table's
closed versions and soft-deleted rows. A batch that changes nothing counts nothing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from lakeguard.words.vocabulary import DELETED_AT, LoadType
from openlaketx.loads import merge_changes
from openlaketx.loads.merge_plan import IS_CURRENT, ROW_HASH, MergePlan

pytestmark = pytest.mark.spark

SCHEMA = f"id BIGINT, seq BIGINT, {ROW_HASH} BIGINT, {IS_CURRENT} BOOLEAN, {DELETED_AT} TIMESTAMP"
TABLE = [
    (1, 10, 100, True, None),  # unchanged by the batch
    (2, 10, 200, True, None),  # changed by the batch
    (3, 10, 300, True, None),  # the batch's row for it is older (sequence_by)
    (4, 10, 400, False, None),  # a closed scd2 version: not current
    (5, 10, 500, True, "2026-01-01 00:00:00"),  # soft-deleted: not live
    (None, 10, 900, True, None),  # a null key
    (6, 10, 600, True, None),  # not in the batch
]


def _both(
    spark: Any, path: str, batch: list[tuple[Any, ...]], plan: MergePlan
) -> list[dict[str, int]]:
    staged = spark.createDataFrame(batch, f"id BIGINT, seq BIGINT, {ROW_HASH} BIGINT")
    outer = merge_changes.changes(spark, staged, path, plan)
    broadcast = merge_changes.changes(spark, staged, path, plan, batch_rows=len(batch))
    return [outer, broadcast]


@pytest.fixture(scope="module")
def table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("novelty") / "t")
    rows = [(*r[:4], None if r[4] is None else datetime.fromisoformat(r[4])) for r in TABLE]
    spark.createDataFrame(rows, SCHEMA).write.format("delta").save(path)
    return path


@pytest.mark.parametrize("load_type", [LoadType.MERGE, LoadType.SCD2])
@pytest.mark.parametrize("sequence_by", [None, "seq"])
def test_a_small_batch_counts_what_the_outer_join_counts(
    spark: Any, table: str, load_type: LoadType, sequence_by: str | None
) -> None:
    plan = MergePlan(load_type=load_type, keys=["id"], sequence_by=sequence_by)
    batch = [
        (1, 11, 100),  # same hash: no change
        (2, 11, 201),  # new hash: an update
        (3, 9, 301),  # new hash but older: an update only without sequence_by
        (4, 11, 400),  # only a closed version (scd2) or a live row (merge) has this key
        (5, 11, 500),  # soft-deleted in the table: comes back as an insert
        (None, 11, 900),  # the null key, same hash
        (7, 11, 700),  # a new key
    ]
    outer, broadcast = _both(spark, table, batch, plan)
    assert broadcast == outer
    assert outer["updated"] >= 1 and outer["inserted"] >= 2  # the rows above did count


def test_a_batch_that_changes_nothing_counts_nothing(spark: Any, table: str) -> None:
    plan = MergePlan(load_type=LoadType.MERGE, keys=["id"], sequence_by="seq")
    outer, broadcast = _both(spark, table, [(1, 10, 100), (6, 12, 600), (3, 9, 999)], plan)
    assert broadcast == outer == {"inserted": 0, "updated": 0, "deleted": 0}


def test_a_big_batch_is_not_broadcast(
    spark: Any, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(merge_changes, "BROADCAST_ROWS", 1)
    seen: list[str] = []
    real = merge_changes._changes_broadcast
    monkeypatch.setattr(
        merge_changes,
        "_changes_broadcast",
        lambda *a, **k: seen.append("broadcast") or real(*a, **k),
    )
    plan = MergePlan(load_type=LoadType.MERGE, keys=["id"])
    outer, over_the_bound = _both(spark, table, [(1, 10, 100), (7, 11, 700)], plan)
    assert over_the_bound == outer and seen == []
    monkeypatch.setattr(merge_changes, "BROADCAST_ROWS", 2)
    _both(spark, table, [(1, 10, 100), (7, 11, 700)], plan)
    assert seen == ["broadcast"]
