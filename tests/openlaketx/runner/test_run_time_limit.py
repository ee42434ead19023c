"""Cost limits of a run (OWASP API4): its time limit cancels its Spark jobs and ends it FAILED
with nothing published; its jobs run in its tenant's FAIR scheduler pool. The deadline's own
tests need no Spark; the rest run real jobs in the process's SparkSession."""

from __future__ import annotations

import functools
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from lakeguard.reads.reader import StoreReader
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.words.errors import ConfigError, TimeLimitExceeded
from lakeguard.words.vocabulary import AttemptStatus, JobStatus
from openlaketx.config import LakehouseConfig
from openlaketx.lakehouse import Lakehouse
from openlaketx.runner import dataset_step, job, promotion
from openlaketx.runner.context import StepResult
from openlaketx.runner.deadline import RunDeadline
from openlaketx.spark import SCHEDULER_POOL
from tests.support.project import Project, assert_sound, cells_yaml, write

REASON = (
    "the run exceeded its time limit of {} s (run_time_limit_seconds); its Spark jobs were "
    "cancelled; nothing was published"
)


class FakeTimer:
    """A timer that fires only when the test says so."""

    def __init__(self, interval: float, function: Callable[[], None]) -> None:
        self.interval, self.fire = interval, function
        self.daemon = False
        self.started = self.cancelled = False

    def start(self) -> None:
        self.started = True

    def cancel(self) -> None:
        self.cancelled = True

    def join(self, timeout: float | None = None) -> None:
        return None

    def is_alive(self) -> bool:
        return False


def armed(limit: float = 2.0) -> tuple[RunDeadline, list[FakeTimer], list[str]]:
    timers: list[FakeTimer] = []
    cancels: list[str] = []

    def timer(interval: float, function: Callable[[], None]) -> FakeTimer:
        timers.append(FakeTimer(interval, function))
        return timers[-1]

    deadline = RunDeadline(limit, timer=timer, clock=lambda: 0.0)
    deadline.start(lambda: cancels.append("cancelled"))
    return deadline, timers, cancels


def test_a_deadline_stopped_in_time_never_cancels_even_if_its_timer_fires_late() -> None:
    deadline, timers, cancels = armed()
    [timer] = timers
    assert timer.started and timer.daemon and timer.interval == 2.0
    deadline.check()
    deadline.stop()
    assert timer.cancelled
    timer.fire()  # a timer thread that was already on its way: the thread's next run is safe
    assert cancels == [] and timers == [timer]
    deadline.check()


def test_a_fired_deadline_cancels_the_run_s_work_and_every_check_after_stops_it() -> None:
    deadline, timers, cancels = armed(2.5)
    timers[0].fire()
    assert cancels == ["cancelled"]
    # a job the run submits after the cancel is cancelled at the next beat, until it ends
    assert [t.interval for t in timers] == [2.5, deadline.again] and timers[1].started
    timers[1].fire()
    assert cancels == ["cancelled"] * 2
    deadline.stop()
    assert timers[2].cancelled
    timers[2].fire()
    assert len(cancels) == 2 and len(timers) == 3
    with pytest.raises(TimeLimitExceeded) as info:
        deadline.check()
    assert info.value.what == REASON.format("2.5")
    with pytest.raises(TimeLimitExceeded):
        deadline.begin_publishing()  # no decision is recorded past the limit
    crash = RuntimeError("a Spark job was cancelled")
    explained = deadline.explain(crash)
    assert isinstance(explained, TimeLimitExceeded) and explained.__cause__ is crash
    assert deadline.explain(KeyboardInterrupt()).__class__ is KeyboardInterrupt


def test_the_limit_never_cuts_a_decided_batch_it_stops_the_run_after_it() -> None:
    deadline, [timer], cancels = armed()
    deadline.begin_publishing()
    timer.fire()
    deadline.check()  # the decision, the commit and its version are one step
    deadline.end_publishing()
    assert cancels == []
    with pytest.raises(TimeLimitExceeded):
        deadline.check()
    assert deadline.exceeded(["a v1"]).what.endswith(
        "nothing was published but a v1, promoted before the limit"
    )


