"""The governed write path on real Spark + Delta, trying to break invariants 1 and 3-8."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.words.errors import NotRegisteredError
from openlaketx.runner import promotion, reaper
from tests.support.project import Project, assert_sound

pytestmark = pytest.mark.spark

GOOD_1 = ["GSM,1,10.5,100", "LTE,2,20.5,100", "LTE,3,-30.0,100", "UMTS,4,1.0,100"]
GOOD_2 = ["LTE,2,21.0,200", "LTE,3,-30.0,90", "GSM,5,5.0,200", "GSM,5,5.5,250"]


def q(lh: Any, sql: str) -> list[dict[str, Any]]:
    return [r.asDict() for r in lh.sql(sql).collect()]


def delta_version(lh: Any, table: str) -> int | None:
    if not lh.spark.catalog.tableExists(table):
        return None
    return int(lh.sql(f"DESCRIBE HISTORY {table}").agg({"version": "max"}).collect()[0][0])


def test_two_overlapping_deliveries_flow_to_silver_with_full_audit(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", GOOD_1)
    first = lh.run(p.job)
    assert first.status == "COMPLETED", first.error
    p.deliver("d2.csv", GOOD_2)
    second = lh.run(p.job)
    assert second.status == "COMPLETED", second.error

    # bronze keeps every delivered row; silver merges on keys, latest `updated` wins
    assert lh.read(p.bronze).count() == 8
    silver = {
        (r["radio"], r["cell"]): (r["lat"], r["updated"]) for r in lh.read(p.silver).collect()
    }
    assert silver == {
        ("GSM", 1): (10.5, 100),
        ("LTE", 2): (21.0, 200),
        ("LTE", 3): (-30.0, 100),
        ("UMTS", 4): (1.0, 100),
        ("GSM", 5): (5.5, 250),
    }

    # invariant 4: exactly one terminal row per dataset attempt and per job run
    for result in (first, second):
        runs = q(
            lh,
            f"SELECT status FROM lakeguard.pipeline_runs "
            f"WHERE pipeline_logging_id = '{result.run_id}'",
        )
        assert runs == [{"status": "COMPLETED"}]
        history = q(
            lh,
            f"SELECT dataset_id, status FROM lakeguard.run_history "
            f"WHERE pipeline_logging_id = '{result.run_id}' ORDER BY dataset_id",
        )
        assert history == [
            {"dataset_id": p.bronze, "status": "SUCCESS"},
            {"dataset_id": p.silver, "status": "SUCCESS"},
        ]
        steps = q(
            lh,
            f"SELECT DISTINCT step_type FROM lakeguard.step_logs "
            f"WHERE pipeline_logging_id = '{result.run_id}'",
        )
        assert {s["step_type"] for s in steps} >= {"read", "validate", "gate", "write", "record"}

    # invariant 3 + 7: versions strictly increase and each names the Delta commit of its run
    for dataset, table in (
        (p.bronze, f"bronze.cells{p.suffix}"),
        (p.silver, f"silver.cells{p.suffix}"),
    ):
        versions = q(
            lh,
            f"SELECT version, snapshot_ref, run_id, row_count FROM "
            f"lakeguard.data_versions WHERE dataset_id = '{dataset}' ORDER BY version",
        )
        assert [v["version"] for v in versions] == [1, 2]
        history = {
            int(h["version"]): h["userMetadata"]
            for h in lh.sql(f"DESCRIBE HISTORY {table}").collect()
        }
        for v in versions:
            tag = json.loads(history[int(v["snapshot_ref"])])["laketx"]
            assert tag["run_id"] == v["run_id"] and tag["data_version"] == v["version"]
        assert versions[-1]["row_count"] == lh.read(dataset).count()

    # invariant 5: every promotion has a recorded decision; WARN rules only log
    decisions = q(
        lh,
        f"SELECT allowed, reason FROM lakeguard.promotion_status WHERE dataset_id = '{p.bronze}'",
    )
    assert len(decisions) == 2 and all(d["allowed"] for d in decisions)
    assert any(f"WARN radio_known{p.suffix}" in d["reason"] for d in decisions)
    outcomes = q(
        lh,
        f"SELECT rule_id, outcome, failed_rows FROM lakeguard.data_quality_results "
        f"WHERE run_id = '{first.steps[0].run_id}' ORDER BY rule_id",
    )
    assert {o["rule_id"]: (o["outcome"], o["failed_rows"]) for o in outcomes} == {
        "_malformed_rows": ("PASS", 0),
        f"lat_range{p.suffix}": ("PASS", 0),
        f"radio_known{p.suffix}": ("WARN", 1),
    }
    summary = q(
        lh,
        f"SELECT overall_status, expectations_failed FROM lakeguard.dq_results "
        f"WHERE run_id = '{first.steps[0].run_id}'",
    )
    assert summary == [{"overall_status": "WARNING", "expectations_failed": 1}]
    assert StoreReader(lh.store).runs.in_flight() == []
    assert_sound(lh, p.bronze, p.silver)


def test_fail_rule_blocks_leaves_target_untouched_and_quarantines(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("ok.csv", GOOD_1)
    assert lh.run(p.job).status == "COMPLETED"
    table = f"bronze.cells{p.suffix}"
    before = (delta_version(lh, table), lh.read(p.bronze).count())

    p.deliver("bad.csv", ["GSM,10,95.0,300", "LTE,11,12.0,300"])
    blocked = lh.run(p.job)
    assert blocked.status == "BLOCKED"
    assert blocked.skipped == [p.silver]  # downstream does not run on a blocked parent
    step = blocked.steps[0]
    assert step.status == "BLOCKED" and f"lat_range{p.suffix}" in (step.reason or "")

    # invariant 6: target untouched, no version, rejected batch kept with the run id
    assert (delta_version(lh, table), lh.read(p.bronze).count()) == before
    versions = q(
        lh, f"SELECT max(version) AS v FROM lakeguard.data_versions WHERE dataset_id = '{p.bronze}'"
    )
    assert versions == [{"v": 1}]
    kept = q(
        lh,
        f"SELECT cell, _laketx_failed_rules AS rules FROM quarantine.{p.bronze} "
        f"WHERE _laketx_run_id = '{step.run_id}' ORDER BY cell",
    )
    assert kept == [{"cell": 10, "rules": [f"lat_range{p.suffix}"]}, {"cell": 11, "rules": []}]
    # each rule's staged flag column stays in the files, out of both tables' schemas
    for name in (table, f"quarantine.{p.bronze}"):
        assert not [c for c in lh.sql(f"SELECT * FROM {name}").columns if "_laketx_rule_" in c]
    decision = q(
        lh, f"SELECT allowed FROM lakeguard.promotion_status WHERE run_id = '{step.run_id}'"
    )
    assert decision == [{"allowed": False}]
    assert q(lh, f"SELECT status FROM lakeguard.run_history WHERE run_id = '{step.run_id}'") == [
        {"status": "BLOCKED"}
    ]
    explained = lh.explain(p.bronze)
    assert not explained.allowed and explained.rules
    assert_sound(lh, p.bronze, p.silver)


def test_crash_in_the_write_ends_failed_and_records_nothing(
    shared_lakehouse: Any, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", GOOD_1)

    def explode(*_: Any, **__: Any) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(promotion, "publish", explode)
    result = lh.run(p.job)
    assert result.status == "FAILED"
    history = q(
        lh,
        f"SELECT status, error_message FROM lakeguard.run_history "
        f"WHERE pipeline_logging_id = '{result.run_id}'",
    )
    assert history == [{"status": "FAILED", "error_message": "RuntimeError: disk on fire"}]
    assert q(
        lh,
        f"SELECT status FROM lakeguard.pipeline_runs WHERE pipeline_logging_id = '{result.run_id}'",
    ) == [{"status": "FAILED"}]
    assert q(lh, f"SELECT * FROM lakeguard.data_versions WHERE dataset_id = '{p.bronze}'") == []
    assert StoreReader(lh.store).runs.in_flight() == []
    assert_sound(lh, p.bronze)


def test_crash_between_commit_and_version_is_recovered_without_duplicates(
    shared_lakehouse: Any, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invariants 7 and 9: the retry adopts the orphan commit instead of writing it again."""
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", GOOD_1)
    real = lh.gate.__class__.record_version

    def crash(*_: Any, **__: Any) -> None:
        raise RuntimeError("killed before recording")

    monkeypatch.setattr(lh.gate.__class__, "record_version", crash)
    crashed = lh.run(p.bronze)
    assert crashed.status == "FAILED"
    table = f"bronze.cells{p.suffix}"
    assert lh.sql(f"SELECT count(*) FROM {table}").collect()[0][0] == 4  # committed, unrecorded
    with pytest.raises(NotRegisteredError):
        lh.read(p.bronze)  # invariant 8: an unrecorded commit is not readable through us

    monkeypatch.setattr(lh.gate.__class__, "record_version", real)
    retried = lh.run(p.bronze)
    assert retried.status == "COMPLETED", retried.error
    assert "recovered commit" in (retried.steps[0].reason or "")
    assert lh.read(p.bronze).count() == 4  # not 8: the retry did not append again
    (version,) = q(
        lh, f"SELECT version, run_id FROM lakeguard.data_versions WHERE dataset_id = '{p.bronze}'"
    )
    assert version["version"] == 1 and version["run_id"] == crashed.steps[0].run_id
    assert_sound(lh, p.bronze)


