"""The metadata tables' logs, without Spark: a runtime table's commit files before its newest
checkpoint go once they are older than its retention (so an append does not list every commit
the table ever had), and nothing a reader or a recovery needs goes with them; a definition
table keeps every commit; `laketx migrate` gives an older store's runtime tables the retention.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from lakeguard.records.sources.rows import SourceSystemRow
from lakeguard.records.table_defs import load_table_defs
from lakeguard.store import MetadataStore, compaction, deltars
from lakeguard.store.migrations import m0004_log_retention, migrate
from lakeguard.store.snapshots import SNAPSHOTS
from lakeguard.words.errors import WriteConflict
from tests.lakeguard.store.test_snapshot_cache import event
from tests.support.project import copied_store
from tests.support.store_v0 import FIXTURE

RETAINED = 2 * 3600  # seconds: older than compaction.LOG_RETENTION


@pytest.fixture
def store(empty_store_template: Path, tmp_path: Path) -> MetadataStore:
    return copied_store(empty_store_template, tmp_path / "meta")


def commits(location: str) -> list[int]:
    """The versions whose commit files are in the table's log."""
    log = Path(location) / "_delta_log"
    return sorted(int(name[:20]) for name in os.listdir(log) if name.endswith(".json"))


def age_log(location: str, seconds: int = RETAINED) -> None:
    """Make every file of the table's log `seconds` older, as if written that long ago."""
    log = Path(location) / "_delta_log"
    then = time.time() - seconds
    for name in os.listdir(log):
        os.utime(log / name, (then, then))


def append_until_a_pass(store: MetadataStore, table: str, start: int) -> int:
    """One-row appends up to and including the next that is followed by a compaction pass;
    returns how many were appended."""
    appended = 0
    while True:
        version = int(deltars.load(table, store.location(table)).version()) + 1
        store.append(table, [event(f"e{start + appended}")])
        appended += 1
        if compaction.due(version) is not None:
            return appended


def test_runtime_tables_retain_their_log_for_a_while_and_definitions_for_ever(
    store: MetadataStore,
) -> None:
    for name, table in load_table_defs().items():
        config = deltars.load(name, store.location(name)).metadata().configuration
        retention = config.get(compaction.LOG_RETENTION_PROPERTY)
        assert retention == (compaction.LOG_RETENTION if table.append_only else None), name


def test_a_pass_removes_the_expired_commits_and_nothing_a_reader_or_recovery_needs(
    store: MetadataStore,
) -> None:
    """Commit files older than the retention and than the pass's checkpoint go; a snapshot
    kept from before them still comes up to date, an idempotent append's transaction (which
    recovery relies on) still refuses its version again, and every row is there."""
    location = store.location("run_events")
    store.append("run_events", [event("txn")], txn=("recovery", 7))
    appended = 1 + append_until_a_pass(store, "run_events", 1)
    kept = SNAPSHOTS.read(location, ("kept",), lambda dt: dt.to_pyarrow_table())
    assert len(kept) == appended and commits(location)[0] == 0
    checkpoint = int(deltars.load("run_events", location).version())  # the pass's commit
    age_log(location)
    appended += append_until_a_pass(store, "run_events", appended)
    newest = int(deltars.load("run_events", location).version())
    # the expired commits before the checkpoint went; it stays, with the young commits after
    # it, so that every version still in the log can be read as it was
    assert commits(location) == list(range(checkpoint, newest + 1))
    assert sorted(r["event_id"] for r in store.rows("run_events")) == sorted(
        ["txn", *(f"e{i}" for i in range(1, appended))]
    )
    with pytest.raises(WriteConflict, match="already committed version 7"):
        store.append("run_events", [event("txn again")], txn=("recovery", 7))
    again = SNAPSHOTS.read(location, ("again",), lambda dt: dt.to_pyarrow_table())
    assert len(again) == appended


def test_commits_inside_the_retention_stay(store: MetadataStore) -> None:
    location = store.location("run_events")
    append_until_a_pass(store, "run_events", 0)
    append_until_a_pass(store, "run_events", 100)
    assert commits(location)[0] == 0  # young: kept for time travel and slow readers


def test_a_definition_table_keeps_every_commit(store: MetadataStore) -> None:
    location = store.location("source_systems")
    for i in range(3):
        row = SourceSystemRow(
            source_system_id="s", kind="file", enabled=True, definition_hash=f"h{i}"
        )
        store.upsert("source_systems", [row])
    versions = commits(location)
    age_log(location)
    assert store.optimize(["source_systems"]) == ["source_systems"]
    assert commits(location)[: len(versions)] == versions  # `laketx changes` reads them
    assert store.rows("source_systems", version=versions[1])[0]["definition_hash"] == "h0"


def test_migrate_gives_an_older_stores_runtime_tables_the_retention(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURE, home)
    store = MetadataStore("lakeguard", str(home / "metadata" / "lakeguard"), "default")
    jobs = store.location("jobs")
    age_log(jobs)
    before = commits(jobs)
    assert len(before) > 1
    done = migrate(store)
    assert any(f"{compaction.LOG_RETENTION_PROPERTY}=" in line for line in done), done
    for name, table in load_table_defs().items():
        config = deltars.load(name, store.location(name)).metadata().configuration
        retention = config.get(compaction.LOG_RETENTION_PROPERTY)
        assert retention == (compaction.LOG_RETENTION if table.append_only else None), name
    assert commits(jobs)[: len(before)] == before  # a definition table keeps its history
    assert len(store.rows("pipeline_runs")) == 5


def test_a_store_migrated_to_the_retention_is_cleaned_by_the_next_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store created when the pinned properties had no retention (migration 1 ran before it
    was one of them): nothing is removed; migration 4 sets it, and the table's next
    compaction pass removes its expired commits."""
    pinned = deltars.pinned_properties
    with monkeypatch.context() as before_the_retention:
        before_the_retention.setattr(
            deltars,
            "pinned_properties",
            lambda table: {
                k: v for k, v in pinned(table).items() if k != compaction.LOG_RETENTION_PROPERTY
            },
        )
        store = MetadataStore("lg", str(tmp_path / "meta"), "default")
        store.ensure()
    location = store.location("run_events")
    appended = append_until_a_pass(store, "run_events", 0)
    age_log(location)
    appended += append_until_a_pass(store, "run_events", appended)
    assert commits(location)[0] == 0  # no retention: nothing removed
    checkpoint = int(deltars.load("run_events", location).version())  # that pass's commit
    assert m0004_log_retention.MIGRATION.apply(store) == [
        f"{name}: set {compaction.LOG_RETENTION_PROPERTY}={compaction.LOG_RETENTION}"
        for name, table in sorted(load_table_defs().items())
        if table.append_only and name in store.tables()
    ]
    age_log(location)
    appended += append_until_a_pass(store, "run_events", appended)
    newest = int(deltars.load("run_events", location).version())
    assert commits(location) == list(range(checkpoint, newest + 1))  # those before it went
    assert len(store.rows("run_events")) == appended