def test_no_limit_is_the_default_and_the_environment_sets_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deadline = RunDeadline()
    deadline.start(lambda: None)
    deadline.check()
    assert LakehouseConfig.from_env().run_time_limit_seconds is None
    monkeypatch.setenv("LAKETX_RUN_TIME_LIMIT", "2.5")
    assert LakehouseConfig.from_env().run_time_limit_seconds == 2.5
    monkeypatch.setenv("LAKETX_RUN_TIME_LIMIT", "0")
    with pytest.raises(ConfigError):
        LakehouseConfig.from_env()


# A bronze dataset whose WARN rule is slow on purpose, and allowed: levenshtein is quadratic
# in what it reads (4000 characters a side: ~1 s a row on the development machine, so the 400
# rows of `slow_rows` take minutes in the one task that stages them; seconds even on a fast
# machine with C2).
PAIRS_YAML = """
version: 1
source_systems:
  - id: pairfeed{s}
    options: {{root: feed}}
source_objects:
  - id: pairs{s}_csv
    system: pairfeed{s}
    locator: "incoming/*.csv"
    options: {{header: "true"}}
    dataset: bronze_pairs{s}
    columns:
      - {{name: k, type: bigint}}
      - {{name: a, type: string}}
      - {{name: b, type: string}}
datasets:
  - id: bronze_pairs{s}
    layer: bronze
    table: bronze.pairs{s}
rules:
  - {{id: distance{s}, dataset: bronze_pairs{s}, type: EXPRESSION, expression: "levenshtein(a, b) >= 0", severity: WARN}}
"""


def slow_rows(count: int = 400, width: int = 4000) -> str:
    rng = random.Random(7)
    lines = [
        f"{k},{''.join(rng.choices('ab', k=width))},{''.join(rng.choices('ab', k=width))}"
        for k in range(count)
    ]
    return "k,a,b\n" + "\n".join(lines) + "\n"


def limited(lh: Any, seconds: float) -> Lakehouse:
    """The same lakehouse (same store, same session) with a run time limit."""
    return Lakehouse.open(lh.config.model_copy(update={"run_time_limit_seconds": seconds}))


def causes(exc: BaseException | None) -> str:
    """The messages of `exc` and of everything that caused it."""
    found: dict[int, str] = {}
    while exc is not None and id(exc) not in found:  # a chain can loop back on itself
        found[id(exc)] = str(exc)
        exc = exc.__cause__ or exc.__context__
    return "\n".join(found.values())


class GatedTimer(threading.Timer):
    """A real timer that starts counting once `gate` is open."""

    def __init__(self, gate: threading.Event, interval: float, function: Callable[[], None]):
        super().__init__(interval, function)
        self.gate = gate

    def run(self) -> None:
        while not self.gate.wait(0.05):
            if self.finished.is_set():
                return
        super().run()


class FromStage:
    """Runs' deadlines whose time starts when their stage phase begins: the phases before it
    take 1 to 7 s on the shared development machine, so a limit of a couple of seconds would
    otherwise fall anywhere. Their timers, and the cancelling, are real."""

    def __init__(self) -> None:
        self.gates: list[tuple[threading.Event, list[float]]] = []

    def deadline(self, limit: float | None) -> RunDeadline:
        gate, began = threading.Event(), [0.0]
        self.gates.append((gate, began))

        def clock() -> float:
            return time.monotonic() - began[0] if gate.is_set() else 0.0

        def timer(interval: float, function: Callable[[], None]) -> GatedTimer:
            return GatedTimer(gate, interval, function)

        return RunDeadline(limit, timer=timer, clock=clock)

    def progress(self, message: str) -> None:
        if message.endswith(": stage"):
            gate, began = self.gates[-1]
            began[0] = time.monotonic()
            gate.set()


