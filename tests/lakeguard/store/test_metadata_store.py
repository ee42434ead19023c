"""The metadata store on delta-rs: creation, evolution, append-only tables, bad tables (no Spark
except where Spark's view of the same tables is the point)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from lakeguard.records.sources.rows import SourceSystemRow
from lakeguard.records.table_defs import TableKind, load_table_defs
from lakeguard.records.versioning import STORE_VERSION, VERSION_PROPERTY, StoreVersionError
from lakeguard.store import MetadataStore, compaction, deltars
from lakeguard.store.arrow import delta_schema_json
from lakeguard.store.migrations import migrate
from lakeguard.store.store import utcnow
from lakeguard.words.errors import AppendOnlyViolation, MetadataStoreError
from tests.support.children import lease_race


@pytest.fixture
def store(tmp_path: Path) -> MetadataStore:
    s = MetadataStore("lg", str(tmp_path / "meta"), "default")
    s.ensure()
    return s


def event(event_id: str = "e", status: str = "RUNNING") -> dict[str, Any]:
    return {
        "event_id": event_id,
        "run_id": "r",
        "pipeline_logging_id": "r",
        "pipeline_id": "p",
        "tenant_id": "default",
        "status": status,
        "event_time": utcnow(),
    }


def _version(store: MetadataStore, table: str) -> int:
    return int(deltars.load(table, store.location(table)).version())


def test_every_table_is_created_as_delta_with_its_properties(store: MetadataStore) -> None:
    for name, table in load_table_defs().items():
        dt = deltars.load(name, store.location(name))
        config = dt.metadata().configuration
        assert config["laketx.kind"] == table.kind.value
        assert config["delta.appendOnly"] == str(table.append_only).lower()
        assert dt.metadata().partition_columns == list(table.partitioned_by)


def test_ensure_is_idempotent_and_keeps_rows(store: MetadataStore) -> None:
    store.append("run_events", [event()])
    assert store.ensure() == []
    assert [r["event_id"] for r in store.rows("run_events")] == ["e"]
    # the generated date column is computed by the writer, in UTC
    assert (
        store.rows("run_events")[0]["event_date"]
        == store.rows("run_events")[0]["event_time"].date()
    )


def test_rows_are_scoped_to_the_tenant(store: MetadataStore) -> None:
    other = MetadataStore("lg", store.root, "acme")
    other.ensure()
    other.append("run_events", [{**event("x"), "tenant_id": "acme"}])
    store.append("run_events", [event("mine")])
    assert [r["event_id"] for r in store.rows("run_events")] == ["mine"]
    assert len(store.rows("run_events", all_tenants=True)) == 2


def test_additive_evolution_applies_on_start_without_losing_rows(tmp_path: Path) -> None:
    from deltalake import DeltaTable, Schema

    table = load_table_defs()["run_history"]
    old = json.loads(delta_schema_json(table))
    old["fields"] = [f for f in old["fields"] if f["name"] not in ("rows_read", "rows_written")]
    root = tmp_path / "meta"
    DeltaTable.create(
        str(root / "run_history"),
        Schema.from_json(json.dumps(old)),
        partition_by=["run_date"],
        # a table of this store version, from before two nullable columns were added
        configuration={"delta.appendOnly": "true", VERSION_PROPERTY: str(STORE_VERSION)},
        raise_if_key_not_exists=False,
    )
    store = MetadataStore("lg", str(root), "t")
    changes = store.ensure()
    assert any("rows_read, rows_written to lg.run_history" in c for c in changes)
    row = {
        "run_id": "r1",
        "pipeline_logging_id": "p",
        "tenant_id": "t",
        "dataset_id": "d",
        "layer": "bronze",
        "status": "SUCCESS",
        "start_time": utcnow(),
        "end_time": utcnow(),
        "triggered_by": "x",
        "rows_read": 3,
    }
    store.append("run_history", [row])
    assert [(r["run_id"], r["rows_read"]) for r in store.rows("run_history")] == [("r1", 3)]


def test_runtime_tables_offer_no_update_or_delete(store: MetadataStore) -> None:
    """Invariant 3 (and 4): the store API has no way to change a runtime row."""
    store.append("run_events", [event()])
    runtime = [n for n, t in load_table_defs().items() if t.kind is TableKind.APPEND_ONLY]
    for table in runtime:
        with pytest.raises(AppendOnlyViolation):
            store.update(table)
        with pytest.raises(AppendOnlyViolation):
            store.delete(table)
        with pytest.raises(AppendOnlyViolation):
            store.upsert(table, [])
    with pytest.raises(MetadataStoreError, match="only through apply"):
        store.append("jobs", [{"job_id": "j"}])
    assert len(store.rows("run_events")) == 1


def test_delta_itself_refuses_to_delete_runtime_rows(store: MetadataStore) -> None:
    from deltalake import DeltaTable

    store.append("run_events", [event()])
    with pytest.raises(Exception, match=r"(?i)append"):
        DeltaTable(store.location("run_events")).delete("status = 'RUNNING'")
    assert len(store.rows("run_events")) == 1


def test_decisions_and_versions_are_written_by_the_gate_only(store: MetadataStore) -> None:
    with pytest.raises(MetadataStoreError, match="gate only"):
        store.append("data_versions", [{}])
    with pytest.raises(MetadataStoreError, match="gate only"):
        store.append_many({"promotion_status": [{}], "run_events": [event()]})


def test_bad_rows_are_refused_before_anything_is_written(store: MetadataStore) -> None:
    before = _version(store, "run_events")
    with pytest.raises(MetadataStoreError, match="misses required column 'status'"):
        store.append("run_events", [event("ok"), {**event(), "status": None}])
    with pytest.raises(MetadataStoreError, match="unknown columns"):
        store.append("run_events", [{**event(), "colour": "blue"}])
    assert store.rows("run_events") == [] and _version(store, "run_events") == before


def test_upsert_changes_only_changed_definitions(store: MetadataStore) -> None:
    row = SourceSystemRow(source_system_id="s", kind="file", enabled=True, definition_hash="h1")
    assert store.upsert("source_systems", [row]) == 1
    version = _version(store, "source_systems")
    assert store.upsert("source_systems", [row]) == 0
    assert _version(store, "source_systems") == version  # not even an empty commit
    assert store.upsert("source_systems", [row.replaced(definition_hash="h2", name="n")]) == 1
    (stored,) = store.rows("source_systems")
    assert stored["name"] == "n" and stored["created_at"] < stored["updated_at"]


def test_the_store_compacts_its_own_tables(store: MetadataStore) -> None:
    every = compaction.TIERS[0].every
    for i in range(every + 1):
        store.append("run_events", [event(f"e{i}")])
    files = deltars.load("run_events", store.location("run_events")).file_uris()
    assert len(files) < every  # delta-rs ignores autoCompact; the store does it
    assert len(store.rows("run_events")) == every + 1


def test_compaction_passes_are_due_by_tier() -> None:
    narrow, middle, wide = compaction.TIERS
    assert compaction.due(narrow.every + 1) is None
    assert compaction.due(narrow.every) == narrow
    assert compaction.due(middle.every) == middle  # a multiple of both: the wider pass
    assert compaction.due(wide.every * 3) == wide
    assert narrow.target < middle.target < wide.target


def test_compaction_leaves_big_files_alone_but_on_its_wide_pass(
    store: MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tiered: the frequent pass merges the small files and never rewrites one past its
    target (so no step pays for rewriting a grown table); the rarer, wider pass merges those
    too. No row is lost or doubled by either."""
    narrow = compaction.Tier(every=5, target=256 * 1024)
    wide = compaction.Tier(every=2 * narrow.every, target=compaction.COMPACT_TARGET)
    monkeypatch.setattr(compaction, "TIERS", (narrow, wide))
    location = store.location("run_events")
    appended = 0

    def files() -> dict[str, int]:
        dt = deltars.load("run_events", location)
        actions = pa.table(dt.get_add_actions(flatten=True)).to_pydict()
        return dict(zip(actions["path"], actions["size_bytes"], strict=True))

    def append_through(multiple: int) -> None:
        """One-row appends up to and including the next version that is a `multiple`."""
        nonlocal appended
        while True:
            version = _version(store, "run_events") + 1  # this append's commit
            store.append("run_events", [event(f"e{appended}")])
            appended += 1
            if version % multiple == 0:  # (its compaction is one more commit)
                return

    store.append("run_events", [event(f"big{i}") for i in range(30_000)])
    appended += 30_000
    (big,) = (path for path, size in files().items() if size > narrow.target)
    append_through(narrow.every)
    if (_version(store, "run_events") - 1) % wide.every == 0:
        append_through(narrow.every)  # that pass was the wide one: take the next
    after_small = files()
    assert big in after_small  # left alone
    assert len(after_small) <= 3, after_small  # the one-row files merged
    assert len(store.rows("run_events")) == appended
    append_through(wide.every)
    after_wide = files()
    assert big not in after_wide and len(after_wide) == 1, after_wide  # merged, whole
    assert len(store.rows("run_events")) == appended