def test_readers_see_the_approved_snapshot_not_a_later_commit(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", GOOD_1)
    assert lh.run(p.bronze).status == "COMPLETED"
    lh.sql(
        f"INSERT INTO bronze.cells{p.suffix} (radio, cell, lat, updated) VALUES ('GSM', 99, 0.0, 1)"
    )  # a commit that went around the gate
    assert lh.read(p.bronze).count() == 4
    (planted,) = lh.verify({p.bronze})
    assert planted.check == "commit_around_the_gate" and planted.invariant == 8


def test_malformed_rows_within_budget_are_set_aside_beyond_it_block(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", [*GOOD_1, "LTE,not-a-number,1.0,100"])  # 1 of 5 = 20 %, budget 20 %
    ok = lh.run(p.bronze)
    assert ok.status == "COMPLETED"
    assert lh.read(p.bronze).count() == 4
    set_aside = q(
        lh,
        f"SELECT _corrupt_record FROM quarantine.{p.bronze} "
        f"WHERE _laketx_run_id = '{ok.steps[0].run_id}'",
    )
    assert set_aside == [{"_corrupt_record": "LTE,not-a-number,1.0,100"}]

    p.deliver("d2.csv", ["LTE,x,1.0,100", "GSM,y,2.0,100", "GSM,7,2.0,100"])
    blocked = lh.run(p.bronze)
    assert blocked.status == "BLOCKED" and "_malformed_rows" in (blocked.error or "")
    assert_sound(lh, p.bronze)


def test_missing_source_files_fail_with_a_clear_message(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    result = lh.run(p.bronze)
    assert result.status == "FAILED"
    assert "no files" in (result.error or "") and "incoming/*.csv" in (result.error or "")
    assert "fix:" in (result.error or "")


def test_unregistered_targets_do_not_exist(shared_lakehouse: Any) -> None:
    """Invariant 1: nothing runs, nothing is written for an unknown id."""
    lh = shared_lakehouse
    before = len(lh.store.rows("run_events"))
    with pytest.raises(NotRegisteredError, match="neither a registered job nor"):
        lh.run("no_such_dataset")
    with pytest.raises(NotRegisteredError):
        lh.read("no_such_dataset")
    assert len(lh.store.rows("run_events")) == before


@pytest.mark.subprocess
def test_a_run_whose_process_died_is_reaped_as_failed(shared_lakehouse: Any) -> None:
    """Invariant 4: a run left RUNNING by a dead worker is found and recorded FAILED."""
    lh = shared_lakehouse
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    worker = f"{socket.gethostname()}:{dead.stdout.strip()}"
    now = lh.store.now()
    base = {
        "pipeline_logging_id": "job_dead",
        "pipeline_id": "ghost_job",
        "tenant_id": "default",
        "status": "RUNNING",
        "worker_instance": worker,
        "event_time": now,
    }
    lh.store.append(
        "run_events",
        [
            {**base, "event_id": "e1", "run_id": "job_dead", "dataset_id": None},
            {**base, "event_id": "e2", "run_id": "attempt_dead", "dataset_id": "ghost_ds"},
            {
                **base,
                "event_id": "e3",
                "run_id": "alive",
                "pipeline_logging_id": "alive",
                "dataset_id": None,
                "worker_instance": f"{socket.gethostname()}:{os.getpid()}",
            },
        ],
    )
    reaped = set(reaper.reap(lh.store))
    assert reaped == {"job_dead", "attempt_dead"}  # the live worker (us) is left alone
    assert q(
        lh, "SELECT status FROM lakeguard.pipeline_runs WHERE pipeline_logging_id = 'job_dead'"
    ) == [{"status": "FAILED"}]
    (row,) = q(
        lh, "SELECT status, error_message FROM lakeguard.run_history WHERE run_id = 'attempt_dead'"
    )
    assert row["status"] == "FAILED" and "abandoned" in row["error_message"]
    assert reaper.reap(lh.store) == []  # reaping twice adds nothing


def test_published_files_carry_statistics_for_data_skipping(
    shared_lakehouse: Any, project: Project
) -> None:
    import pyarrow as pa
    from deltalake import DeltaTable

    from openlaketx.tables import dataset_location

    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", GOOD_1)
    assert lh.run(p.bronze).status == "COMPLETED"
    path = dataset_location(lh.warehouse, f"bronze.cells{p.suffix}")
    actions = pa.table(DeltaTable(path).get_add_actions(flatten=True)).to_pydict()
    assert sum(actions["num_records"]) == 4
    assert min(v for v in actions["min.cell"] if v is not None) == 1
    assert max(v for v in actions["max.lat"] if v is not None) == 20.5
    assert all(n == 0 for n in actions["null_count.cell"])
    # Spark reads the published files (and their statistics) like its own
    assert lh.sql(f"SELECT count(*) FROM bronze.cells{p.suffix} WHERE cell > 1000").first()[0] == 0
