"""Processes killed mid-run (os._exit, no cleanup at all), then the next run recovers exactly once.

Invariants 4, 6, 7 and 9 on the staged write path: a kill after staging leaves the target
untouched and the staged files are swept; a kill after publishing is adopted, never written
twice; the dead run's lease does not block the next one; the dead attempt is reaped FAILED.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from openlaketx.loads.commit import app_id, published_through
from openlaketx.loads.staging import STAGED_DIR
from openlaketx.tables import dataset_location
from tests.support.killing import kill_during_run
from tests.support.project import Project, assert_sound

pytestmark = [pytest.mark.spark, pytest.mark.subprocess]

ROWS = ["GSM,1,10.5,100", "LTE,2,20.5,100", "LTE,3,-30.0,100", "UMTS,4,1.0,100"]


def staged_folders(lh: Any, table: str) -> list[Path]:
    folder = Path(dataset_location(lh.warehouse, table)) / STAGED_DIR
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_kill_after_staging_leaves_the_target_untouched_and_is_swept(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ROWS)
    assert lh.run(p.bronze).status == "COMPLETED"
    table, path = (
        f"bronze.cells{p.suffix}",
        dataset_location(lh.warehouse, f"bronze.cells{p.suffix}"),
    )
    app = app_id(lh.store.tenant, p.bronze)
    staged_before = staged_folders(lh, table)

    p.deliver("d2.csv", ["GSM,5,5.0,200", "GSM,6,6.0,200"])
    kill_during_run(lh.config.home, "before_publish", p.bronze)
    assert published_through(path, app) == 1  # nothing published for version 2
    left = [f for f in staged_folders(lh, table) if f not in staged_before]
    assert len(left) == 1 and left[0].name.startswith("v000000002-")  # the dead run's batch
    assert lh.read(p.bronze).count() == 4
    dead = [r for r in StoreReader(lh.store).runs.in_flight() if r.dataset_id == p.bronze]
    assert len(dead) == 1

    retried = lh.run(p.bronze)  # the dead holder's lease does not block this run
    assert retried.status == "COMPLETED", retried.error
    assert not left[0].exists()  # swept by the run that took the lease
    assert lh.read(p.bronze).count() == 6
    assert [v.version for v in StoreReader(lh.store).versions.versions(p.bronze)] == [1, 2]
    history = {
        r["run_id"]: r["status"]
        for r in lh.store.rows("run_history", filters=[("dataset_id", "=", p.bronze)])
    }
    assert history[dead[0].run_id] == "FAILED"  # reaped: one terminal row for the dead attempt
    assert StoreReader(lh.store).runs.in_flight() == []
    assert_sound(lh, p.bronze)


def test_kill_after_publishing_is_adopted_not_written_twice(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ROWS)
    kill_during_run(lh.config.home, "before_version", p.bronze)
    path = dataset_location(lh.warehouse, f"bronze.cells{p.suffix}")
    assert published_through(path, app_id(lh.store.tenant, p.bronze)) == 1
    assert StoreReader(lh.store).versions.versions(p.bronze) == []  # committed, not recorded

    retried = lh.run(p.bronze)
    assert retried.status == "COMPLETED", retried.error
    assert "recovered commit" in (retried.steps[0].reason or "")
    assert lh.read(p.bronze).count() == 4  # not 8
    (version,) = StoreReader(lh.store).versions.versions(p.bronze)
    dead_attempt = [
        r
        for r in lh.store.rows("run_history", filters=[("dataset_id", "=", p.bronze)])
        if r["triggered_by"] == "reaper"
    ]
    assert version.version == 1 and [version.run_id] == [r["run_id"] for r in dead_attempt]
    assert_sound(lh, p.bronze)
