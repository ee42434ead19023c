"""A second process queries the store by name while this one is running a job."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from tests.support.children import HELD, decisions, laketx_watched, release, wait_for_decisions
from tests.support.project import Project, assert_sound

pytestmark = [pytest.mark.spark, pytest.mark.subprocess]


def test_a_new_process_queries_metadata_while_a_run_is_in_progress(
    shared_lakehouse: Any, project: Project
) -> None:
    """The other process runs from inside this run (its progress hook, while bronze is being
    staged): it sees this very run in flight and no version yet."""
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    laketx = Path(sys.executable).with_name("laketx")
    query = (
        "SELECT 'running' AS what, max(pipeline_logging_id) AS n FROM lakeguard.run_events "
        f"WHERE pipeline_id = '{p.job}' AND dataset_id IS NULL AND status = 'RUNNING' "
        "UNION ALL SELECT 'versions', CAST(count(*) AS STRING) FROM lakeguard.data_versions "
        f"WHERE dataset_id IN ('{p.bronze}', '{p.silver}')"
    )
    answered: list[subprocess.CompletedProcess[str]] = []

    def mid_run(message: str) -> None:
        if message == f"{p.bronze}: stage" and not answered:
            other = [str(laketx), "--home", str(lh.config.home), "--master", "local[1]"]
            answered.append(
                subprocess.run(
                    [*other, "sql", query, "--json"],
                    capture_output=True,
                    text=True,
                    timeout=600,
                    check=False,
                )
            )

    result = lh.run(p.job, progress=mid_run)
    (other,) = answered
    assert other.returncode == 0, other.stderr
    rows = json.loads(other.stdout)
    assert isinstance(rows, list) and len(rows) == 2 and all("n" in r for r in rows)
    assert {r["what"]: r["n"] for r in rows} == {"running": result.run_id, "versions": "0"}
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
    shared_lakehouse: Any, project: Project, tmp_path: Path
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
    assert StoreReader(lh.store).versions.versions(p.bronze) == []

    folder = tmp_path / "leases"
    args = ("--home", str(lh.config.home), "--master", "local[1]")
    waiting = laketx_watched(folder, "waiting", *args, "run", p.bronze, "--wait", "300", "--json")
    # it found the dataset held (its own log says so) before the holder lets go
    wait_for_decisions(folder, ["waiting"], [waiting], timeout=300)
    assert decisions(folder, "waiting")[0] == HELD and waiting.poll() is None
    writer.release_lease(held)  # the other run finishes: the waiting one proceeds
    out, err = waiting.communicate(timeout=600)
    assert waiting.returncode == 0, err
    assert "ACQUIRE" in decisions(folder, "waiting")
    assert [v.version for v in StoreReader(lh.store).versions.versions(p.bronze)] == [1]
    assert StoreReader(lh.store).runs.lease(p.bronze) is None  # given back at the end


def _job_runs(lh: Any, job: str) -> list[Any]:
    return [r for r in StoreReader(lh.store).runs.job_runs(100) if r.pipeline_id == job]


@pytest.mark.parametrize("processes", [2, 3])
def test_runs_of_one_job_at_once_exactly_one_does_the_work(
    shared_lakehouse: Any, project: Project, processes: int, tmp_path: Path
) -> None:
    """The job's leases are taken before anything is written, all at once: of several
    processes running the same job, one runs it whole and the others exit 9 having written
    nothing (no attempt, no version, no data); the end state is that of a single run."""
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1", "LTE,3,30.0,1"])
    folder, names = tmp_path / "leases", [f"run{i}" for i in range(processes)]
    args = ("--home", str(lh.config.home), "--master", "local[1]")
    runs = [
        laketx_watched(folder, name, *args, "run", p.job, "--json", hold_first=True)
        for name in names
    ]
    # one start line: every process has read the lease table and chosen to take the job's
    # datasets before any of them commits
    first = wait_for_decisions(folder, names, runs, timeout=600)
    assert all(d == ["ACQUIRE"] for d in first.values()), first
    release(folder)
    results = [(r.communicate(timeout=900), r.returncode) for r in runs]
    codes = sorted(code for _, code in results)
    assert codes == [0] + [9] * (processes - 1), [err[-2000:] for (_, err), _ in results]
    for name, ((out, _), code) in zip(names, results, strict=True):
        result = json.loads(out)
        if code == 9:
            assert result["steps"] == [] and "is being written by run" in result["error"]
            assert decisions(folder, name) == ["ACQUIRE", HELD]  # lost the commit, then saw
        else:
            assert [s["status"] for s in result["steps"]] == ["SUCCESS", "SUCCESS"]
    reader = StoreReader(lh.store)
    assert [v.version for v in reader.versions.versions(p.bronze)] == [1]
    assert [v.version for v in reader.versions.versions(p.silver)] == [1]
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
    assert all(reader.runs.lease(d) is None for d in (p.bronze, p.silver))
    assert_sound(lh, p.bronze, p.silver)


def test_a_waiting_run_of_the_same_job_runs_after_the_first(
    shared_lakehouse: Any, project: Project, tmp_path: Path
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
    folder = tmp_path / "leases"
    args = ("--home", str(lh.config.home), "--master", "local[1]")
    waiting = laketx_watched(folder, "waiting", *args, "run", p.job, "--wait", "300", "--json")
    wait_for_decisions(folder, ["waiting"], [waiting], timeout=300)
    assert decisions(folder, "waiting")[0] == HELD  # it found silver held
    assert waiting.poll() is None  # still waiting, having written nothing
    assert StoreReader(lh.store).versions.versions(p.silver) == []
    writer.release_leases(held)
    out, err = waiting.communicate(timeout=900)
    assert waiting.returncode == 0, err
    steps = json.loads(out)["steps"]
    assert [s["dataset_id"] for s in steps] == [p.bronze, p.silver]
    assert "ACQUIRE" in decisions(folder, "waiting")  # taken once silver was let go
    assert [v.version for v in StoreReader(lh.store).versions.versions(p.silver)] == [1]