def test_optimize_clusters_tables_without_changing_rows(store: MetadataStore) -> None:
    for i in range(3):
        store.append("run_events", [event(f"e{i}")])
    assert store.optimize(["run_events"]) == ["run_events"]
    assert sorted(r["event_id"] for r in store.rows("run_events")) == ["e0", "e1", "e2"]
    table = deltars.load("run_events", store.location("run_events"))
    assert table.history(1)[0]["operation"] == "OPTIMIZE"
    assert len(table.file_uris()) == 1


def test_a_corrupt_metadata_table_gets_a_clear_error_and_nothing_is_written(
    store: MetadataStore,
) -> None:
    store.append("run_events", [event()])
    log = Path(store.location("run_events")) / "_delta_log"
    latest = sorted(log.glob("*.json"))[-1]
    latest.write_text("{not json")
    with pytest.raises(MetadataStoreError) as info:
        store.rows("run_events")
    assert "run_events" in info.value.what and "corrupt" in (info.value.fix or "")
    with pytest.raises(MetadataStoreError):
        store.append("run_events", [event("second")])
    assert latest.read_text() == "{not json"
    assert sorted(log.glob("*.json"))[-1] == latest  # no commit after the corrupt one


def test_a_missing_metadata_table_is_named(store: MetadataStore) -> None:
    shutil.rmtree(store.location("run_history"))
    with pytest.raises(MetadataStoreError, match="run_history") as info:
        store.rows("run_history")
    assert "laketx init" in (info.value.fix or "")
    assert store.ensure() == ["created lg.run_history"]  # init recreates it