def test_a_run_past_its_time_limit_has_its_spark_job_cancelled_and_publishes_nothing(
    lakehouse: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml = write(tmp_path / "project" / "pairs.yaml", PAIRS_YAML.format(s="_tl"))
    incoming = yaml.parent / "feed" / "incoming"
    write(incoming / "d1.csv", slow_rows())
    lakehouse.apply(yaml)
    lh, dataset = limited(lakehouse, 2), "bronze_pairs_tl"
    clock = FromStage()
    monkeypatch.setattr(job, "RunDeadline", clock.deadline)

    result = lh.run(dataset, progress=clock.progress)

    assert clock.gates[0][0].is_set()  # the slow rule's job had begun
    assert result.status == JobStatus.FAILED
    assert result.error is not None and result.error.startswith(REASON.format(2))
    assert result.exit_code == TimeLimitExceeded.exit_code
    [step] = result.steps
    assert step.status == AttemptStatus.FAILED and isinstance(step.error, TimeLimitExceeded)
    # the staging job itself was cancelled, by this run's tag
    assert f"cancelled part of cancelled job tags laketx-run-{result.run_id}" in causes(step.error)
    reader = StoreReader(lh.store)
    [attempt] = reader.runs.attempts(result.run_id)
    assert attempt.status == AttemptStatus.FAILED
    assert attempt.error_message is not None
    assert attempt.error_message.startswith(REASON.format(2))
    stage = next(s for s in reader.runs.steps(result.run_id) if s.step_name == f"{dataset}.stage")
    assert stage.status == "FAILED" and stage.error_message == attempt.error_message
    assert lh.gate.latest(dataset) is None  # no version
    assert reader.decisions.latest_decision(dataset) is None  # the gate never decided
    assert reader.runs.in_flight() == []  # no run left RUNNING
    assert reader.runs.lease(dataset) is None
    assert lh.spark.sparkContext.statusTracker().getActiveJobsIds() == []
    assert_sound(lh, dataset)

    # its leases are free and its timer is gone: the next run on this thread takes the
    # dataset and promotes a small delivery
    (incoming / "d1.csv").unlink()
    write(incoming / "d2.csv", "k,a,b\n1,ab,ba\n2,aa,bb\n")
    again = lh.run(dataset)
    assert again.status == JobStatus.COMPLETED, again.error
    approved = lh.gate.latest(dataset)
    assert approved is not None and approved.version == 1
    assert_sound(lh, dataset)


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Moves the clock of the runs' deadlines forward (their timers keep real time)."""
    ahead = [0.0]
    monkeypatch.setattr(
        job,
        "RunDeadline",
        functools.partial(RunDeadline, clock=lambda: time.monotonic() + ahead[0]),
    )
    return lambda seconds: ahead.__setitem__(0, ahead[0] + seconds)


def test_work_that_is_no_spark_job_cannot_run_on_past_the_limit(
    lakehouse: Any,
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    later: Callable[[float], None],
) -> None:
    """A phase that outlives the limit without Spark (a delta-rs merge, an HTTP fetch): the
    run stops at the next phase, the tasks after it skipped."""
    lakehouse.apply(project.yaml)
    project.deliver("d1.csv", ["GSM,1,10.5,100", "LTE,2,20.5,100"])
    lh = limited(lakehouse, 600)
    real = dataset_step.drift.batch_drift

    def slow_drift(*args: Any, **kwargs: Any) -> Any:
        later(601)  # between reading and staging, no Spark job running
        return real(*args, **kwargs)

    monkeypatch.setattr(dataset_step.drift, "batch_drift", slow_drift)

    result = lh.run(project.job)

    assert result.status == JobStatus.FAILED
    assert result.error is not None and result.error.startswith(REASON.format(600))
    assert [s.dataset_id for s in result.steps] == [project.bronze]
    assert result.skipped == [project.silver]
    reader = StoreReader(lh.store)
    steps = {s.step_name: s for s in reader.runs.steps(result.run_id)}
    assert steps[f"{project.bronze}.read"].status == "COMPLETED"
    stage = steps[f"{project.bronze}.stage"]
    assert stage.status == "FAILED" and stage.error_message is not None
    assert stage.error_message.startswith(REASON.format(600))
    assert lh.gate.latest(project.bronze) is None
    assert reader.runs.in_flight() == [] and reader.runs.lease(project.bronze) is None
    assert_sound(lh, project.bronze, project.silver)


def test_a_decided_batch_is_carried_out_whole_and_the_job_stops_after_it(
    lakehouse: Any,
    project: Project,
    monkeypatch: pytest.MonkeyPatch,
    later: Callable[[float], None],
) -> None:
    """The limit passes while bronze is being published: its commit, its version and its
    archive are one step; the run stops before silver and says what it promoted."""
    lakehouse.apply(project.yaml)
    project.deliver("d1.csv", ["GSM,1,10.5,100", "LTE,2,20.5,100"])
    lh = limited(lakehouse, 600)
    real = promotion.publish

    def slow_publish(*args: Any, **kwargs: Any) -> Any:
        later(601)
        return real(*args, **kwargs)

    monkeypatch.setattr(promotion, "publish", slow_publish)

    result = lh.run(project.job)

    assert result.status == JobStatus.FAILED
    [bronze] = result.steps
    assert (bronze.dataset_id, bronze.status, bronze.data_version) == (
        project.bronze,
        AttemptStatus.SUCCESS,
        1,
    )
    assert result.skipped == [project.silver]
    assert result.error is not None and result.error.startswith(
        REASON.format(600) + f" but {project.bronze} v1, promoted before the limit"
    )
    assert result.exit_code == TimeLimitExceeded.exit_code
    approved = lh.gate.latest(project.bronze)
    assert approved is not None and approved.version == 1
    assert StoreReader(lh.store).runs.in_flight() == []
    assert_sound(lh, project.bronze, project.silver)


def test_a_runs_spark_jobs_run_in_its_tenants_fair_pool_on_the_thread_it_runs_on(
    lakehouse: Any, project: Project
) -> None:
    tenant = f"pool-{random.randrange(10**9)}"  # a pool no job of this process used yet
    lh = Lakehouse.open(lakehouse.config.for_tenant(tenant))
    # a tenant's relative roots start at its home, the folder its reach allows by default
    doc = write(lh.config.tenant_home / "cells.yaml", cells_yaml(project.suffix))
    project = Project(doc, project.suffix)
    lh.apply(project.yaml)
    project.deliver("d1.csv", ["GSM,1,10.5,100", "LTE,2,20.5,100"])
    context = lh.spark.sparkContext
    scheduler = context._jsc.sc()
    assert context.getConf().get("spark.scheduler.mode") == "FAIR"
    assert not scheduler.getPoolForName(tenant).isDefined()
    seen: list[tuple[str | None, set[str]]] = []

    class Pools:
        """What the run's thread carries while its attempts run."""

        def started(self, dataset: DatasetDef, attempt_id: str, job_run_id: str) -> None:
            seen.append((context.getLocalProperty(SCHEDULER_POOL), set(context.getJobTags())))

        def ended(self, dataset: DatasetDef, result: StepResult, job_run_id: str) -> None:
            return None

    def on_worker() -> tuple[Any, str | None, set[str]]:
        result = lh.run(project.job, observer=Pools())
        return result, context.getLocalProperty(SCHEDULER_POOL), set(context.getJobTags())

    with ThreadPoolExecutor(max_workers=1) as worker:  # as the service runs them
        result, pool_after, tags_after = worker.submit(on_worker).result()

    assert result.status == JobStatus.COMPLETED, result.error
    assert seen == [(tenant, {f"laketx-run-{result.run_id}"})] * 2
    # the FAIR scheduler made the pool when the run's first task set was submitted to it
    assert scheduler.getPoolForName(tenant).isDefined()
    assert (pool_after, tags_after) == (None, set())  # the thread's next run starts clean
    assert_sound(lh, project.bronze, project.silver)
