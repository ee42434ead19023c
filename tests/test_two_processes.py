"""A second process queries the store by name while this one is running a job."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lakeguard.store import StoreReader
from tests.conftest import Project, assert_sound

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

    from lakeguard.store import RunWriter

    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    writer = RunWriter(lh.store)
    held = writer.acquire_lease(p.bronze, "someone_else", ttl=timedelta(minutes=5))

    refused = _laketx(lh.config.home, "run", p.bronze, "--json")
    out, err = refused.communicate(timeout=600)
    assert refused.returncode == 9, err
    result = json.loads(out)
    # refused before its first write: no attempt at all, the reason on the run
    assert result["steps"] == [] and result["status"] == "FAILED"
    assert "being written by run someone_else" in result["error"]
    assert StoreReader(lh.store).versions(p.bronze) == []

    waiting = _laketx(lh.config.home, "run", p.bronze, "--wait", "300", "--json")
    import time

    time.sleep(3)
    writer.release_lease(held)  # the other run finishes: the waiting one proceeds
    out, err = waiting.communicate(timeout=600)
    assert waiting.returncode == 0, err
    assert [v.version for v in StoreReader(lh.store).versions(p.bronze)] == [1]
    assert StoreReader(lh.store).lease(p.bronze) is None  # given back at the end


def _job_runs(lh: Any, job: str) -> list[Any]:
    return [r for r in StoreReader(lh.store).job_runs(100) if r.pipeline_id == job]


@pytest.mark.parametrize("processes", [2, 3])
def test_runs_of_one_job_at_once_exactly_one_does_the_work(
    shared_lakehouse: Any, project: Project, processes: int
) -> None:
    """The job's leases are taken before anything is written, all at once: of several
    processes running the same job, one runs it whole and the others exit 9 having written
    nothing (no attempt, no version, no data); the end state is that of a single run."""
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1", "LTE,3,30.0,1"])
    runs = [_laketx(lh.config.home, "run", p.job, "--json") for _ in range(processes)]
    results = [(r.communicate(timeout=900), r.returncode) for r in runs]
    codes = sorted(code for _, code in results)
    assert codes == [0] + [9] * (processes - 1), [err[-2000:] for (_, err), _ in results]
    for (out, _), code in results:
        result = json.loads(out)
        if code == 9:
            assert result["steps"] == [] and "is being written by run" in result["error"]
        else:
            assert [s["status"] for s in result["steps"]] == ["SUCCESS", "SUCCESS"]
    reader = StoreReader(lh.store)
    assert [v.version for v in reader.versions(p.bronze)] == [1]
    assert [v.version for v in reader.versions(p.silver)] == [1]
    assert lh.read(p.silver).count() == 3
    attempts = lh.sql(
        f"SELECT dataset_id, status FROM lakeguard.run_history WHERE dataset_id IN "
        f"('{p.bronze}', '{p.silver}')"
    ).collect()
    assert sorted((a.dataset_id, a.status) for a in attempts) == [
        (p.bronze, "SUCCESS"),
        (p.silver, "SUCCESS"),
    ]
    assert sorted(r.status for r in _job_runs(lh, p.job)) == ["COMPLETED"] + ["FAILED"] * (
        processes - 1
    )
    assert all(reader.lease(d) is None for d in (p.bronze, p.silver))
    assert_sound(lh, p.bronze, p.silver)


def test_a_waiting_run_of_the_same_job_runs_after_the_first(
    shared_lakehouse: Any, project: Project
) -> None:
    """With --wait, the second run waits for all the job's datasets, then runs on what is
    new by then (here: nothing); two jobs sharing no dataset never wait for each other."""
    from datetime import timedelta

    from lakeguard.store import RunWriter

    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    writer = RunWriter(lh.store)
    # another job holds the silver dataset only: this job must wait, a bronze-only run must not
    held = writer.acquire_leases([p.silver], "other_job", ttl=timedelta(minutes=5))
    assert lh.run(p.bronze).status == "COMPLETED"  # shares nothing with the holder
    waiting = _laketx(lh.config.home, "run", p.job, "--wait", "300", "--json")
    import time

    time.sleep(3)
    assert waiting.poll() is None  # still waiting, having written nothing
    assert StoreReader(lh.store).versions(p.silver) == []
    writer.release_leases(held)
    out, err = waiting.communicate(timeout=900)
    assert waiting.returncode == 0, err
    steps = json.loads(out)["steps"]
    assert [s["dataset_id"] for s in steps] == [p.bronze, p.silver]
    assert [v.version for v in StoreReader(lh.store).versions(p.silver)] == [1]