@pytest.mark.subprocess
def test_compare_and_set_appends_never_both_win(store: MetadataStore, tmp_path: Path) -> None:
    """Three processes try to take the same lease at the same moment: exactly one gets it.
    They start from one line, each having read the table and chosen to take the lease before
    any of them commits (tests/support/children.py asserts it)."""
    with lease_race(store.root, tmp_path / "race", ["ds"] * 3) as outcomes:
        assert sorted(outcomes) == ["lost", "lost", "won"]


def test_a_lease_is_freed_by_release_expiry_or_its_holders_death(store: MetadataStore) -> None:
    from lakeguard.reads.reader import StoreReader
    from lakeguard.records.runs.coordination import LeaseEventRow
    from lakeguard.store import RunWriter
    from lakeguard.store.leases import live_lease
    from lakeguard.words.errors import WriteConflict

    writer, reader = RunWriter(store), StoreReader(store)
    lease = writer.acquire_lease("ds", "run1", ttl=timedelta(minutes=5))
    assert reader.runs.lease("ds") == lease
    with pytest.raises(WriteConflict, match="being written by run run1"):
        writer.acquire_lease("ds", "run2", ttl=timedelta(minutes=5))
    renewed = writer.renew_lease(lease, timedelta(minutes=10))
    assert renewed.expires_at > lease.expires_at
    writer.release_lease(renewed)
    assert reader.runs.lease("ds") is None
    second = writer.acquire_lease("ds", "run2", ttl=timedelta(minutes=5))
    with pytest.raises(WriteConflict):
        writer.renew_lease(lease, timedelta(minutes=5))  # run1's lease is long gone

    events = store.read(LeaseEventRow)
    later = second.expires_at + timedelta(seconds=1)
    assert live_lease(events, later) is None  # expired
    assert live_lease(events, store.now(), is_dead=lambda holder: True) is None  # holder died


