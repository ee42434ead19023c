"""Store migrations, without Spark: a store written before stores had a version (checked in
as tests/fixtures/store_v0) is refused with the command to run, `laketx migrate` brings it to
this code's version keeping every row, runs again as a no-op, and finishes a rewrite that was
interrupted at the swap."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lakeguard.store import MetadataStore
from lakeguard.store.migrations import MIGRATIONS, migrate, pending
from lakeguard.store.rewrite import STAGING_SUFFIX
from lakeguard.store.versioning import MIGRATING_SUFFIX, STORE_VERSION, StoreVersionError
from openlaketx.cli import app

FIXTURE = Path(__file__).parent / "fixtures" / "store_v0"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "home")
    return tmp_path / "home"


def store_of(home: Path) -> MetadataStore:
    return MetadataStore("lakeguard", str(home / "metadata" / "lakeguard"), "default")


def every_row(store: MetadataStore) -> dict[str, list[dict[str, object]]]:
    """Each table's rows (every tenant), in a stable order, without the renamed column's name."""
    from lakeguard.store import deltars
    from lakeguard.store.arrow import to_rows

    found = {}
    for table in store.tables():
        location = store.location(table)
        if not deltars.is_table(location):
            continue
        rows = [
            {("trigger_by" if k == "triggered_by" else k): v for k, v in r.items()}
            for r in to_rows(deltars.read(table, location))
        ]
        found[table] = sorted(rows, key=repr)
    return found


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
    assert {t: r for t, r in after.items() if t in before} == before  # every row, every value
    runs = store.rows("pipeline_runs")
    assert sorted(r["trigger_by"] for r in runs) == [f"user {i}" for i in range(5)]
    recorded = store.rows("store_migrations")
    assert sorted(r["version"] for r in recorded) == [m.version for m in MIGRATIONS]

    store_of(home).ensure()  # opens now
    assert pending(store) == [] and migrate(store) == []  # nothing left: a no-op


def test_an_interrupted_rewrite_is_finished_by_running_migrate_again(home: Path) -> None:
    store = store_of(home)
    location = store.location("pipeline_runs")
    # as if a migrate was killed between its two renames: the old table set aside, the new
    # one not yet in place
    shutil.copytree(location, location + STAGING_SUFFIX)
    os.rename(location, location + MIGRATING_SUFFIX)
    with pytest.raises(StoreVersionError, match="interrupted"):
        store_of(home).ensure()
    migrate(store)
    assert not os.path.exists(location + MIGRATING_SUFFIX)
    assert not os.path.exists(location + STAGING_SUFFIX)
    assert len(store.rows("pipeline_runs")) == 5


def test_the_cli_plans_then_migrates(home: Path) -> None:
    runner = CliRunner()
    planned = runner.invoke(app, ["--home", str(home), "migrate", "--plan", "--json"])
    assert planned.exit_code == 0, planned.output
    assert "pipeline_runs.trigger_by" in planned.stdout
    assert store_of(home).store_versions()["pipeline_runs"] == 0  # --plan changed nothing
    migrated = runner.invoke(app, ["--home", str(home), "migrate"])
    assert migrated.exit_code == 0, migrated.output
    assert runner.invoke(app, ["--home", str(home), "status", "--json"]).exit_code == 0
