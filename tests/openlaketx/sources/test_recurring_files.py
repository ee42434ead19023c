"""File sources on a schedule: every file exactly once, changed files decided, archives, and a
file that cannot be read put aside while the rest of its delivery is promoted."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.records.sources.kinds.file import SeenFile
from lakeguard.records.sources.progress_rows import RejectedFileRow
from openlaketx.runner.news import nothing_new
from openlaketx.sources import files
from openlaketx.sources.kinds import engine
from tests.support.project import Project, assert_sound, write

pytestmark = pytest.mark.spark

D1 = ["GSM,1,10.5,100", "LTE,2,20.5,100"]
D2 = ["LTE,2,21.0,200", "GSM,3,5.0,200"]


def versions(lh: Any, dataset: str) -> list[int]:
    return [v.version for v in StoreReader(lh.store).versions.versions(dataset)]


def test_each_file_is_ingested_once_and_a_run_without_news_is_a_no_op(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.add("d1.csv", D1)
    assert lh.run(p.job).status == "COMPLETED"
    again = lh.run(p.job)  # nothing new: no version, no decision, no duplicate
    assert again.status == "COMPLETED"
    assert all(s.data_version is None for s in again.steps)
    assert "no new file" in (again.steps[0].reason or "")
    assert versions(lh, p.bronze) == [1] and versions(lh, p.silver) == [1]

    p.add("d2.csv", D2)  # d1 is still there: only d2 is read
    assert lh.run(p.job).status == "COMPLETED"
    assert lh.read(p.bronze).count() == 4
    assert sorted(
        (r["cell"], r["lat"]) for r in lh.read(p.silver).select("cell", "lat").collect()
    ) == [(1, 10.5), (2, 21.0), (3, 5.0)]
    taken = (
        StoreReader(lh.store)
        .versions.source_progress(p.bronze)
        .of(f"cells{p.suffix}_csv", SeenFile)
    )
    assert sorted(Path(f).name for f in taken) == ["d1.csv", "d2.csv"]
    assert (p.incoming / "d1.csv").exists()  # delivered files are never moved or deleted
    assert_sound(lh, p.bronze, p.silver)


def test_a_file_that_comes_back_changed_blocks_or_reloads_as_declared(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    first = p.add("d1.csv", D1)
    assert lh.run(p.bronze).status == "COMPLETED"
    write(first, "radio,cell,lat,updated\nGSM,9,1.0,300\n")
    os.utime(first, (1_900_000_000, 1_900_000_000))
    blocked = lh.run(p.bronze)
    assert blocked.status == "BLOCKED"
    assert "came back with other content (d1.csv)" in (blocked.steps[0].reason or "")
    assert lh.read(p.bronze).count() == 2 and versions(lh, p.bronze) == [1]

    reload = p.yaml.read_text().replace(
        'locator: "incoming/*.csv"', 'locator: "incoming/*.csv"\n    on_changed_file: reload'
    )
    p.yaml.write_text(reload)
    lh.apply(p.yaml)
    again = lh.run(p.bronze)
    assert again.status == "COMPLETED", again.error
    assert lh.read(p.bronze).count() == 3 and versions(lh, p.bronze) == [1, 2]
    assert_sound(lh, p.bronze)


def test_ingested_files_move_to_the_archive_when_asked(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    p.yaml.write_text(
        p.yaml.read_text().replace(
            'locator: "incoming/*.csv"', 'locator: "incoming/*.csv"\n    archive: archive'
        )
    )
    lh.apply(p.yaml)
    p.add("d1.csv", D1)
    assert lh.run(p.bronze).status == "COMPLETED"
    assert not (p.incoming / "d1.csv").exists()
    assert (p.yaml.parent / "feed" / "archive" / "d1.csv").exists()
    p.add("bad.csv", ["GSM,7,95.0,1"])  # a FAIL rule: blocked files stay where they are
    assert lh.run(p.bronze).status == "BLOCKED"
    assert (p.incoming / "bad.csv").exists()
    assert lh.run(p.bronze).status == "BLOCKED"  # and are tried again, not lost
    assert_sound(lh, p.bronze)


def test_a_file_that_vanishes_between_listing_and_reading_loses_nothing(
    shared_lakehouse: Any, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.add("d1.csv", D1)
    real = files.list_files

    def list_then_lose_one(*args: Any, **kwargs: Any) -> Any:
        listed = real(*args, **kwargs)
        (p.incoming / "d1.csv").unlink()
        return listed

    monkeypatch.setattr(files, "list_files", list_then_lose_one)
    result = lh.run(p.bronze)
    assert result.status == "FAILED"
    assert "vanished between listing and reading" in (result.error or "")
    assert versions(lh, p.bronze) == []
    assert StoreReader(lh.store).versions.source_progress(p.bronze).marks == {}


# -- files that cannot be read ------------------------------------------------------------
def cells(i: int) -> list[str]:
    """File `i`'s rows: two cells of its own."""
    return [f"GSM,{i * 10 + 1},{i}.5,{i}", f"LTE,{i * 10 + 2},{i}.25,{i}"]


