"""The scheduler with a test clock (no sleeps): ticks fire once, even from two processes; after
downtime only the latest missed tick runs; a tick is skipped while the job runs; new files and
upstream promotions start jobs. Runs with nothing new are decided without Spark."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lakeguard.records.runs.rows import RunEventRow
from lakeguard.store import RunWriter
from lakeguard.words.liveness import worker_instance
from lakeguard.words.schedule import CatchUp
from lakeguard.words.vocabulary import EventStatus, TriggerType
from openlaketx.config import LakehouseConfig
from openlaketx.service.runs import RunService
from openlaketx.service.scheduler import SKIPPED, Scheduler
from openlaketx.service.tenants import Tenants
from tests.support.environment import TEST_CONF
from tests.support.project import Project, assert_sound, cells_yaml, open_copy, write

pytestmark = pytest.mark.spark


@pytest.fixture
def home(spark: Any, template_home: Path, tmp_path: Path) -> Path:
    open_copy(template_home, tmp_path / "lakehouse")
    return tmp_path / "lakehouse"


@pytest.fixture
def runs(home: Path) -> Iterator[RunService]:
    config = LakehouseConfig.from_env(home=home, master="local[2]", spark_conf=TEST_CONF)
    service = RunService(Tenants(config), workers=2)
    yield service
    service.drain(600)


def scheduled(tmp_path: Path, runs: RunService, s: str, extra: str) -> Project:
    text = cells_yaml(s).replace(f"  - id: cells_job{s}\n", f"  - id: cells_job{s}\n{extra}")
    p = Project(write(tmp_path / "project" / "cells.yaml", text), s)
    runs.tenants.get("default").apply(p.yaml)
    return p


def created(runs: RunService, job: str) -> datetime:
    found = runs.tenants.get("default").reader.definitions.registry().job(job)
    assert found is not None and found.created_at is not None
    return found.created_at


def scheduler_runs(runs: RunService, job: str) -> list[dict[str, Any]]:
    rows = runs.tenants.get("default").store.rows("run_requests")
    return sorted(
        (r for r in rows if r["job_id"] == job and r["trigger_type"] == TriggerType.SCHEDULER),
        key=lambda r: r["scheduled_for"],
    )


def test_ticks_fire_once_and_after_downtime_only_the_latest_runs(
    tmp_path: Path, runs: RunService
) -> None:
    p = scheduled(tmp_path, runs, "_sch1", "    schedule: '*/10 * * * *'\n")
    p.deliver("d1.csv", ["GSM,1,10.0,1"])  # a source that never delivered fails its run
    start = created(runs, p.job)
    base = start.replace(minute=start.minute - start.minute % 10, second=0, microsecond=0)
    clock = {"now": base + timedelta(minutes=35)}
    scheduler = Scheduler(runs, clock=lambda: clock["now"])
    first = scheduler.tick()
    assert [(f.job_id, f.trigger) for f in first] == [(p.job, TriggerType.SCHEDULER)]
    assert scheduler.tick() == []  # the same tick is never run twice
    runs.wait_idle(120)
    clock["now"] += timedelta(minutes=10)
    (second,) = scheduler.tick()
    runs.wait_idle(120)
    claimed = scheduler_runs(runs, p.job)
    assert [r["scheduled_for"] for r in claimed] == [
        base + timedelta(minutes=30),  # the latest of the ticks missed since the job exists
        base + timedelta(minutes=40),
    ]
    tick_of = {r["run_id"]: r["scheduled_for"] for r in claimed}
    assert tick_of[first[0].run_id] == base + timedelta(minutes=30)  # which tick each fired
    assert tick_of[second.run_id] == base + timedelta(minutes=40)
    lh = runs.tenants.get("default")
    ended = {r.pipeline_logging_id: r for r in lh.reader.runs.job_runs(20)}
    for row in claimed:
        assert ended[row["run_id"]].status == "COMPLETED"
        assert ended[row["run_id"]].trigger_type == "scheduler"
        assert ended[row["run_id"]].scheduled_for == row["scheduled_for"]  # `runs --json` too
    # catching up on every missed tick, when asked
    every = Scheduler(
        runs, clock=lambda: clock["now"] + timedelta(minutes=30), catch_up=CatchUp.ALL
    )
    caught_up = every.tick()
    assert len(caught_up) == 3
    runs.wait_idle(120)
    tick_of = {r["run_id"]: r["scheduled_for"] for r in scheduler_runs(runs, p.job)}
    assert sorted(tick_of[f.run_id] for f in caught_up if f.run_id) == [
        base + timedelta(minutes=m) for m in (50, 60, 70)
    ]
    assert_sound(lh, p.bronze, p.silver)


def test_a_tick_is_skipped_while_the_previous_run_is_in_flight(
    tmp_path: Path, runs: RunService
) -> None:
    p = scheduled(tmp_path, runs, "_sch2", "    schedule: '0 * * * *'\n")
    lh = runs.tenants.get("default")
    RunWriter(lh.store).append(
        [
            RunEventRow(
                run_id="f" * 32,
                pipeline_logging_id="f" * 32,
                pipeline_id=p.job,
                tenant_id=lh.store.tenant,
                status=EventStatus.RUNNING,
                event_time=lh.store.now(),
                worker_instance=worker_instance(),  # alive: this very process
                trigger_type=TriggerType.MANUAL,
            )
        ]
    )
    now = created(runs, p.job) + timedelta(hours=1, minutes=5)
    (fired,) = Scheduler(runs, clock=lambda: now).tick()
    assert fired.run_id is None and "in flight" in fired.detail
    (claimed,) = scheduler_runs(runs, p.job)
    assert claimed["run_id"] == SKIPPED
    assert Scheduler(runs, clock=lambda: now).tick() == []  # skipped is claimed: never run later


@pytest.mark.subprocess
def test_two_scheduler_processes_over_the_same_ticks_give_one_run_per_tick(
    tmp_path: Path, runs: RunService, home: Path
) -> None:
    p = scheduled(tmp_path, runs, "_sch3", "    schedule: '*/5 * * * *'\n")
    start = created(runs, p.job)
    laketx = Path(sys.executable).with_name("laketx")
    for minutes in (11, 16):  # two passes, each by two processes at once
        now = start + timedelta(minutes=minutes)
        args = [str(laketx), "--home", str(home), "--master", "local[1]", "scheduler"]
        args += ["--once", "--now", now.isoformat(), "--json"]
        procs = [
            subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=600)
            assert proc.returncode == 0, err[-2000:]
    claimed = scheduler_runs(runs, p.job)
    ticks = [r["scheduled_for"] for r in claimed]
    assert len(ticks) == len(set(ticks)) == 2  # one outcome per tick, whoever got there first
    assert SKIPPED not in [r["run_id"] for r in claimed]
    lh = runs.tenants.get("default")
    ended = [r for r in lh.reader.runs.job_runs(50) if r.pipeline_id == p.job]
    assert sorted(r.pipeline_logging_id for r in ended) == sorted(r["run_id"] for r in claimed)


def test_a_new_file_and_an_upstream_promotion_start_their_jobs(
    tmp_path: Path, runs: RunService
) -> None:
    s = "_trg"
    text = cells_yaml(s).replace(
        f"  - id: cells_job{s}\n    tasks:\n"
        f"      - {{id: ingest, dataset: bronze_cells{s}}}\n"
        f"      - {{id: clean, dataset: silver_cells{s}, depends_on: [ingest]}}\n",
        f"  - id: ingest_job{s}\n    triggers: [file_arrival]\n    tasks:\n"
        f"      - {{id: ingest, dataset: bronze_cells{s}}}\n"
        f"  - id: clean_job{s}\n    triggers: [upstream]\n    tasks:\n"
        f"      - {{id: clean, dataset: silver_cells{s}}}\n",
    )
    p = Project(write(tmp_path / "project" / "cells.yaml", text), s)
    lh = runs.tenants.get("default")
    lh.apply(p.yaml)
    scheduler = Scheduler(runs)
    assert scheduler.tick() == []  # no file yet, nothing upstream
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    (arrived,) = scheduler.tick()
    assert arrived.job_id == f"ingest_job{s}" and arrived.trigger == TriggerType.FILE_ARRIVAL
    assert scheduler.tick() == []  # the same files: the same request, no second run
    runs.wait_idle(600)
    (upstream,) = scheduler.tick()
    assert upstream.job_id == f"clean_job{s}" and upstream.trigger == TriggerType.UPSTREAM
    runs.wait_idle(600)
    assert scheduler.tick() == []
    assert [v.version for v in lh.reader.versions.versions(p.silver)] == [1]
    triggers = {r.pipeline_id: r.trigger_type for r in lh.reader.runs.job_runs(20)}
    assert triggers[f"ingest_job{s}"] == "file_arrival"
    assert triggers[f"clean_job{s}"] == "upstream"
    assert_sound(lh, p.bronze, p.silver)


def test_a_file_whose_run_never_started_is_tried_again_after_a_backoff(
    tmp_path: Path, runs: RunService
) -> None:
    """A run accepted as the service began to stop is recorded FAILED without starting: its
    file still waits, and the same situation is tried again once a backoff has passed."""
    p = scheduled(tmp_path, runs, "_again", "    triggers: [file_arrival]\n")
    p.deliver("d1.csv", ["GSM,1,10.0,1"])
    lh = runs.tenants.get("default")
    clock = {"now": lh.store.now()}
    stopping = RunService(runs.tenants, workers=1)
    stopping._stop.set()  # drain's first step: what is accepted now never starts
    (first,) = Scheduler(stopping, clock=lambda: clock["now"]).tick()
    stopping.wait_idle(120)
    stopping.drain(0)
    assert first.run_id is not None
    failed = lh.reader.runs.job_run(first.run_id)
    assert failed is not None and failed.status == "FAILED"
    scheduler = Scheduler(runs, clock=lambda: clock["now"])
    assert scheduler.tick() == []  # the same situation, within its backoff
    clock["now"] += timedelta(minutes=2)  # the first backoff is 30 to 60 s
    (again,) = scheduler.tick()
    assert again.trigger == TriggerType.FILE_ARRIVAL and again.run_id is not None
    runs.wait_idle(600)
    done = lh.reader.runs.job_run(again.run_id)
    assert done is not None and done.status == "COMPLETED"
    assert scheduler.tick() == []
    assert_sound(lh, p.bronze, p.silver)
