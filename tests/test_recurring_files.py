"""File sources on a schedule: every file exactly once, changed files decided, archives."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from lakeguard.source_kinds.file import SeenFile
from lakeguard.store import StoreReader
from openlaketx.sources import files
from tests.conftest import Project, assert_sound, write

pytestmark = pytest.mark.spark

D1 = ["GSM,1,10.5,100", "LTE,2,20.5,100"]
D2 = ["LTE,2,21.0,200", "GSM,3,5.0,200"]


def versions(lh: Any, dataset: str) -> list[int]:
    return [v.version for v in StoreReader(lh.store).versions(dataset)]


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
    taken = StoreReader(lh.store).source_progress(p.bronze).of(f"cells{p.suffix}_csv", SeenFile)
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
    assert StoreReader(lh.store).source_progress(p.bronze).marks == {}