def expected(*numbers: int) -> list[tuple[Any, ...]]:
    return sorted(
        (radio, int(cell), float(lat), int(updated))
        for i in numbers
        for radio, cell, lat, updated in (line.split(",") for line in cells(i))
    )


def loaded(lh: Any, dataset: str) -> list[tuple[Any, ...]]:
    frame = lh.read(dataset).select("radio", "cell", "lat", "updated")
    return sorted(tuple(r) for r in frame.collect())


def waiting(lh: Any, p: Project) -> list[str]:
    """What the scheduler's file-arrival trigger sees waiting (no JVM)."""
    reader = StoreReader(lh.store)
    registry = reader.definitions.registry()
    (obj,) = registry.source_objects(p.bronze)
    arrivals = engine("file").arrivals(
        registry.system(obj.source_system_id),
        obj,
        reader.versions.source_progress(p.bronze),
        reader.tenant_reach(),
    )
    return sorted(Path(a.split("|")[0]).name for a in arrivals or [])


def anything_new(lh: Any, p: Project) -> dict[str, str] | None:
    reader = StoreReader(lh.store)
    return nothing_new(reader, reader.definitions.registry(), [p.bronze], str(lh.warehouse))


def test_one_bad_file_of_eight_is_put_aside_and_the_good_ones_promoted(
    shared_lakehouse: Any, project: Project
) -> None:
    """The done-when of "one bad file never holds back the good ones": seven good files are
    promoted with their rows exactly, the eighth is recorded as rejected and not read again
    (nor counted as new without a JVM) while unchanged; released, it is read again (and put
    aside again, still bad); fixed, it is loaded exactly once; then nothing is new."""
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    for i in range(1, 9):
        p.add(f"d{i}.csv", cells(i))
    bad = p.incoming / "d5.csv"
    bad.write_bytes(b"radio,cell,lat,updated\n" + bytes(range(256)) * 8)  # binary garbage
    first = lh.run(p.job)
    assert first.status == "COMPLETED", first.error
    assert loaded(lh, p.bronze) == expected(1, 2, 3, 4, 6, 7, 8)
    assert loaded(lh, p.silver) == expected(1, 2, 3, 4, 6, 7, 8)
    (rejected,) = lh.rejected_files(p.bronze)
    assert rejected.path == f"file:{bad}" and rejected.run_id == first.steps[0].run_id
    assert rejected.reason == "is binary, not csv text (it holds NUL bytes)"
    assert (rejected.size, rejected.source_object_id) == (
        bad.stat().st_size,
        f"cells{p.suffix}_csv",
    )
    said = lh.explain(p.bronze).evidence.check("rejected_files")
    assert said is not None and said.result == "ALERT" and "d5.csv is binary" in said.detail
    taken = (
        StoreReader(lh.store)
        .versions.source_progress(p.bronze)
        .of(f"cells{p.suffix}_csv", SeenFile)
    )
    assert "d5.csv" not in {Path(f).name for f in taken}

    # unchanged: not new for the no-JVM check nor for the arrival trigger, not read again
    assert waiting(lh, p) == []
    notes = anything_new(lh, p)
    assert notes is not None and "1 rejected file(s) unchanged" in notes[p.bronze]
    assert lh.run(p.job).status == "COMPLETED"
    assert versions(lh, p.bronze) == [1] and len(lh.store.read(RejectedFileRow)) == 1

    # released: read again, and put aside again (it is still bad)
    (release,) = lh.release_files([str(bad)], by="test")
    assert release.action == "RELEASED" and anything_new(lh, p) is None
    again = lh.run(p.bronze)
    assert again.status == "COMPLETED" and again.steps[0].data_version is None
    assert "d5.csv is binary" in (again.steps[0].reason or "")
    assert [r.run_id for r in lh.rejected_files(p.bronze)] == [again.steps[0].run_id]

    # fixed: read again as a changed file, loaded once, no longer rejected
    p.add("d5.csv", cells(5))
    os.utime(bad, (1_900_000_000, 1_900_000_000))
    assert waiting(lh, p) == ["d5.csv"] and anything_new(lh, p) is None
    fixed = lh.run(p.job)
    assert fixed.status == "COMPLETED", fixed.error
    assert loaded(lh, p.bronze) == expected(*range(1, 9))
    assert loaded(lh, p.silver) == expected(*range(1, 9))
    assert lh.rejected_files(p.bronze) == [] and versions(lh, p.bronze) == [1, 2]

    # a third run loads nothing
    assert anything_new(lh, p) is not None
    third = lh.run(p.job)
    assert third.status == "COMPLETED" and all(s.data_version is None for s in third.steps)
    assert versions(lh, p.bronze) == [1, 2] and loaded(lh, p.bronze) == expected(*range(1, 9))
    assert_sound(lh, p.bronze, p.silver)


