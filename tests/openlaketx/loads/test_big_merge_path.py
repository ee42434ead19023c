"""The big merge path (a batch delta-rs does not merge: `small_merge.fits` false), forced on
small data with `LAKETX_SMALL_MERGE_ROWS=0`: no novelty join runs before the gate; the Spark
MERGE's own commit metrics say whether it changed a row.

Invariants of docs/design.md on that path: a blocked batch leaves the table untouched; a batch
that changes nothing records no version, its empty MERGE is released (the dataset's Delta
transaction set back), so the next changing batch is applied, not skipped as applied already;
`verify` knows the empty MERGE and its release changed nothing; a process killed before the
MERGE, before the release or after it recovers exactly once; replay still reproduces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.records.commits import Commit, Tag, history
from openlaketx.config import SMALL_MERGE_ROWS_VARIABLE
from openlaketx.loads import small_merge, strategies
from openlaketx.loads.commit import app_id, published_through
from openlaketx.tables import dataset_location
from tests.support.killing import MERGE_KILL_POINTS, kill_during_run
from tests.support.project import assert_sound, write

pytestmark = [pytest.mark.spark]

HEADER = "radio,cell,lat,updated"
FIRST = ["GSM,1,10.5,100", "LTE,2,20.5,100", "UMTS,3,1.0,100"]


def document(s: str) -> str:
    return f"""
version: 1
source_systems:
  - id: feed{s}
    options: {{root: feed}}
source_objects:
  - id: cells{s}_csv
    system: feed{s}
    locator: "incoming/*.csv"
    options: {{header: "true"}}
    dataset: bronze_cells{s}
    columns:
      - {{name: radio, type: string}}
      - {{name: cell, type: bigint}}
      - {{name: lat, type: double}}
      - {{name: updated, type: bigint}}
datasets:
  - {{id: bronze_cells{s}, layer: bronze}}
  - id: silver_cells{s}
    layer: silver
    parents: [bronze_cells{s}]
    business_keys: [radio, cell]
    sequence_by: updated
rules:
  - {{id: lat_range{s}, dataset: silver_cells{s}, type: RANGE, column: lat, min: -90, max: 90, severity: FAIL}}
