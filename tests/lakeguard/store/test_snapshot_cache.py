"""The per-process answer cache over metadata snapshots: it must never answer with rows a commit
has made stale, whoever committed, and never hand two callers the same mutable rows (no Spark)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

from lakeguard.store import MetadataStore
from lakeguard.store.snapshots import SNAPSHOTS, Snapshots
from lakeguard.store.store import utcnow
from lakeguard.words.errors import WriteConflict
from tests.support.project import copied_store


@pytest.fixture
def store(empty_store_template: Path, tmp_path: Path) -> MetadataStore:
    s = copied_store(empty_store_template, tmp_path / "meta")
    return s


def event(event_id: str) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "run_id": "r",
        "pipeline_logging_id": "r",
        "pipeline_id": "p",
        "tenant_id": "default",
        "status": "RUNNING",
        "event_time": utcnow(),
    }


def ids(store: MetadataStore) -> list[str]:
    return sorted(r["event_id"] for r in store.rows("run_events"))


@pytest.mark.subprocess
def test_a_commit_by_another_process_is_seen_on_the_next_read(store: MetadataStore) -> None:
    store.append("run_events", [event("a")])
    assert ids(store) == ["a"]
    code = (
        "import sys; from lakeguard.store import MetadataStore; "
        "from tests.lakeguard.store.test_snapshot_cache import event; "
        "s = MetadataStore('lg', sys.argv[1], 'default'); s.ensure(); "
        "s.append('run_events', [event('b')])"
    )
    subprocess.run(
        [sys.executable, "-c", code, store.root],
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert ids(store) == ["a", "b"]


def test_a_commit_by_another_writer_is_seen(store: MetadataStore) -> None:
    """A raw delta-rs writer (not the store) commits: the next read has its rows."""
    store.append("run_events", [event("a")])
    assert ids(store) == ["a"]
    location = store.location("run_events")
    rows = pa.table(DeltaTable(location).to_pyarrow_table())
    write_deltalake(location, rows.slice(0, 1), mode="append")
    assert len(store.rows("run_events")) == 2


def test_an_append_commits_on_top_of_another_writers_commits(store: MetadataStore) -> None:
    """Appends commit on the snapshot this process keeps: it is brought up to date first, so
    another writer's commit is neither lost nor ignored by an idempotent append."""
    store.append("run_events", [event("a")], txn=("app", 1))
    location = store.location("run_events")
    theirs = pa.table(DeltaTable(location).to_pyarrow_table()).slice(0, 1)
    write_deltalake(
        location,
        theirs.set_column(0, "event_id", pa.array(["b"])),
        mode="append",
        commit_properties=CommitProperties(app_transactions=[Transaction("app", 2)]),
    )
    with pytest.raises(WriteConflict, match="app already committed version 2"):
        store.append("run_events", [event("c")], txn=("app", 2))
    store.append("run_events", [event("d")], txn=("app", 3))
    assert ids(store) == ["a", "b", "d"]
    assert DeltaTable(location).version() == 3  # create, a, b, d: nothing written twice


def test_a_table_deleted_and_made_again_is_not_the_old_one(store: MetadataStore) -> None:
    store.append("run_events", [event("old")])
    assert ids(store) == ["old"]
    shutil.rmtree(store.location("run_events"))
    store.ensure()  # the same version numbers again, other files
    store.append("run_events", [event("new")])
    assert ids(store) == ["new"]


def test_each_caller_gets_its_own_rows(store: MetadataStore) -> None:
    store.append("run_events", [event("a")])
    first = store.rows("run_events")
    first[0]["event_id"] = "changed"
    assert ids(store) == ["a"]


def test_list_values_are_copied(store: MetadataStore) -> None:
    cache = Snapshots()
    location = str(Path(store.root) / "plain")
    write_deltalake(location, pa.table({"xs": [["a", "b"]]}))

    def scan(snapshot: DeltaTable) -> pa.Table:
        return pa.table(snapshot.to_pyarrow_table())

    cache.read(location, "all", scan)[0]["xs"].append("c")
    assert cache.read(location, "all", scan)[0]["xs"] == ["a", "b"]


def test_answers_are_reused_until_a_commit(store: MetadataStore) -> None:
    cache = Snapshots()
    location = str(Path(store.root) / "plain")
    write_deltalake(location, pa.table({"x": [1]}))
    scans = []

    def scan(snapshot: DeltaTable) -> pa.Table:
        scans.append(snapshot.version())
        return pa.table(snapshot.to_pyarrow_table())

    assert cache.read(location, "all", scan) == [{"x": 1}]
    assert cache.read(location, "all", scan) == [{"x": 1}]
    assert scans == [0]
    write_deltalake(location, pa.table({"x": [2]}), mode="append")
    assert sorted(r["x"] for r in cache.read(location, "all", scan)) == [1, 2]
    assert scans == [0, 1]