PARQUET_YAML = """
version: 1
source_systems:
  - {{id: pq{s}, options: {{root: feed}}}}
source_objects:
  - id: cells{s}_pq
    system: pq{s}
    locator: "incoming/*.parquet"
    format: parquet
    dataset: bronze_pq{s}
    columns:
      - {{name: cell, type: bigint}}
      - {{name: note, type: string}}
datasets:
  - {{id: bronze_pq{s}, layer: bronze}}
"""


def parquet_file(path: Path, first: int, rows: int = 20_000) -> list[int]:
    cells = list(range(first, first + rows))
    table = pa.table({"cell": cells, "note": [f"cell number {c}" for c in cells]})
    pq.write_table(table, path, compression="snappy")
    return cells


def test_a_file_spark_fails_on_mid_read_is_found_put_aside_and_loaded_once_fixed(
    shared_lakehouse: Any, tmp_path: Path
) -> None:
    """A Parquet file whose footer reads but whose pages are corrupt passes the cheap check
    and fails Spark's staging job: the failure names it, it alone is read again to be sure,
    and it is put aside while the batch is read and staged again without it. A file whose
    footer is gone is caught before Spark. Fixed, the first is loaded once."""
    lh = shared_lakehouse
    doc = write(tmp_path / "pq.yaml", PARQUET_YAML.format(s="_midread"))
    lh.apply(doc)
    incoming = tmp_path / "feed" / "incoming"
    incoming.mkdir(parents=True)
    good = parquet_file(incoming / "a.parquet", 0) + parquet_file(incoming / "b.parquet", 20_000)
    corrupt = incoming / "c.parquet"
    fixed_cells = parquet_file(corrupt, 40_000)
    raw = bytearray(corrupt.read_bytes())
    raw[4:2004] = b"\xab" * 2000  # the first pages' headers: the footer still reads
    corrupt.write_bytes(bytes(raw))
    (incoming / "d.parquet").write_bytes(bytes(raw[: len(raw) // 2]))  # no footer at all

    first = lh.run("bronze_pq_midread")
    assert first.status == "COMPLETED", first.error
    rows = lh.read("bronze_pq_midread").select("cell").collect()
    assert sorted(r["cell"] for r in rows) == good
    reasons = {Path(r.path).name: r.reason or "" for r in lh.rejected_files("bronze_pq_midread")}
    assert set(reasons) == {"c.parquet", "d.parquet"}
    assert reasons["c.parquet"].startswith("cannot be read by Spark")
    assert reasons["d.parquet"] == "is not a complete parquet file (no PAR1 at its start and end)"
    reader = StoreReader(lh.store)
    assert nothing_new(
        reader, reader.definitions.registry(), ["bronze_pq_midread"], str(lh.warehouse)
    )

    parquet_file(corrupt, 40_000)  # fixed
    (incoming / "d.parquet").unlink()
    second = lh.run("bronze_pq_midread")
    assert second.status == "COMPLETED", second.error
    rows = lh.read("bronze_pq_midread").select("cell").collect()
    assert sorted(r["cell"] for r in rows) == good + fixed_cells
    assert lh.run("bronze_pq_midread").steps[0].data_version is None
    assert_sound(lh, "bronze_pq_midread")


def test_on_bad_file_block_fails_the_whole_delivery_naming_the_file(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    p.yaml.write_text(
        p.yaml.read_text().replace(
            'locator: "incoming/*.csv"', 'locator: "incoming/*.csv"\n    on_bad_file: block'
        )
    )
    lh.apply(p.yaml)
    p.add("d1.csv", cells(1))
    write(p.incoming / "d2.csv", "<!DOCTYPE html><html><title>Sign in</title></html>\n")
    result = lh.run(p.bronze)
    assert result.status == "FAILED"
    assert "d2.csv is an HTML page, not csv; nothing was loaded" in (result.error or "")
    assert versions(lh, p.bronze) == [] and lh.rejected_files(p.bronze) == []
    assert StoreReader(lh.store).versions.source_progress(p.bronze).marks == {}
    (p.incoming / "d2.csv").unlink()  # removed: the rest comes in
    assert lh.run(p.bronze).status == "COMPLETED"
    assert loaded(lh, p.bronze) == expected(1)
    assert_sound(lh, p.bronze)