@pytest.mark.subprocess
def test_per_key_reads_and_lineage_counts_agree_with_every_row(store: MetadataStore) -> None:
    """What DataFusion picks (each dataset's newest rows) and counts (lineage) equals what the
    same question answers over every row, for this tenant only."""
    from lakeguard.records.decisions.rows import DataVersionRow, DecisionRow
    from lakeguard.records.trust import Lineage

    now, rows = utcnow(), []
    for d, n in (("a", 4), ("b", 2)):
        for v in range(1, n + 1):
            run, at = f"{d}{v}", now + timedelta(minutes=v)
            rows.append(
                DataVersionRow(
                    tenant_id="default",
                    dataset_id=d,
                    version=v,
                    snapshot_ref=str(v),
                    schema_hash="h",
                    row_count=v,
                    rows_written=1,
                    upstream_refs="{}",
                    run_id=run,
                    promoted_at=at,
                    promoted_by="job",
                )
            )
            rows.append(  # b's first version has no evidence: not backed
                DecisionRow(
                    tenant_id="default",
                    dataset_id=d,
                    run_id=run,
                    from_layer="source",
                    to_layer="bronze",
                    allowed=True,
                    reason="ok",
                    evidence=None if run == "b1" else "{}",
                    evaluated_at=at,
                )
            )
    store.append_rows(rows, _by_gate=True)
    other = MetadataStore("lg", store.root, "acme")  # another tenant's newer version of "a"
    other.ensure()
    other.append_rows(
        [
            DataVersionRow(
                tenant_id="acme",
                dataset_id="a",
                version=9,
                snapshot_ref="9",
                schema_hash="h",
                row_count=9,
                rows_written=1,
                upstream_refs="{}",
                run_id="x",
                promoted_by="job",
                promoted_at=now + timedelta(hours=1),
            )
        ],
        _by_gate=True,
    )

    newest = store.rows(
        "data_versions",
        columns=["dataset_id", "version"],
        newest_first="version",
        limit=2,
        per="dataset_id",
    )
    assert sorted((r["dataset_id"], r["version"]) for r in newest) == [
        ("a", 3),
        ("a", 4),
        ("b", 1),
        ("b", 2),
    ]
    versions = store.read(DataVersionRow)
    decisions = store.read(DecisionRow)
    counted = store.lineage(["a", "b"])
    for d in ("a", "b"):
        assert counted[d] == Lineage.of(
            [v for v in versions if v.dataset_id == d], [x for x in decisions if x.dataset_id == d]
        )
    assert counted["a"].approved == 4 and counted["b"].backed == 1


