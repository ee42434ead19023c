"""Commands that only read or change metadata never start a JVM: they work with no Java at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import Project

pytestmark = [pytest.mark.spark, pytest.mark.subprocess]

BIN = Path(sys.executable).parent


def no_java_env() -> dict[str, str]:
    """The environment with nothing on PATH but the virtualenv, and no JAVA_HOME."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    env["PATH"] = str(BIN)
    return env


def laketx(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "laketx"), "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=no_java_env(),
        timeout=120,
        check=False,
    )


def test_java_is_really_out_of_reach() -> None:
    probe = subprocess.run(
        [sys.executable, "-c", "import shutil; print(shutil.which('java'))"],
        capture_output=True,
        text=True,
        env=no_java_env(),
        check=True,
    )
    assert probe.stdout.strip() == "None"


def test_metadata_commands_run_without_a_jvm(
    shared_lakehouse: Any, project: Project, tmp_path: Path
) -> None:
    lh, p = shared_lakehouse, project
    home = tmp_path / "fresh"
    # a fresh home: init, validate, plan, apply, status, runs: all without Java
    assert laketx(home, "init", "--json").returncode == 0
    assert laketx(home, "validate", str(p.yaml)).returncode == 0
    planned = laketx(home, "plan", str(p.yaml), "--json")
    assert planned.returncode == 0, planned.stderr
    assert json.loads(planned.stdout)["summary"]["dataset_registry"]["create"] == 2
    assert laketx(home, "apply", str(p.yaml)).returncode == 0
    status = laketx(home, "status", "--json")
    assert status.returncode == 0, status.stderr
    assert {s["dataset_id"] for s in json.loads(status.stdout)} == {p.bronze, p.silver}
    assert laketx(home, "schema").returncode == 0

    # a home with real runs: runs, explain, reap, optimize read and write metadata only
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,95.0,1"])  # lat 95 breaks a FAIL rule
    assert lh.run(p.job).status == "BLOCKED"
    used = lh.config.home
    runs = laketx(used, "runs", "--json")
    assert runs.returncode == 0, runs.stderr
    assert any(
        r["pipeline_id"] == p.job and r["status"] == "BLOCKED" for r in json.loads(runs.stdout)
    )
    explained = laketx(used, "explain", p.bronze, "--json")
    assert explained.returncode == 0, explained.stderr
    decision = json.loads(explained.stdout)
    assert decision["allowed"] is False and decision["rules"]
    assert laketx(used, "reap", "--json").returncode == 0
    assert laketx(used, "optimize", "--json").returncode == 0
    # alerts: a dispatcher pass records the block's incident; the incidents are listed
    notified = laketx(used, "notify", "--once", "--json")
    assert notified.returncode == 0, notified.stderr
    listed = laketx(used, "alerts", "--json")
    assert listed.returncode == 0, listed.stderr
    assert any(
        i["subject"] == p.bronze and i["cause"] == "BLOCKED"
        for i in json.loads(listed.stdout)["incidents"]
    )

    # and what needs data says clearly that it needs Java
    sql = laketx(used, "sql", "SELECT 1")
    assert sql.returncode == 2 and "Java" in sql.stderr


def test_a_run_refused_its_datasets_starts_no_jvm(shared_lakehouse: Any, project: Project) -> None:
    """Another run holds the dataset: the refused run ends FAILED, exit 9, and never needed
    Java (its leases are taken before Spark starts)."""
    from datetime import timedelta

    from lakeguard.reads.reader import StoreReader
    from lakeguard.store import RunWriter

    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    held = RunWriter(lh.store).acquire_lease(p.bronze, "someone_else", ttl=timedelta(minutes=5))
    try:
        refused = laketx(lh.config.home, "run", p.bronze)  # progress lines on stderr
    finally:
        RunWriter(lh.store).release_lease(held)
    assert refused.returncode == 9, refused.stderr
    assert "Java" not in refused.stderr
    assert "opening the metadata store" in refused.stderr  # progress is printed, and
    assert "starting Spark" not in refused.stderr  # says only what happens
    (job_run,) = [r for r in StoreReader(lh.store).runs.job_runs(50) if r.pipeline_id == p.bronze]
    assert job_run.status == "FAILED"
