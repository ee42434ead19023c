"""A second process queries the store by name while this one is running a job."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Project

pytestmark = pytest.mark.spark


def test_a_new_process_queries_metadata_while_a_run_is_in_progress(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    laketx = Path(sys.executable).with_name("laketx")
    query = (
        "SELECT count(*) AS n FROM lakeguard.run_history "
        "UNION ALL SELECT count(*) FROM lakeguard.data_versions"
    )
    other = subprocess.Popen(
        [
            str(laketx),
            "--home",
            str(lh.config.home),
            "--master",
            "local[1]",
            "sql",
            query,
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    result = lh.run(p.job)  # runs while the other process starts Spark and reads the store
    out, err = other.communicate(timeout=600)
    assert other.returncode == 0, err
    rows = json.loads(out)
    assert isinstance(rows, list) and len(rows) == 2 and all("n" in r for r in rows)
    assert result.status == "COMPLETED", result.error
    # and a fresh process sees this run's rows afterwards, by name
    after = subprocess.run(
        [
            str(laketx),
            "--home",
            str(lh.config.home),
            "--master",
            "local[1]",
            "sql",
            "--json",
            f"SELECT status FROM lakeguard.pipeline_runs WHERE pipeline_logging_id = '{result.run_id}'",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    assert json.loads(after.stdout) == [{"status": "COMPLETED"}]


def _laketx(home: Path, *args: str) -> subprocess.Popen[str]:
    laketx = Path(sys.executable).with_name("laketx")
    return subprocess.Popen(
        [str(laketx), "--home", str(home), "--master", "local[1]", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_run_never_races_another_on_the_same_dataset(
    shared_lakehouse: Any, project: Project
) -> None:
    """The lease: a held dataset makes a second run exit 9 (or wait); a dead holder frees it."""
    from datetime import timedelta

    from lakeguard.store import RunWriter, StoreReader

    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    writer = RunWriter(lh.store)
    held = writer.acquire_lease(p.bronze, "someone_else", ttl=timedelta(minutes=5))

    refused = _laketx(lh.config.home, "run", p.bronze, "--json")
    out, err = refused.communicate(timeout=600)
    assert refused.returncode == 9, err
    (step,) = json.loads(out)["steps"]
    assert step["status"] == "FAILED" and "being written by run someone_else" in step["reason"]
    assert StoreReader(lh.store).versions(p.bronze) == []

    waiting = _laketx(lh.config.home, "run", p.bronze, "--wait", "300", "--json")
    import time

    time.sleep(3)
    writer.release_lease(held)  # the other run finishes: the waiting one proceeds
    out, err = waiting.communicate(timeout=600)
    assert waiting.returncode == 0, err
    assert [v.version for v in StoreReader(lh.store).versions(p.bronze)] == [1]
    assert StoreReader(lh.store).lease(p.bronze) is None  # given back at the end
