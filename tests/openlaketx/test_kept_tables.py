"""A thread keeps the local data tables it opened (`storage.delta_table`) and brings them up to
date: a kept table must never show an older state than a fresh open would, whoever committed
since, and a table made anew where a kept one was must never be mistaken for it."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from lakeguard.records import data_tables
from openlaketx import storage


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


def count(table: DeltaTable) -> int:
    return int(table.to_pyarrow_table().num_rows)


def test_a_kept_table_shows_every_commit_made_since_by_another_writer(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, rows(2))
    first = storage.delta_table(path)
    assert first.version() == 0 and count(first) == 2
    write_deltalake(path, rows(3, 2), mode="append")  # another handle, as another process
    write_deltalake(path, rows(1, 5), mode="append")
    again = storage.delta_table(path)
    assert again is first  # kept, not opened afresh
    assert again.version() == 2 and count(again) == 6
    assert again.version() == DeltaTable(path).version()


def test_a_table_made_anew_where_a_kept_one_was_is_opened_afresh(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, rows(2))
    write_deltalake(path, rows(2, 2), mode="append")
    kept = storage.delta_table(path)
    assert kept.version() == 1
    shutil.rmtree(path)  # dropped, then made again with as many commits and others after
    write_deltalake(path, pa.table({"other": pa.array(["x"])}))
    write_deltalake(path, pa.table({"other": pa.array(["y"])}), mode="append")
    write_deltalake(path, pa.table({"other": pa.array(["z"])}), mode="append")
    fresh = storage.delta_table(path)
    assert fresh is not kept
    assert fresh.schema().fields[0].name == "other"
    assert fresh.version() == 2 and count(fresh) == 3


def test_versions_are_never_kept_and_each_thread_keeps_its_own(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, rows(2))
    write_deltalake(path, rows(1, 2), mode="append")
    old = storage.delta_table(path, 0)
    assert old.version() == 0 and count(old) == 2
    assert storage.delta_table(path, 0) is not old
    mine = storage.delta_table(path)
    theirs: list[DeltaTable] = []
    other = threading.Thread(target=lambda: theirs.append(storage.delta_table(path)))
    other.start()
    other.join()
    assert theirs[0] is not mine and theirs[0].version() == mine.version() == 1
    assert old.version() == 0  # a version asked for stays that version


def test_a_thread_keeps_a_bounded_number_of_tables(tmp_path: Path) -> None:
    paths = [str(tmp_path / f"t{i}") for i in range(data_tables.KEPT_TABLES + 1)]
    for path in paths:
        write_deltalake(path, rows(1))
    first = storage.delta_table(paths[0])
    for path in paths[1:]:
        storage.delta_table(path)
    assert storage.delta_table(paths[0]) is not first  # the least recently used went
    assert storage.delta_table(paths[-1]) is storage.delta_table(paths[-1])
