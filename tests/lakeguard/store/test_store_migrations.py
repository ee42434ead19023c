"""Store migrations, without Spark: a store written before stores had a version (checked in
as tests/fixtures/store_v0) is refused with the command to run, `laketx migrate` brings it to
this code's version keeping every row, runs again as a no-op, and finishes a rewrite that was
interrupted at any step (or by an older laketx between its two renames). The same on the
object store: tests/lakeguard/store/test_store_migrations_s3.py."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lakeguard.records.versioning import MIGRATING_SUFFIX, STORE_VERSION, StoreVersionError
from lakeguard.store import MetadataStore
from lakeguard.store.migrations import MIGRATIONS, migrate, pending
from lakeguard.store.rewrite import STAGING_SUFFIX, resume
from openlaketx.cli import app
from tests.support.store_v0 import (
    FIXTURE,
    STEPS,
    as_before,
    assert_migrated,
    every_row,
    interrupted_then_refused,
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "home")
    return tmp_path / "home"


def store_of(home: Path) -> MetadataStore:
    return MetadataStore("lakeguard", str(home / "metadata" / "lakeguard"), "default")


def test_an_older_store_is_refused_with_the_command_to_run(home: Path) -> None:
    with pytest.raises(StoreVersionError, match="laketx migrate") as refused:
        store_of(home).ensure()
    assert refused.value.details["store_version"] == 0
    assert refused.value.details["code_version"] == STORE_VERSION
    result = CliRunner().invoke(app, ["--home", str(home), "status"])
    assert result.exit_code == StoreVersionError.exit_code
    assert "laketx migrate" in result.output


def test_migrate_keeps_every_row_and_runs_once(home: Path) -> None:
    store = store_of(home)
    before = every_row(store)
    assert len(before["pipeline_runs"]) == 5 and len(before["dataset_registry"]) == 2
    assert [s.migration.version for s in pending(store)] == [m.version for m in MIGRATIONS]

    done = migrate(store)
    assert any("renamed triggered_by to trigger_by (5 rows kept)" in line for line in done)
    assert store.store_versions() == dict.fromkeys(store.tables(), STORE_VERSION)
    after = every_row(store)
    assert as_before(after, before) == before  # every row, every value
    runs = store.rows("pipeline_runs")
    assert sorted(r["trigger_by"] for r in runs) == [f"user {i}" for i in range(5)]
    recorded = store.rows("store_migrations")
    assert sorted(r["version"] for r in recorded) == [m.version for m in MIGRATIONS]

    store_of(home).ensure()  # opens now
    assert pending(store) == [] and migrate(store) == []  # nothing left: a no-op


def test_a_rewrite_an_older_laketx_left_between_its_renames_is_finished(home: Path) -> None:
    store = store_of(home)
    location = store.location("pipeline_runs")
    # as if the migrate of an older laketx (which swapped folders) was killed between its two
    # renames: the old table set aside, the new one not yet in place
    shutil.copytree(location, location + STAGING_SUFFIX)
    os.rename(location, location + MIGRATING_SUFFIX)
    with pytest.raises(StoreVersionError, match="interrupted"):
        store_of(home).ensure()
    migrate(store)
    assert not os.path.exists(location + MIGRATING_SUFFIX)
    assert not os.path.exists(location + STAGING_SUFFIX)
    assert len(store.rows("pipeline_runs")) == 5


@pytest.mark.parametrize("point", STEPS)
def test_a_rewrite_interrupted_at_each_step_is_finished_by_migrate(
    home: Path, point: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = store_of(home)
    before = every_row(store)
    interrupted_then_refused(store, point, monkeypatch)
    done = migrate(store)
    if point != "after_end":
        assert any("interrupted run" in line for line in done), done
    assert_migrated(store, before)


def test_migrates_first_read_reports_an_interrupted_rewrite_and_plans_as_pending_does(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`migrate` reads every table once before its migrations (`ensure_for_migrate`): a table
    a rewrite left half done is reported and left as it is (the store still refuses to open),
    and once it is resumed the versions read plan the same steps as `pending` reading them."""
    store = store_of(home)
    interrupted_then_refused(store, "before_end", monkeypatch)
    found = store.ensure_for_migrate()
    assert found.interrupted == ["pipeline_runs"]
    assert "pipeline_runs" not in found.versions
    with pytest.raises(StoreVersionError, match="interrupted"):
        store_of(home).ensure()  # reported, not touched
    assert resume("pipeline_runs", store.location("pipeline_runs")) is not None
    again = store.ensure_for_migrate(["pipeline_runs"])
    assert again.interrupted == [] and set(again.versions) == {"pipeline_runs"}
    assert pending(store, {**found.versions, **again.versions}) == pending(store)
    assert pending(store) != []