"""


class Cells:
    """One project of the shared lakehouse: a bronze feed and the silver merge of it."""

    def __init__(self, lh: Any, root: Path, s: str) -> None:
        self.lh, self.root, self.s = lh, root, s
        lh.apply(write(root / "cells.yaml", document(s)))
        self.bronze, self.silver = f"bronze_cells{s}", f"silver_cells{s}"
        self.path = dataset_location(
            lh.warehouse, lh.reader.definitions.dataset(self.silver).table_name
        )
        self.app = app_id(lh.store.tenant, self.silver)

    def deliver(self, name: str, rows: list[str]) -> None:
        incoming = self.root / "feed" / "incoming"
        for old in incoming.glob("*.csv") if incoming.is_dir() else []:
            old.unlink()
        write(incoming / name, HEADER + "\n" + "\n".join(rows) + "\n")
        assert self.lh.run(self.bronze).status == "COMPLETED"

    def run(self) -> Any:
        result = self.lh.run(self.silver)
        assert result.status in ("COMPLETED", "BLOCKED"), result.error
        (step,) = result.steps
        return step

    def versions(self) -> list[int]:
        return [v.version for v in StoreReader(self.lh.store).versions.versions(self.silver)]

    def rows(self) -> dict[tuple[str, int], float]:
        return {(r.radio, r.cell): r.lat for r in self.lh.read(self.silver).collect()}

    def delta_version(self) -> int:
        return history(self.path, 1)[0].version


@pytest.fixture
def cells(
    shared_lakehouse: Any, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: Any
) -> Cells:
    monkeypatch.setenv(SMALL_MERGE_ROWS_VARIABLE, "0")  # Spark merges every batch
    s = "_" + "".join(c for c in request.node.name.lower() if c.isalnum())[-20:]
    c = Cells(shared_lakehouse, tmp_path / "project", s)
    c.deliver("d1.csv", FIRST)
    assert c.run().data_version == 1
    return c


def _spy(monkeypatch: Any) -> list[str]:
    """What chose and ran the merge: the engine is chosen once (`fits`), delta-rs never
    merges nor counts, Spark's MERGE is counted."""
    called: list[str] = []
    real = strategies.merge

    def spark_merge(*args: Any, **kwargs: Any) -> Any:
        called.append("spark")
        return real(*args, **kwargs)

    def no_delta_rs(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("delta-rs merged a batch above the small-merge size")

    real_fits = small_merge.fits

    def fits(*args: Any, **kwargs: Any) -> bool:
        called.append("fits")
        return real_fits(*args, **kwargs)

    monkeypatch.setattr(strategies, "merge", spark_merge)
    monkeypatch.setattr(small_merge, "fits", fits)
    monkeypatch.setattr(small_merge, "merge", no_delta_rs)
    monkeypatch.setattr(small_merge, "changes", no_delta_rs)
    return called


def test_an_unchanged_batch_makes_no_version_and_the_next_is_applied(
    cells: Cells, monkeypatch: Any
) -> None:
    merges = _spy(monkeypatch)
    cells.deliver("d2.csv", FIRST)  # bronze v2 repeats what silver holds
    step = cells.run()
    assert merges == ["fits", "spark"]  # chosen once; one MERGE, no novelty join before it
    assert step.data_version is None and step.reason == "no row would change"
    assert step.rows_written == 0
    assert cells.versions() == [1]
    assert published_through(cells.path, cells.app) == 1  # released: version 2 is free
    release, empty = history(cells.path, 2)
    assert empty.operation == "MERGE" and empty.empty_merge and empty.maintenance
    assert empty.tag is not None and empty.tag.data_version == 2
    assert release.tag is not None and release.tag.release == 2 and release.maintenance
    assert_sound(cells.lh, cells.silver)

    cells.deliver("d3.csv", ["GSM,1,11.5,200", "LTE,9,9.0,200"])  # a change and a new key
    step = cells.run()
    assert merges == ["fits", "spark"] * 2
    assert step.data_version == 2, step.reason  # applied, not skipped as applied already
    assert step.rows_written == 2
    assert cells.versions() == [1, 2]
    assert published_through(cells.path, cells.app) == 2
    assert cells.rows() == {("GSM", 1): 11.5, ("LTE", 2): 20.5, ("UMTS", 3): 1.0, ("LTE", 9): 9.0}
    assert_sound(cells.lh, cells.silver)
    assert cells.lh.replay(cells.silver, 2).matches


def test_a_blocked_batch_leaves_the_table_untouched(cells: Cells, monkeypatch: Any) -> None:
    merges = _spy(monkeypatch)
    before = cells.delta_version()
    cells.deliver("d2.csv", ["GSM,1,500.0,200", "LTE,2,21.5,200"])  # lat 500 fails the gate
    step = cells.run()
    assert step.status == "BLOCKED" and step.data_version is None
    assert merges == ["fits"]
    assert cells.delta_version() == before
    assert published_through(cells.path, cells.app) == 1
    assert cells.versions() == [1]
    assert_sound(cells.lh, cells.silver)


@pytest.mark.subprocess
@pytest.mark.parametrize("point", MERGE_KILL_POINTS)
def test_a_kill_around_an_empty_merge_recovers_exactly_once(cells: Cells, point: str) -> None:
    before = cells.delta_version()
    cells.deliver("d2.csv", FIRST)  # changes nothing
    kill_during_run(cells.lh.config.home, point, cells.silver, {SMALL_MERGE_ROWS_VARIABLE: "0"})
    stuck = 2 if point == "before_release" else 1  # the empty MERGE holds version 2's txn
    assert published_through(cells.path, cells.app) == stuck
    if point == "before_merge":
        assert cells.delta_version() == before
    assert cells.versions() == [1]

    again = cells.run()  # recovers (releases an unreleased empty MERGE), merges again
    assert again.data_version is None, again.reason
    assert published_through(cells.path, cells.app) == 1
    assert cells.versions() == [1]
    assert_sound(cells.lh, cells.silver)

    cells.deliver("d3.csv", ["LTE,2,22.5,300"])
    step = cells.run()
    assert step.data_version == 2 and step.rows_written == 1, step.reason
    assert cells.versions() == [1, 2]
    assert cells.rows() == {("GSM", 1): 10.5, ("LTE", 2): 22.5, ("UMTS", 3): 1.0}
    assert_sound(cells.lh, cells.silver)


def test_an_empty_merge_and_its_release_are_maintenance_untagged_ones_are_not() -> None:
    metrics = {"numTargetRowsInserted": "0", "numTargetRowsUpdated": "0"}
    tag = Tag(run_id="r", data_version=2)
    assert Commit(5, "MERGE", tag, metrics=metrics).maintenance
    assert Commit(6, "WRITE", Tag(run_id="r", release=2)).maintenance
    assert not Commit(5, "MERGE", None, metrics=metrics).maintenance  # around the gate
    changed = {**metrics, "numTargetRowsUpdated": "1"}
    assert not Commit(5, "MERGE", tag, metrics=changed).maintenance
    assert not Commit(6, "WRITE", tag).maintenance