def test_memo_is_dropped_by_any_commit_and_not_kept_when_one_lands_meanwhile(
    store: MetadataStore,
) -> None:
    cache = Snapshots()
    locations = store.locations()
    computed: list[int] = []

    def compute() -> int:
        computed.append(1)
        return len(computed)

    memo = partial(cache.memo, window=0.0)  # check every table on every call
    assert memo("k", locations, compute) == 1
    assert memo("k", locations, compute) == 1
    store.append("run_events", [event("a")])
    assert memo("k", locations, compute) == 2

    def racing() -> int:
        store.append("run_events", [event(f"r{len(computed)}")])  # a commit while computing
        return compute()

    store.append("run_events", [event("b")])
    assert memo("k", locations, racing) == 3
    assert memo("k", locations, compute) == 4  # the raced value was not kept
    assert memo("k", locations, compute) == 4


def test_a_memo_sees_this_process_commits_at_once_and_others_within_its_window(
    store: MetadataStore,
) -> None:
    locations = store.locations()
    computed: list[int] = []

    def compute() -> int:
        computed.append(1)
        return len(computed)

    key = ("test", store.root)
    assert SNAPSHOTS.memo(key, locations, compute, window=60.0) == 1
    assert SNAPSHOTS.memo(key, locations, compute, window=60.0) == 1
    store.append("run_events", [event("a")])  # through this process's store: seen at once
    assert SNAPSHOTS.memo(key, locations, compute, window=60.0) == 2
    location = store.location("run_events")
    write_deltalake(location, pa.table(DeltaTable(location).to_pyarrow_table()), mode="append")
    # another writer: trusted for the window, then seen
    assert SNAPSHOTS.memo(key, locations, compute, window=60.0) == 2
    assert SNAPSHOTS.memo(key, locations, compute, window=0.0) == 3


def test_the_cache_stays_within_its_budget(tmp_path: Path) -> None:
    cache = Snapshots(max_bytes=64 * 1024, max_tables=2)
    for i in range(5):
        location = str(tmp_path / f"t{i}")
        write_deltalake(location, pa.table({"x": list(range(1000))}))
        cache.read(location, "all", lambda s: pa.table(s.to_pyarrow_table()))
    assert len(cache._tables) == 2
    assert cache._bytes <= 64 * 1024


def test_a_missing_table_is_an_error_that_names_it(store: MetadataStore) -> None:
    from lakeguard.words.errors import MetadataStoreError

    assert ids(store) == []
    shutil.rmtree(store.location("run_events"))
    with pytest.raises(MetadataStoreError, match="run_events is missing"):
        store.rows("run_events")
    SNAPSHOTS.stamp(store.locations())  # a missing table stamps as missing, it does not raise


def test_requests_arriving_together_share_one_computation(store: MetadataStore) -> None:
    import threading
    import time

    cache = Snapshots()
    locations = store.locations()
    calls: list[int] = []
    gate = threading.Event()

    def compute() -> int:
        calls.append(1)
        gate.wait(5)
        return 42

    results: list[int] = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.memo("k", locations, compute)))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    time.sleep(0.2)  # all eight are waiting on the first computation
    gate.set()
    for t in threads:
        t.join()
    assert results == [42] * 8 and len(calls) == 1


def test_ensure_opens_each_table_once_and_the_reads_start_from_it(
    empty_store_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process opens each metadata table once (its first `ensure`); ensuring again, reading
    and appending bring that snapshot up to date instead of opening the table again."""
    import lakeguard.records.kept as kept_module
    import lakeguard.store.deltars as deltars_module

    opened: list[str] = []

    class Counted(DeltaTable):
        def __init__(self, location: str, *args: Any, **kwargs: Any) -> None:
            if str(location).startswith(str(tmp_path)):  # this store's: not a leftover thread's
                opened.append(Path(location).name)
            super().__init__(location, *args, **kwargs)

    monkeypatch.setattr(kept_module, "DeltaTable", Counted)
    monkeypatch.setattr(deltars_module, "DeltaTable", Counted)
    shutil.copytree(empty_store_template, tmp_path / "meta")
    store = MetadataStore("lg", str(tmp_path / "meta"), "default")
    store.ensure()
    assert sorted(opened) == sorted(store.tables())  # each once
    opened.clear()
    store.ensure()
    store.append("run_events", [event("a")])
    assert ids(store) == ["a"]
    MetadataStore("lg", str(tmp_path / "meta"), "default").ensure()  # another store object
    assert opened == []


def test_ensure_sees_what_another_writer_did_to_a_kept_table(store: MetadataStore) -> None:
    """A table this process keeps, marked by another writer as half rewritten, then deleted:
    the next `ensure` refuses the first and makes the second anew; the kept snapshot never
    answers for a table that has changed."""
    from lakeguard.records.versioning import MIGRATING_PROPERTY, StoreVersionError

    location = store.location("run_events")
    DeltaTable(location).alter.set_table_properties(
        {MIGRATING_PROPERTY: "a test"}, raise_if_not_exists=False
    )
    with pytest.raises(StoreVersionError, match="interrupted"):
        store.ensure()
    shutil.rmtree(location)
    assert store.ensure() == ["created lg.run_events"]
    store.append("run_events", [event("new")])
    assert ids(store) == ["new"]