def test_a_migrate_stopped_between_its_record_and_its_stamps_is_recorded_once(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each migration's `store_migrations` row is written before the tables are stamped: a
    migrate stopped in between leaves the rows and no stamp (the store still refuses to
    open); the next one stamps the tables and records no migration a second time."""
    import lakeguard.store.migrations as migrations

    store = store_of(home)

    def stop(_store: MetadataStore, version: int) -> Any:
        def stamp(_table: str) -> None:
            raise RuntimeError(f"stopped before stamping migration {version}")

        return stamp

    with monkeypatch.context() as patched:
        patched.setattr(migrations, "_stamper", stop)
        with pytest.raises(
            RuntimeError, match=f"stopped before stamping migration {STORE_VERSION}"
        ):
            migrate(store)
    recorded = sorted(r["version"] for r in store.rows("store_migrations"))
    assert recorded == [m.version for m in MIGRATIONS]
    assert store.store_versions()["pipeline_runs"] == 0  # not stamped
    with pytest.raises(StoreVersionError, match="laketx migrate"):
        store_of(home).ensure()
    migrate(store)
    assert store.store_versions() == dict.fromkeys(store.tables(), STORE_VERSION)
    recorded = sorted(r["version"] for r in store.rows("store_migrations"))
    assert recorded == [m.version for m in MIGRATIONS]  # one row each, the first not twice


def test_the_cli_plans_then_migrates(home: Path) -> None:
    runner = CliRunner()
    planned = runner.invoke(app, ["--home", str(home), "migrate", "--plan", "--json"])
    assert planned.exit_code == 0, planned.output
    assert "pipeline_runs.trigger_by" in planned.stdout
    assert store_of(home).store_versions()["pipeline_runs"] == 0  # --plan changed nothing
    migrated = runner.invoke(app, ["--home", str(home), "migrate"])
    assert migrated.exit_code == 0, migrated.output
    assert runner.invoke(app, ["--home", str(home), "status", "--json"]).exit_code == 0


def test_the_replacing_commit_changes_types_and_partitioning_or_nothing(tmp_path: Path) -> None:
    """The switch a rewrite commits: new types and partitioning with every row, in one commit
    on top of exactly the snapshot it was built from (a commit landing first fails it)."""
    import pyarrow as pa
    from deltalake import write_deltalake

    from lakeguard.store import deltars, table_replace

    location = str(tmp_path / "t")
    write_deltalake(
        location,
        pa.table({"n": pa.array([1, 2, 3], pa.int32()), "p": list("xyx")}),
        partition_by=["p"],
    )
    stale = deltars.load("t", location)
    write_deltalake(location, pa.table({"n": pa.array([4], pa.int32()), "p": ["y"]}), mode="append")
    wider = pa.table({"n": pa.array([1, 2, 3, 4], pa.int64()), "p": list("xyxy")})
    with pytest.raises(deltars.CasLost):  # a row was appended since `stale` was read
        table_replace.replace_all("t", location, wider, base=stale, partition_by=[], marker={})
    assert deltars.load("t", location).version() == 1
    base = deltars.load("t", location)
    table_replace.replace_all("t", location, wider, base=base, partition_by=[], marker={"m": "1"})
    dt = deltars.load("t", location)
    assert dt.metadata().partition_columns == [] and dt.to_pyarrow_table().num_rows == 4
    assert dt.schema().fields[0].type.type == "long"


def test_a_rewrite_that_loses_a_row_is_undone(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A replacing commit that holds fewer rows than were read is restored away: the table is
    back at its old rows and shape, not marked, and the next migrate succeeds."""
    from lakeguard.store import deltars, table_replace
    from lakeguard.words.errors import MetadataStoreError

    store = store_of(home)
    before = every_row(store)
    real = table_replace.replace_all

    def lossy(table: str, location: str, data: Any, **kw: Any) -> int:
        return real(table, location, data.slice(1), **kw)

    with monkeypatch.context() as patched:
        patched.setattr(table_replace, "replace_all", lossy)
        with pytest.raises(MetadataStoreError, match="kept 4 of 5 rows; the table was restored"):
            migrate(store)
    assert every_row(store)["pipeline_runs"] == before["pipeline_runs"]
    location = store.location("pipeline_runs")
    columns = [c[0] for c in deltars.existing_columns(deltars.load("pipeline_runs", location))]
    assert "triggered_by" in columns  # its old shape
    with pytest.raises(StoreVersionError, match="is at version"):
        store_of(home).ensure()  # not marked as interrupted: simply not migrated yet
    migrate(store)
    assert_migrated(store, before)
