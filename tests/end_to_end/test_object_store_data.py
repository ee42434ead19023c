"""The whole lakehouse on a real S3-compatible object store (SeaweedFS, started by the suite).

Data tables, staged batches, quarantine and the file source's deliveries and archive live under
`s3://` prefixes (LAKETX_WAREHOUSE, LAKETX_METADATA_HOME, a source root); only the home's own
files stay local. The scenario of tests/support/scenario.py (append, merge, scd2, SQL model, a blocked
batch, an additive drift, verify, replay) runs there in a process of its own (its Spark session
reaches S3 through s3a) and must equal a local run of the same deliveries; runs killed at each
step there must leave every row loaded exactly once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from openlaketx.tables import dataset_location
from tests.openlaketx.cli.test_no_jvm import BIN, no_java_env
from tests.support import scenario

pytestmark = [pytest.mark.spark, pytest.mark.subprocess, pytest.mark.server]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def on_s3(s3_server: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Settings putting a fresh lakehouse on the server (children inherit them)."""
    prefix: str = s3_server.point_at(monkeypatch)
    monkeypatch.setenv("LAKETX_METADATA_HOME", f"{prefix}/metadata")
    monkeypatch.setenv("LAKETX_WAREHOUSE", f"{prefix}/warehouse")
    monkeypatch.setenv("LAKETX_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LAKETX_MASTER", "local[1]")
    return prefix


def child(feed: str, *actions: str, dies: bool = False) -> list[dict[str, Any]]:
    """`python -m tests.support.scenario FEED ACTION...` in a process of its own; its JSON lines."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.scenario", feed, *actions],
        cwd=ROOT,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == (137 if dies else 0), done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _without_clock(versions: dict[str, list[list[Any]]]) -> dict[str, list[list[Any]]]:
    return {
        ds: [v[:2] if ds == "silver_ref_hist" else v for v in found]
        for ds, found in versions.items()
    }


@pytest.fixture(scope="module")
def local(shared_lakehouse: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The scenario run on a local lakehouse (this worker's Spark session): the reference."""
    feed = tmp_path_factory.mktemp("local-feed")
    return scenario.run_scenario(shared_lakehouse, scenario.Feed(str(feed)))


def test_runs_on_the_object_store_killed_at_each_step_equal_an_uninterrupted_local_run(
    local: dict[str, Any], on_s3: str, s3_server: Any, tmp_path: Path
) -> None:
    """Runs die before their publish, halfway through moving a blocked batch into quarantine
    (files copied, the staged ones not yet deleted) and before their version is recorded; the
    next run recovers each time. The end state equals the local run of the same deliveries:
    versions with their rows and content hashes, quarantine, gold, the drift's new column,
    `verify` and a replay. A last run, with nothing new, decides so without a JVM."""
    feed = f"{on_s3}/feed"
    runs = child(
        feed, "apply", "deliver:0", "run", "deliver:1", "arm:before_publish", "run", dies=True
    )
    runs += child(feed, "run", "deliver:2", "arm:mid_move", "run", dies=True)
    runs += child(feed, "run", "take:2", "deliver:3", "arm:before_version", "run", dies=True)
    # the last recovery holds its leases while another process runs the same job: refused,
    # so every data-table commit, Spark's or delta-rs's, is made by the lease holder alone
    signal = tmp_path / "hold"
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.support.scenario", feed, f"hold_run:{signal}", "report"],
        cwd=ROOT,
        env=os.environ.copy(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 900
        while not signal.with_suffix(".held").exists():
            assert holder.poll() is None, holder.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the holding run never staged"
            time.sleep(0.2)
        (other,) = child(feed, "run")
        assert other["run"].rsplit(".", 1)[-1] == "FAILED"
        assert other["refused"] == "WriteConflict"  # the leases are taken
    finally:
        signal.with_suffix(".go").touch()
        out, err = holder.communicate(timeout=900)
    assert holder.returncode == 0, err[-3000:]
    *last, got = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    runs += last
    statuses = [r["run"].rsplit(".", 1)[-1] for r in runs]
    # d1; d2 recovered; d3 blocked (its quarantine copy left uncommitted); d4 recovered
    assert statuses == ["COMPLETED", "COMPLETED", "BLOCKED", "COMPLETED"]
    assert [s.rsplit(".", 1)[-1] for s in local["statuses"]] == [
        "COMPLETED",
        "COMPLETED",
        "BLOCKED",
        "COMPLETED",
    ]
    # the same versions with the same rows, and the same content hashes except scd2's (its
    # validity columns carry each run's clock); the history itself is the same
    assert _without_clock(got["versions"]) == _without_clock(local["versions"])
    assert got["history"] == local["history"] and len(got["history"]) == 7
    assert got["quarantined"] == local["quarantined"] == 3
    assert got["gold"] == local["gold"]
    assert "city" in got["columns"] and got["columns"] == local["columns"]
    assert got["violations"] == [] and local["violations"] == []
    assert got["replay_matches"] and local["replay_matches"]

    # every table is objects in the bucket; the home holds none of them
    keys = s3_server.keys_under(f"{on_s3}/warehouse")
    base = on_s3.removeprefix("s3://")
    for table in ("bronze/ref", "silver/ref", "silver/ref_hist", "gold/ref_totals"):
        assert any(k.startswith(f"{base}/warehouse/{table}/_delta_log/") for k in keys), table
    assert not any("laketx_scratch" in k or "laketx_landing" in k for k in keys)
    assert not (tmp_path / "home" / "warehouse").exists()
    # delivered files were archived on the object store once promoted; the blocked one was
    # taken away by the operator and never archived
    delivered = scenario.feed_at(feed)
    assert delivered.names("incoming") == []
    assert delivered.names("archive") == ["d1.csv", "d2.csv", "d4.csv"]

    # nothing new delivered: the next run decides so from a listing of the feed's prefix and
    # the metadata, both on the server, with no Java to start (as for a local feed)
    noop = subprocess.run(
        [str(BIN / "laketx"), "run", scenario.JOB, "--json"],
        env=no_java_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert noop.returncode == 0, noop.stderr[-3000:]
    assert "starting Spark" not in noop.stderr and "Java" not in noop.stderr
    reasons = {s["dataset_id"]: s["reason"] for s in json.loads(noop.stdout)["steps"]}
    assert reasons["bronze_ref"] == f"no new file at {feed}/incoming/*.csv"
    assert reasons["silver_ref"] == "no new approved version of bronze_ref"


def test_the_warehouse_location_names_every_table_on_the_object_store(on_s3: str) -> None:
    from openlaketx.config import LakehouseConfig

    cfg = LakehouseConfig.from_env()
    assert cfg.warehouse == f"{on_s3}/warehouse"
    assert cfg.for_tenant("acme").warehouse == f"{on_s3}/warehouse/tenants/acme"
    assert cfg.uses_object_store
    assert dataset_location(cfg.warehouse, "silver.ref") == f"{on_s3}/warehouse/silver/ref"