def test_store_and_reader_need_no_spark() -> None:
    code = (
        "import sys\n"
        "import lakeguard.store, lakeguard.actors.gate, lakeguard.store.leases, lakeguard.actors.catalog.apply\n"
        "assert 'pyspark' not in sys.modules, [m for m in sys.modules if 'pyspark' in m]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def registered(spark: Any, database: str) -> set[str]:
    """The tables registered in `database`: not the temporary views other code left in the
    session, which every database lists (SHOW TABLES resolves no table, so an entry another
    lakehouse of this process left behind does not fail it)."""
    rows = spark.sql(f"SHOW TABLES IN {database}").collect()
    return {r["tableName"] for r in rows if not r["isTemporary"]}


@pytest.mark.spark
def test_spark_reads_the_tables_delta_rs_writes_by_name(lakehouse: Any) -> None:
    lakehouse.store.append("run_events", [event("seen")])
    rows = lakehouse.sql("SELECT event_id, event_date FROM lakeguard.run_events").collect()
    assert [r["event_id"] for r in rows] == ["seen"]
    # a query registers the tables it names, and only those (a cold start pays for no more)
    names = registered(lakehouse.spark, "lakeguard")
    assert "run_events" in names and names <= set(load_table_defs())
    every = " UNION ALL ".join(f"SELECT 1 FROM lakeguard.{t}" for t in sorted(load_table_defs()))
    lakehouse.sql(f"SELECT COUNT(*) FROM ({every})").collect()
    names = registered(lakehouse.spark, "lakeguard")
    assert names == set(load_table_defs())
    with pytest.raises(Exception, match=r"APPEND_ONLY|append"):
        lakehouse.sql("DELETE FROM lakeguard.run_events")


@pytest.mark.spark
def test_a_table_with_a_feature_delta_rs_cannot_write_is_refused_by_name(
    spark: Any, tmp_path: Path
) -> None:
    root = tmp_path / "meta"
    store = MetadataStore("lg_feat", str(root), "t")
    store.ensure()
    location = store.location("step_logs")
    shutil.rmtree(location)
    spark.sql(
        f"CREATE TABLE delta.`{location}` (step_logging_id STRING, tenant_id STRING) "
        "USING DELTA CLUSTER BY (tenant_id)"
    )
    before = sorted((Path(location) / "_delta_log").glob("*.json"))
    with pytest.raises(MetadataStoreError) as info:
        MetadataStore("lg_feat", str(root), "t").ensure()
    assert "step_logs" in info.value.what and "CLUSTER BY" in info.value.what
    assert info.value.details["table"] == "step_logs"
    assert sorted((Path(location) / "_delta_log").glob("*.json")) == before


@pytest.mark.spark
def test_a_store_created_by_spark_keeps_working_with_delta_rs(spark: Any, tmp_path: Path) -> None:
    """Stores written before the switch to delta-rs: Spark created them, delta-rs carries on."""
    root = tmp_path / "meta"
    old = root / "run_history"
    spark.sql(
        f"CREATE TABLE delta.`{old}` (run_id STRING NOT NULL, pipeline_logging_id STRING NOT NULL, "
        "tenant_id STRING NOT NULL, dataset_id STRING NOT NULL, layer STRING NOT NULL, "
        "status STRING NOT NULL, start_time TIMESTAMP NOT NULL, end_time TIMESTAMP NOT NULL, "
        "triggered_by STRING NOT NULL, "
        "run_date DATE NOT NULL GENERATED ALWAYS AS (CAST(start_time AS DATE))) "
        "USING DELTA PARTITIONED BY (run_date) "
        "TBLPROPERTIES ('delta.appendOnly' = 'true', 'delta.autoOptimize.autoCompact' = 'true')"
    )
    spark.sql(
        f"INSERT INTO delta.`{old}` (run_id, pipeline_logging_id, tenant_id, dataset_id, "
        "layer, status, start_time, end_time, triggered_by) VALUES ('r1', 'p', 't', 'd', "
        "'bronze', 'SUCCESS', current_timestamp(), current_timestamp(), 'x')"
    )
    store = MetadataStore("lg_old", str(root), "t")
    with pytest.raises(StoreVersionError, match="laketx migrate"):
        store.ensure()  # created before stores had a version: migrated first
    migrate(store)
    assert "rows_read" in [
        n
        for n, _, _ in deltars.existing_columns(
            deltars.load("run_history", store.location("run_history"))
        )
    ]
    now = utcnow()
    store.append(
        "run_history",
        [
            {
                "run_id": "r2",
                "pipeline_logging_id": "p",
                "tenant_id": "t",
                "dataset_id": "d",
                "layer": "bronze",
                "status": "FAILED",
                "start_time": now,
                "end_time": now,
                "triggered_by": "x",
                "rows_read": 7,
            }
        ],
    )
    assert sorted((r["run_id"], r["rows_read"]) for r in store.rows("run_history")) == [
        ("r1", None),
        ("r2", 7),
    ]
    seen = spark.read.format("delta").load(str(old)).orderBy("run_id").collect()
    assert [(r["run_id"], r["run_date"]) for r in seen] == [
        ("r1", seen[0]["start_time"].date()),
        ("r2", now.date()),
    ]


@pytest.mark.spark
def test_a_name_left_pointing_at_a_deleted_table_is_re_pointed(spark: Any, tmp_path: Path) -> None:
    """Another lakehouse opened in this process registered the name, then its files went (a
    temporary home deleted): registering the name here points it at this table."""
    from lakeguard.store.registration import register_table

    gone, here = str(tmp_path / "gone"), str(tmp_path / "here")
    spark.range(2).write.format("delta").save(gone)
    spark.range(3).write.format("delta").save(here)
    spark.sql("CREATE DATABASE IF NOT EXISTS repoint")
    spark.sql(f"CREATE TABLE repoint.t USING DELTA LOCATION '{gone}'")
    shutil.rmtree(gone)
    register_table(spark, "repoint", "t", here)
    assert spark.table("repoint.t").count() == 3
